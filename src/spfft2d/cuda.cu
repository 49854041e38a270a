// CUDA backend. Tiled DIRECT method: direct sparse DFT kernel down the columns, batched cuFFT C2C along
// the rows, fold of the Hermitian half into output rows; host outputs are streamed through double-buffered
// pinned copies on a second stream so the device-to-host traffic of one tile overlaps the compute of the
// next. Whole-spectrum methods in the output layout itself: DIRECT_ROWS = row sums then an in-place strided
// cuFFT C2C down the columns; DENSE = scatter into padded real rows then cuFFT's in-place 2-D R2C.
#include <algorithm>
#include <type_traits>

#include "common/checked.hpp"
#include "common/cuda_util.cuh"
#include "spfft2d/plan.hpp"

namespace sfft::spfft2d {
namespace {

using cuda::as_stream;
using cuda::CufftPlan;
using cuda::DeviceBuffer;
using cuda::DeviceScope;
using cuda::Event;
using cuda::PinnedBuffer;

template <class Real>
using Cplx = std::conditional_t<std::is_same_v<Real, float>, float2, double2>;
template <class Real>
using CufftCplx = std::conditional_t<std::is_same_v<Real, float>, cufftComplex, cufftDoubleComplex>;

template <class C>
__device__ __forceinline__ C cmul(C a, C b) {
  return {a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x};
}

template <class Real>
struct DeviceTwiddles {
  const Cplx<Real> *lo;
  const Cplx<Real> *hi;  // nullptr: lo is the single table
  __device__ __forceinline__ Cplx<Real> operator()(uint64_t m) const {
    if (hi == nullptr) return __ldg(lo + m);
    constexpr unsigned bits = TwiddleTables<Real>::kSplitBits;
    return cmul(__ldg(hi + (m >> bits)), __ldg(lo + (m & ((1u << bits) - 1))));
  }
};

// Output rows per thread: phases advance by integer addition inside a block of U rows, so the costly
// 64-bit modulo runs once per nonzero per U rows.
template <class Real>
constexpr int kRowsPerThread = std::is_same_v<Real, float> ? 8 : 4;

// z[t][col_id[j]] = sum_e w_e * e^{-2 pi i row_e (s0 + t) / R}, one thread per (nonempty column, U rows).
template <class Real, bool kWeighted>
__global__ void direct_tile(const int32_t *__restrict__ col_id, const int64_t *__restrict__ col_start, int64_t ncols,
                            const int32_t *__restrict__ row, const Real *__restrict__ weight, DeviceTwiddles<Real> tw,
                            uint64_t R, uint64_t s0, uint64_t tile, Cplx<Real> *__restrict__ z, uint64_t C) {
  constexpr int U = kRowsPerThread<Real>;
  const int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= ncols) return;
  const int64_t e0 = col_start[j], e1 = col_start[j + 1];
  const uint64_t c = static_cast<uint64_t>(col_id[j]);
  for (uint64_t t0 = static_cast<uint64_t>(blockIdx.y) * U; t0 < tile; t0 += static_cast<uint64_t>(gridDim.y) * U) {
    Cplx<Real> acc[U];
#pragma unroll
    for (int i = 0; i < U; ++i) acc[i] = {Real(0), Real(0)};
    for (int64_t e = e0; e < e1; ++e) {
      const uint64_t r = static_cast<uint64_t>(row[e]);
      uint64_t phase = r * (s0 + t0) % R;
      const Real w = kWeighted ? weight[e] : Real(1);
#pragma unroll
      for (int i = 0; i < U; ++i) {
        const Cplx<Real> t = tw(phase);
        acc[i].x += w * t.x;
        acc[i].y += w * t.y;
        phase += r;
        phase -= phase >= R ? R : 0;
      }
    }
#pragma unroll
    for (int i = 0; i < U; ++i)
      if (t0 + i < tile) z[(t0 + i) * C + c] = acc[i];
  }
}

// out[i][v] = Y[first + i][v] for v < W from the tile's full-length rows: direct rows copy, mirrored
// rows u take conj(z[R - u - s0][(C - v) mod C]).
template <class Real>
__global__ void fold_rows(const Cplx<Real> *__restrict__ z, uint64_t C, uint64_t W, uint64_t R, uint64_t s0,
                          uint64_t first, uint64_t count, bool mirrored, Cplx<Real> *__restrict__ out) {
  const uint64_t v = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (v >= W) return;
  for (uint64_t i = blockIdx.y; i < count; i += gridDim.y) {
    const uint64_t u = first + i;
    Cplx<Real> y;
    if (!mirrored) {
      y = z[(u - s0) * C + v];
    } else {
      y = z[(R - u - s0) * C + (v == 0 ? 0 : C - v)];
      y.y = -y.y;
    }
    out[i * W + v] = y;
  }
}

// b[r][v] = sum_e w_e e^{-2 pi i col_e v / C} for v < W, one block per nonempty row r = row_id[j];
// thread t of a block computes v = v0 + t + i * blockDim.x, i < U, so the writes of each i are coalesced.
template <class Real, bool kWeighted>
__global__ void row_sums(const int32_t *__restrict__ row_id, const int64_t *__restrict__ row_start,
                         const int32_t *__restrict__ col, const Real *__restrict__ weight, DeviceTwiddles<Real> tw,
                         uint64_t C, uint64_t W, Cplx<Real> *__restrict__ b) {
  constexpr int U = kRowsPerThread<Real>;
  const uint64_t j = blockIdx.x, r = static_cast<uint64_t>(row_id[j]);
  const int64_t e0 = row_start[j], e1 = row_start[j + 1];
  const uint64_t chunk = static_cast<uint64_t>(blockDim.x) * U;
  for (uint64_t v0 = static_cast<uint64_t>(blockIdx.y) * chunk + threadIdx.x; v0 < W;
       v0 += static_cast<uint64_t>(gridDim.y) * chunk) {
    Cplx<Real> acc[U];
#pragma unroll
    for (int i = 0; i < U; ++i) acc[i] = {Real(0), Real(0)};
    for (int64_t e = e0; e < e1; ++e) {
      const uint64_t c = static_cast<uint64_t>(col[e]);
      uint64_t phase = c * v0 % C;
      const uint64_t step = c * blockDim.x % C;
      const Real w = kWeighted ? weight[e] : Real(1);
#pragma unroll
      for (int i = 0; i < U; ++i) {
        const Cplx<Real> t = tw(phase);
        acc[i].x += w * t.x;
        acc[i].y += w * t.y;
        phase += step;
        phase -= phase >= C ? C : 0;
      }
    }
#pragma unroll
    for (int i = 0; i < U; ++i) {
      const uint64_t v = v0 + static_cast<uint64_t>(i) * blockDim.x;
      if (v < W) b[r * W + v] = acc[i];
    }
  }
}

// Real rows padded to 2W (the in-place R2C layout): real_rows[row][col] = w for every nonzero.
template <class Real, bool kWeighted>
__global__ void scatter_rows(const int32_t *__restrict__ col_id, const int64_t *__restrict__ col_start, int64_t ncols,
                             const int32_t *__restrict__ row, const Real *__restrict__ weight, uint64_t padded,
                             Real *__restrict__ real_rows) {
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < ncols;
       j += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const uint64_t c = static_cast<uint64_t>(col_id[j]);
    for (int64_t e = col_start[j]; e < col_start[j + 1]; ++e)
      real_rows[static_cast<uint64_t>(row[e]) * padded + c] = kWeighted ? weight[e] : Real(1);
  }
}

