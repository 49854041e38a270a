// CUDA backend: direct sparse DFT kernel along the rows, batched cuFFT C2C along the columns, fold of the
// Hermitian half into output rows; host outputs are streamed through double-buffered pinned copies on a
// second stream so the device-to-host traffic of one tile overlaps the compute of the next.
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
    auto tw = make_twiddles<Real>(m_->rows);
    tw_lo_ = upload(reinterpret_cast<const C *>(tw.lo.data()), tw.lo.size());
    tw_hi_ = upload(reinterpret_cast<const C *>(tw.hi.data()), tw.hi.size());
    copy_stream_ = std::make_unique<Stream>();
    for (int i = 0; i < 2; ++i) {
      folded_[i] = std::make_unique<Event>();
      copied_[i] = std::make_unique<Event>();
    }
    plan_workspace(0);
  }

  ~CudaEngine() override {
    // Pending asynchronous work may still read the workspace.
    if (stream_ready_) (void)cudaStreamSynchronize(stream_);
    if (copy_stream_) (void)cudaStreamSynchronize(copy_stream_->get());
  }

  void set_tile_rows(uint64_t tile) override {
    const uint64_t previous = layout_.tile;
    try {
      plan_workspace(tile);
    } catch (...) {
      // Keep the plan usable: restore the previous workspace if the new one cannot be had.
      try {
        plan_workspace(previous);
      } catch (...) {
      }
      throw;
    }
  }

  void plan_workspace(uint64_t tile) {
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
    z_ = std::move(z);
    fft_ = std::move(fft);
    layout_ = next;
    stream_ready_ = true;
  }

  uint64_t tile_rows() const override { return layout_.tile; }
  std::size_t workspace_bytes() const override {
    return z_.bytes() + staging_[0].size() * sizeof(C) * 2 + fft_work_ + col_id_.bytes() + col_start_.bytes() +
           row_.bytes() + weight_.bytes() + tw_lo_.bytes() + tw_hi_.bytes();
  }

  void run(uint64_t lo, uint64_t hi, const Sink &sink, bool out_on_device) override {
    require(static_cast<bool>(fft_), "the plan has no workspace (a previous spfft2d_set_tile_rows failed)");
    DeviceScope scope(device_);
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
  DeviceBuffer<C> tw_lo_, tw_hi_;
  std::unique_ptr<Stream> copy_stream_;
  std::unique_ptr<Event> folded_[2], copied_[2];
  CufftPlan fft_;
  std::size_t fft_work_ = 0;
  DeviceBuffer<C> z_;
  DeviceBuffer<C> staging_[2];
  PinnedBuffer<C> pinned_[2];
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