class Stream {
 public:
  Stream() { SFFT_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  ~Stream() {
    if (s_ != nullptr) (void)cudaStreamDestroy(s_);
  }
  Stream(const Stream &) = delete;
  Stream &operator=(const Stream &) = delete;
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

template <class T>
DeviceBuffer<T> upload(const T *host, std::size_t n) {
  DeviceBuffer<T> d(n);
  if (n > 0) SFFT_CUDA_CHECK(cudaMemcpy(d.get(), host, n * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

template <class Real>
class CudaEngine final : public Engine {
 public:
  using C = Cplx<Real>;

  CudaEngine(std::shared_ptr<const SparseColumns> m, const Options &opts)
      : m_(std::move(m)), device_(opts.device), stream_(as_stream(opts.stream)), layout_(m_->rows, m_->cols) {
    DeviceScope scope(device_);
    col_id_ = upload(m_->col_id.data(), m_->col_id.size());
    col_start_ = upload(m_->col_start.data(), m_->col_start.size());
    row_ = upload(m_->row.data(), m_->row.size());
    if (!m_->binary()) {
      std::vector<Real> w(m_->weight.begin(), m_->weight.end());
      weight_ = upload(w.data(), w.size());
    }
    row_id_ = upload(m_->row_id.data(), m_->row_id.size());
    row_start_ = upload(m_->row_start.data(), m_->row_start.size());
    row_col_ = upload(m_->row_col.data(), m_->row_col.size());
    if (!m_->binary()) {
      std::vector<Real> w(m_->row_weight.begin(), m_->row_weight.end());
      row_weight_ = upload(w.data(), w.size());
    }
    auto tw = make_twiddles<Real>(m_->rows);
    tw_lo_ = upload(reinterpret_cast<const C *>(tw.lo.data()), tw.lo.size());
    tw_hi_ = upload(reinterpret_cast<const C *>(tw.hi.data()), tw.hi.size());
    auto tw_cols = make_twiddles<Real>(m_->cols);
    tw_cols_lo_ = upload(reinterpret_cast<const C *>(tw_cols.lo.data()), tw_cols.lo.size());
    tw_cols_hi_ = upload(reinterpret_cast<const C *>(tw_cols.hi.data()), tw_cols.hi.size());
    copy_stream_ = std::make_unique<Stream>();
    for (int i = 0; i < 2; ++i) {
      folded_[i] = std::make_unique<Event>();
      copied_[i] = std::make_unique<Event>();
    }
    configure(0, SPFFT2D_METHOD_AUTO);
  }

  ~CudaEngine() override {
    // Pending asynchronous work may still read the workspace.
    if (stream_ready_) (void)cudaStreamSynchronize(stream_);
    if (copy_stream_) (void)cudaStreamSynchronize(copy_stream_->get());
  }

  void set_tile_rows(uint64_t tile) override { reconfigure(tile, method_); }
  void set_method(spfft2d_method method) override { reconfigure(requested_tile_, method); }
  spfft2d_method whole_method() const override { return method_ == SPFFT2D_METHOD_AUTO ? whole_auto_ : method_; }

  void reconfigure(uint64_t tile, spfft2d_method method) {
    const uint64_t previous_tile = requested_tile_;
    const spfft2d_method previous_method = method_;
    try {
      configure(tile, method);
    } catch (...) {
      // Keep the plan usable: restore the previous workspace if the new one cannot be had.
      try {
        configure(previous_tile, previous_method);
      } catch (...) {
      }
      throw;
    }
  }

  void configure(uint64_t tile, spfft2d_method method) {
    DeviceScope scope(device_);
    SFFT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    const std::size_t cb = sizeof(C), budget = auto_budget(layout_, cb);
    const std::size_t row_bytes = (layout_.cols + 4 * layout_.width) * cb;
    Layout next = layout_;
    next.tile = tile == 0 ? auto_tile(layout_, row_bytes, budget) : std::min(tile, layout_.half + 1);
    // Release the old workspace first: the new one must fit beside nothing else of this plan.
    release_workspace();
    CufftPlan fft;
    for (int attempt = 0;; ++attempt) {
      long long n = static_cast<long long>(layout_.cols);
      fft.make_many(1, &n, nullptr, 1, n, nullptr, 1, n, std::is_same_v<Real, float> ? CUFFT_C2C : CUFFT_Z2Z,
                    static_cast<long long>(next.tile));
      std::size_t work = 0;
      SFFT_CUFFT_CHECK(cufftGetSize(fft.get(), &work));
      const std::size_t total = next.tile * row_bytes + work;
      // cuFFT's work area (Bluestein lengths need several times the data) counts against the budget.
      if (tile != 0 || total <= budget + budget / 2 || next.tile == 1 || attempt == 3) {
        fft_work_ = work;
        break;
      }
      next.tile = std::max<uint64_t>(1, static_cast<uint64_t>(static_cast<long double>(next.tile) * budget / total));
    }
    fft.set_stream(stream_);
    DeviceBuffer<C> z(checked_mul(next.tile, layout_.cols, "tile size"));
    const std::size_t slot = checked_mul(2 * next.tile, layout_.width, "staging size");
    for (int s = 0; s < 2; ++s) {
      staging_[s].allocate(slot);
      pinned_[s].allocate(slot);
    }
    spfft2d_method whole_auto = estimate_costs(*m_, next, CostBackend::Cuda, cb).cheapest();
    if (is_whole_method(method)) {
      workspace_.allocate(checked_mul(layout_.rows, layout_.width, "workspace size"));
      plan_whole(method);
    } else if (method == SPFFT2D_METHOD_AUTO && is_whole_method(whole_auto)) {
      whole_auto = plan_auto_whole(whole_auto);
    }
    z_ = std::move(z);
    fft_ = std::move(fft);
    layout_ = next;
    requested_tile_ = tile;
    method_ = method;
    whole_auto_ = whole_auto;
    stream_ready_ = true;
  }

  // In-place cuFFT plans of a whole-spectrum method on a rows x width buffer: DENSE is cuFFT's own 2-D R2C
  // on the padded rows (a 1-row or 1-column matrix: R2C along the rows, then the column pass);
  // DIRECT_ROWS a strided C2C down the columns (advanced layout: non-NULL embeds so cuFFT honours the
  // stride).
  void plan_whole(spfft2d_method method) {
    long long R = static_cast<long long>(layout_.rows), Cn = static_cast<long long>(layout_.cols);
    long long W = static_cast<long long>(layout_.width);
    const cufftType r2c = std::is_same_v<Real, float> ? CUFFT_R2C : CUFFT_D2Z;
    const bool two_d = method == SPFFT2D_METHOD_DENSE && R >= 2 && Cn >= 2;
    if (method == SPFFT2D_METHOD_DENSE) {
      long long n[2] = {R, Cn}, in_embed[2] = {R, 2 * W}, out_embed[2] = {R, W};
      if (two_d)
        dense_r2c_.make_many(2, n, in_embed, 1, R * 2 * W, out_embed, 1, R * W, r2c, 1);
      else
        dense_r2c_.make_many(1, &Cn, &in_embed[1], 1, 2 * W, &out_embed[1], 1, W, r2c, R);
      dense_r2c_.set_stream(stream_);
      whole_work_ += work_size(dense_r2c_);
    }
    if (!two_d) {
      down_columns_.make_many(1, &R, &R, W, 1, &R, W, 1, std::is_same_v<Real, float> ? CUFFT_C2C : CUFFT_Z2Z, W);
      down_columns_.set_stream(stream_);
      whole_work_ += work_size(down_columns_);
    }
  }

  // AUTO takes a whole-spectrum method only where the spectrum fits in half the free device memory and
  // cuFFT can plan it (its 2-D plans refuse some huge shapes); otherwise the tiled DIRECT method.
  spfft2d_method plan_auto_whole(spfft2d_method whole) {
    std::size_t free = 0, total = 0;
    SFFT_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    const long double spectrum = static_cast<long double>(layout_.rows) * layout_.width * sizeof(C);
    if (spectrum > free / 2) return SPFFT2D_METHOD_DIRECT;
    try {
      plan_whole(whole);
      return whole;
    } catch (const Error &) {
      dense_r2c_.reset();
      down_columns_.reset();
      whole_work_ = 0;
      return SPFFT2D_METHOD_DIRECT;
    }
  }

  static std::size_t work_size(const CufftPlan &plan) {
    std::size_t work = 0;
    SFFT_CUFFT_CHECK(cufftGetSize(plan.get(), &work));
    return work;
  }

  uint64_t tile_rows() const override { return layout_.tile; }
  std::size_t workspace_bytes() const override {
    return z_.bytes() + staging_[0].size() * sizeof(C) * 2 + fft_work_ + col_id_.bytes() + col_start_.bytes() +
           row_.bytes() + weight_.bytes() + tw_lo_.bytes() + tw_hi_.bytes() + row_id_.bytes() + row_start_.bytes() +
           row_col_.bytes() + row_weight_.bytes() + tw_cols_lo_.bytes() + tw_cols_hi_.bytes() + workspace_.bytes() +
           whole_work_;
  }

  void run(uint64_t lo, uint64_t hi, const Sink &sink, bool out_on_device) override {
    require(static_cast<bool>(fft_), "the plan has no workspace (a previous spfft2d_set_tile_rows failed)");
    DeviceScope scope(device_);
    const bool whole_native = out_on_device && sink.callback == nullptr && lo == 0 && hi == layout_.rows;
    const spfft2d_method method = method_of_call(method_, whole_auto_, whole_native);
    if (is_whole_method(method)) {
      C *b = whole_native ? static_cast<C *>(sink.out) : workspace_.get();
      compute_whole(method, b);
      if (!whole_native) deliver_whole(b, lo, hi, sink, out_on_device);
      return;
    }
    if (out_on_device && sink.callback == nullptr) {
      C *out = static_cast<C *>(sink.out);
      layout_.for_each_tile(lo, hi, [&](uint64_t k) {
        compute_tile(k);
        fold(layout_.direct_block(k, lo, hi), k, false, out, sink.row0);
        fold(layout_.mirror_block(k, lo, hi), k, true, out, sink.row0);
      });
      return;
    }
    try {
      stream_to_host(lo, hi, sink);
    } catch (...) {
      // Leave no copy in flight into the pinned buffers; the plan stays usable.
      (void)cudaStreamSynchronize(stream_);
      (void)cudaStreamSynchronize(copy_stream_->get());
      (void)cudaGetLastError();
      throw;
    }
  }

 private:
  struct Pending {
    bool valid = false;
    Layout::Block direct, mirror;
  };

  void compute_tile(uint64_t k) {
    const uint64_t s0 = k * layout_.tile;
    if (m_->has_empty_columns()) SFFT_CUDA_CHECK(cudaMemsetAsync(z_.get(), 0, z_.bytes(), stream_));
    const int64_t ncols = static_cast<int64_t>(m_->col_id.size());
    if (ncols > 0) {
      constexpr unsigned block = 128;
      const uint64_t groups = (layout_.tile + kRowsPerThread<Real> - 1) / kRowsPerThread<Real>;
      dim3 grid(static_cast<unsigned>((ncols + block - 1) / block), static_cast<unsigned>(std::min<uint64_t>(groups, 65535)));
      DeviceTwiddles<Real> tw{tw_lo_.get(), tw_hi_.size() ? tw_hi_.get() : nullptr};
      if (m_->binary())
        direct_tile<Real, false><<<grid, block, 0, stream_>>>(col_id_.get(), col_start_.get(), ncols, row_.get(),
                                                              nullptr, tw, layout_.rows, s0, layout_.tile, z_.get(),
                                                              layout_.cols);
      else
        direct_tile<Real, true><<<grid, block, 0, stream_>>>(col_id_.get(), col_start_.get(), ncols, row_.get(),
                                                             weight_.get(), tw, layout_.rows, s0, layout_.tile,
                                                             z_.get(), layout_.cols);
      SFFT_CUDA_CHECK_LAUNCH();
    }
    auto *z = reinterpret_cast<CufftCplx<Real> *>(z_.get());
    exec_c2c(fft_, z, z, CUFFT_FORWARD);
  }

  // The half spectrum into b (rows x width, device) by a whole-spectrum method, on the plan's stream.
  void compute_whole(spfft2d_method method, C *b) {
    const uint64_t R = layout_.rows, W = layout_.width;
    if (method == SPFFT2D_METHOD_DIRECT_ROWS) {
      if (m_->has_empty_rows()) SFFT_CUDA_CHECK(cudaMemsetAsync(b, 0, R * W * sizeof(C), stream_));
      const auto nrows = static_cast<unsigned>(m_->row_id.size());
      if (nrows > 0) {
        constexpr unsigned block = 128;
        const uint64_t chunks = (W + block * kRowsPerThread<Real> - 1) / (block * kRowsPerThread<Real>);
        dim3 grid(nrows, static_cast<unsigned>(std::min<uint64_t>(chunks, 65535)));
        DeviceTwiddles<Real> tw{tw_cols_lo_.get(), tw_cols_hi_.size() ? tw_cols_hi_.get() : nullptr};
        if (m_->binary())
          row_sums<Real, false><<<grid, block, 0, stream_>>>(row_id_.get(), row_start_.get(), row_col_.get(), nullptr,
                                                             tw, layout_.cols, W, b);
        else
          row_sums<Real, true><<<grid, block, 0, stream_>>>(row_id_.get(), row_start_.get(), row_col_.get(),
                                                            row_weight_.get(), tw, layout_.cols, W, b);
        SFFT_CUDA_CHECK_LAUNCH();
      }
    } else {
      auto *real_rows = reinterpret_cast<Real *>(b);
      SFFT_CUDA_CHECK(cudaMemsetAsync(b, 0, R * W * sizeof(C), stream_));
      const int64_t ncols = static_cast<int64_t>(m_->col_id.size());
      if (ncols > 0) {
        constexpr unsigned block = 256;
        const unsigned grid = cuda::grid_for(static_cast<std::size_t>(ncols), block);
        if (m_->binary())
          scatter_rows<Real, false><<<grid, block, 0, stream_>>>(col_id_.get(), col_start_.get(), ncols, row_.get(),
                                                                 nullptr, 2 * W, real_rows);
        else
          scatter_rows<Real, true><<<grid, block, 0, stream_>>>(col_id_.get(), col_start_.get(), ncols, row_.get(),
                                                                weight_.get(), 2 * W, real_rows);
        SFFT_CUDA_CHECK_LAUNCH();
      }
      if constexpr (std::is_same_v<Real, float>)
        SFFT_CUFFT_CHECK(cufftExecR2C(dense_r2c_.get(), real_rows, reinterpret_cast<cufftComplex *>(b)));
      else
        SFFT_CUFFT_CHECK(cufftExecD2Z(dense_r2c_.get(), real_rows, reinterpret_cast<cufftDoubleComplex *>(b)));
    }
    auto *y = reinterpret_cast<CufftCplx<Real> *>(b);
    if (down_columns_) exec_c2c(down_columns_, y, y, CUFFT_FORWARD);
  }

  // Rows [lo, hi) of a whole spectrum in the workspace to the sink: device arrays asynchronously on the
  // plan's stream, host arrays and callbacks synchronously (callbacks through the pinned buffers).
  void deliver_whole(const C *b, uint64_t lo, uint64_t hi, const Sink &sink, bool out_on_device) {
    const uint64_t W = layout_.width;
    if (sink.callback == nullptr) {
      SFFT_CUDA_CHECK(cudaMemcpyAsync(sink.out, b + lo * W, (hi - lo) * W * sizeof(C),
                                      out_on_device ? cudaMemcpyDeviceToDevice : cudaMemcpyDeviceToHost, stream_));
      if (!out_on_device) SFFT_CUDA_CHECK(cudaStreamSynchronize(stream_));
      return;
    }
    const uint64_t chunk = std::max<uint64_t>(1, pinned_[0].size() / W);
    for (uint64_t r = lo; r < hi; r += chunk) {
      const uint64_t n = std::min(chunk, hi - r);
      SFFT_CUDA_CHECK(cudaMemcpyAsync(pinned_[0].get(), b + r * W, n * W * sizeof(C), cudaMemcpyDeviceToHost, stream_));
      SFFT_CUDA_CHECK(cudaStreamSynchronize(stream_));
      sink.callback(r, n, pinned_[0].get(), sink.user);
    }
  }

  // Writes output rows blk into `base`, whose first row is output row base_row.
  void fold(Layout::Block blk, uint64_t k, bool mirrored, C *base, uint64_t base_row) {
    if (blk.count == 0) return;
    C *out = base + (blk.first - base_row) * layout_.width;
    constexpr unsigned block = 256;
    dim3 grid(static_cast<unsigned>((layout_.width + block - 1) / block),
              static_cast<unsigned>(std::min<uint64_t>(blk.count, 65535)));
    fold_rows<Real><<<grid, block, 0, stream_>>>(z_.get(), layout_.cols, layout_.width, layout_.rows,
                                                 k * layout_.tile, blk.first, blk.count, mirrored, out);
    SFFT_CUDA_CHECK_LAUNCH();
  }

  void stream_to_host(uint64_t lo, uint64_t hi, const Sink &sink) {
    Pending pending[2];
    int slot = 0;
    const uint64_t W = layout_.width;
    layout_.for_each_tile(lo, hi, [&](uint64_t k) {
      compute_tile(k);
      Pending p{true, layout_.direct_block(k, lo, hi), layout_.mirror_block(k, lo, hi)};
      // staging_[slot] is free once the copy of two tiles ago has left it.
      SFFT_CUDA_CHECK(cudaStreamWaitEvent(stream_, copied_[slot]->get(), 0));
      fold(p.direct, k, false, staging_[slot].get(), p.direct.first);
      fold(p.mirror, k, true, staging_[slot].get() + p.direct.count * W, p.mirror.first);
      SFFT_CUDA_CHECK(cudaEventRecord(folded_[slot]->get(), stream_));
      // pinned_[slot] is free once the host has delivered the tile of two iterations ago.
      if (pending[slot].valid) deliver(pending[slot], slot, sink);
      SFFT_CUDA_CHECK(cudaStreamWaitEvent(copy_stream_->get(), folded_[slot]->get(), 0));
      SFFT_CUDA_CHECK(cudaMemcpyAsync(pinned_[slot].get(), staging_[slot].get(),
                                      (p.direct.count + p.mirror.count) * W * sizeof(C), cudaMemcpyDeviceToHost,
                                      copy_stream_->get()));
      SFFT_CUDA_CHECK(cudaEventRecord(copied_[slot]->get(), copy_stream_->get()));
      pending[slot] = p;
      slot ^= 1;
    });
    for (int i = 0; i < 2; ++i, slot ^= 1)
      if (pending[slot].valid) deliver(pending[slot], slot, sink);
  }

  // Waits for the copy into pinned_[slot] and hands its blocks to the sink.
  void deliver(Pending &p, int slot, const Sink &sink) {
    SFFT_CUDA_CHECK(cudaEventSynchronize(copied_[slot]->get()));
    p.valid = false;
    const uint64_t W = layout_.width;
    const C *src = pinned_[slot].get();
    const Layout::Block blocks[2] = {p.direct, p.mirror};
    for (const Layout::Block &blk : blocks) {
      if (blk.count == 0) continue;
      if (sink.callback)
        sink.callback(blk.first, blk.count, src, sink.user);
      else
        std::copy(src, src + blk.count * W, static_cast<C *>(sink.out) + (blk.first - sink.row0) * W);
      src += blk.count * W;
    }
  }

  void release_workspace() {
    fft_.reset();
    z_.release();
    for (int s = 0; s < 2; ++s) {
      staging_[s].release();
      pinned_[s].release();
    }
    fft_work_ = 0;
    dense_r2c_.reset();
    down_columns_.reset();
    workspace_.release();
    whole_work_ = 0;
  }

  std::shared_ptr<const SparseColumns> m_;
  int device_;
  cudaStream_t stream_;
  bool stream_ready_ = false;
  Layout layout_;
  DeviceBuffer<int32_t> col_id_;
  DeviceBuffer<int64_t> col_start_;
  DeviceBuffer<int32_t> row_;
  DeviceBuffer<Real> weight_;
  DeviceBuffer<int32_t> row_id_;
  DeviceBuffer<int64_t> row_start_;
  DeviceBuffer<int32_t> row_col_;
  DeviceBuffer<Real> row_weight_;
  DeviceBuffer<C> tw_lo_, tw_hi_, tw_cols_lo_, tw_cols_hi_;
  std::unique_ptr<Stream> copy_stream_;
  std::unique_ptr<Event> folded_[2], copied_[2];
  CufftPlan fft_;
  std::size_t fft_work_ = 0;
  DeviceBuffer<C> z_;
  DeviceBuffer<C> staging_[2];
  PinnedBuffer<C> pinned_[2];
  uint64_t requested_tile_ = 0;  // 0: automatic
  spfft2d_method method_ = SPFFT2D_METHOD_AUTO;
  spfft2d_method whole_auto_ = SPFFT2D_METHOD_DIRECT;
  CufftPlan dense_r2c_, down_columns_;
  std::size_t whole_work_ = 0;
  DeviceBuffer<C> workspace_;  // rows x width, explicit whole-spectrum methods only
};

}  // namespace

template <class Real>
std::unique_ptr<Engine> make_cuda_engine(std::shared_ptr<const SparseColumns> matrix, const Options &opts) {
  return std::make_unique<CudaEngine<Real>>(std::move(matrix), opts);
}
template std::unique_ptr<Engine> make_cuda_engine<float>(std::shared_ptr<const SparseColumns>, const Options &);
template std::unique_ptr<Engine> make_cuda_engine<double>(std::shared_ptr<const SparseColumns>, const Options &);

void copy_to_host(void *dst, const void *src, std::size_t bytes) {
  if (bytes > 0) SFFT_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault));
}

}  // namespace sfft::spfft2d
