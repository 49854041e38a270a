// SPDX-License-Identifier: Apache-2.0
// CUDA backend. Tiled DIRECT method: direct sparse DFT kernel down the columns, batched cuFFT C2C along
// the rows, fold of the Hermitian half into output rows; host outputs are streamed through double-buffered
// pinned copies on a second stream so the device-to-host traffic of one tile overlaps the compute of the
// next. Rows of an FFT-unfriendly length take the plan's own Bluestein pass at a length L = 2^a 3^b >= 2C-1
// (cuFFT's own transform of 4110 rows of the prime length 8219 took 2.35 ms on the H100, this pass 1.40 ms
// at L = 17496): the column sums are written premultiplied by the chirp into rows of length L, then
// forward FFT, product with the chirp's precomputed spectrum, inverse FFT, and the fold applies the chirp
// again. AUTO computes a whole spectrum in device memory as one DIRECT tile when the cost model prefers
// DIRECT. Whole-spectrum methods in the output layout itself: DIRECT_ROWS = row sums then an in-place
// strided cuFFT C2C down the columns; DENSE = scatter into padded real rows then cuFFT's in-place 2-D R2C.
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

// e^{-2 pi i m / n} from global tables (TwiddleTables): one table, or hi[m >> kSplitBits] * lo[low bits].
template <class Real>
struct DeviceTwiddles {
  const Cplx<Real> *lo;
  const Cplx<Real> *hi;  // nullptr: lo is the single table
  __device__ __forceinline__ void load(Cplx<Real> *) {}
  __device__ __forceinline__ Cplx<Real> operator()(uint64_t m) const {
    if (hi == nullptr) return __ldg(lo + m);
    constexpr unsigned bits = TwiddleTables<Real>::kSplitBits;
    return cmul(__ldg(hi + (m >> bits)), __ldg(lo + (m & ((1u << bits) - 1))));
  }
};

// e^{-2 pi i m / n} = hi[m >> bits] * lo[m & (2^bits - 1)] from two tables of about sqrt(n) entries that
// every block copies into shared memory (load, before any thread leaves): the column sums' random lookups
// from a global table were their bottleneck (scattered cached loads), shared memory serves them far faster.
template <class Real>
struct SharedTwiddles {
  const Cplx<Real> *src;  // the lo_n entries of lo, then the hi_n entries of hi
  uint32_t lo_n, hi_n, bits;
  const Cplx<Real> *lo = nullptr, *hi = nullptr;
  __device__ __forceinline__ void load(Cplx<Real> *smem) {
    for (uint32_t i = threadIdx.x; i < lo_n + hi_n; i += blockDim.x) smem[i] = src[i];
    __syncthreads();
    lo = smem;
    hi = smem + lo_n;
  }
  __device__ __forceinline__ Cplx<Real> operator()(uint64_t m) const { return cmul(hi[m >> bits], lo[m & (lo_n - 1)]); }
};

// x mod n for any 64-bit x and n < 2^31 by Barrett reduction (inv = floor((2^64 - 1) / n)): the quotient
// estimate is low by at most one, so one conditional subtraction finishes it.
struct Modulus {
  uint64_t n, inv;
  explicit Modulus(uint64_t m) : n(m), inv(~uint64_t{0} / m) {}
  __device__ __forceinline__ uint64_t operator()(uint64_t x) const {
    const uint64_t r = x - __umul64hi(x, inv) * n;
    return r >= n ? r - n : r;
  }
};

// Outputs per thread of the row sums (DIRECT_ROWS): phases advance by integer addition inside a block of U
// outputs, so the costly 64-bit modulo runs once per nonzero per U outputs.
template <class Real>
constexpr int kRowsPerThread = std::is_same_v<Real, float> ? 8 : 4;
// The column sums take each nonzero's twiddles for a run of 8 consecutive rows from one exact twiddle at the
// run's anchor (its fifth row) times the powers s^{+-i}, i <= 4, of the nonzero's one-row step s: with
// s^i = c_i - i s_i, anchor * s^i and anchor * s^-i need the same four products, so each of the two rows
// costs two FMAs per component (4 per row and nonzero, where chained complex products cost 6) and every
// twiddle is one product away from the anchor. A thread covers kRuns runs (3 in float, 1 in double:
// registers); the next run's anchor is the last one times the precomputed 8-row step. Per nonzero and group
// of rows a thread thus makes two scattered reads (its entry, one twiddle from shared memory). The sums
// are latency-bound on those reads (Nsight Compute: most stalls wait on L1TEX, occupancy limited by
// registers), so 24 rows per read pay more than the shorter arithmetic: benzene-like case's sums on the H100
// 0.393 ms against 0.494 ms with 16 rows and chained products (0.524 ms: 16 rows with these powers).
constexpr int kRunRows = 8;
template <class Real>
constexpr int kRuns = std::is_same_v<Real, float> ? 3 : 1;
template <class Real>
constexpr int kColumnRows = kRunRows *kRuns<Real>;
// Threads per block of the column sums (the bound lets the compiler budget registers for it).
constexpr unsigned kColumnBlock = 128;

// One nonzero of a column: its row, its weight (1 in binary mode), e^{-2 pi i row / R} and
// e^{-2 pi i kRunRows row / R} (exact, from the integers).
template <class Real>
struct ColumnEntry {
  Cplx<Real> step, run_step;
  int32_t row;
  Real weight;
};

// acc[i] += sum_{e in [e0, e1)} w_e e^{-2 pi i row_e (u0 + i) / R} for i < kColumnRows.
template <class Real, class Twiddles>
__device__ __forceinline__ void column_sums(const ColumnEntry<Real> *__restrict__ entries, int64_t e0, int64_t e1,
                                            const Twiddles &tw, const Modulus &R, uint64_t u0, Cplx<Real> *acc) {
  constexpr int H = kRunRows / 2;
#pragma unroll 2
  for (int64_t e = e0; e < e1; ++e) {
    const ColumnEntry<Real> en = entries[e];
    // cs[i] = cos(i theta), sn[i] = sin(i theta) for the step s = e^{-i theta}.
    Real cs[H + 1], sn[H + 1];
    cs[1] = en.step.x;
    sn[1] = -en.step.y;
    cs[2] = cs[1] * cs[1] - sn[1] * sn[1];
    sn[2] = Real(2) * cs[1] * sn[1];
    cs[3] = cs[2] * cs[1] - sn[2] * sn[1];
    sn[3] = cs[2] * sn[1] + sn[2] * cs[1];
    cs[4] = cs[2] * cs[2] - sn[2] * sn[2];
    sn[4] = Real(2) * cs[2] * sn[2];
    Cplx<Real> anchor = tw(R(static_cast<uint64_t>(en.row) * (u0 + H)));
    anchor.x *= en.weight;
    anchor.y *= en.weight;
#pragma unroll
    for (int j = 0; j < kRuns<Real>; ++j) {
      if (j > 0) anchor = cmul(anchor, en.run_step);
      const int a = j * kRunRows + H;
      acc[a].x += anchor.x;
      acc[a].y += anchor.y;
#pragma unroll
      for (int i = 1; i <= H; ++i) {
        // anchor * s^-i = (x c - y s) + i (y c + x s); anchor * s^i = (x c + y s) + i (y c - x s).
        acc[a - i].x = fma(anchor.x, cs[i], fma(-anchor.y, sn[i], acc[a - i].x));
        acc[a - i].y = fma(anchor.y, cs[i], fma(anchor.x, sn[i], acc[a - i].y));
        if (i < H) {
          acc[a + i].x = fma(anchor.x, cs[i], fma(anchor.y, sn[i], acc[a + i].x));
          acc[a + i].y = fma(anchor.y, cs[i], fma(-anchor.x, sn[i], acc[a + i].y));
        }
      }
    }
  }
}

// z[t][c] = chirp[c] * sum_{e in column c} w_e e^{-2 pi i row_e (s0 + t) / R} for c < C (col_ptr: the C + 1
// offsets of every column into entries; chirp nullptr: 1), and 0 for the Bluestein padding C <= c < stride
// the grid covers (a pass with a pre-zeroed padded buffer launches over C columns only). One thread per
// (column, kColumnRows rows), so the writes of a warp are contiguous.
template <class Real, class Twiddles>
__global__ void __launch_bounds__(kColumnBlock)
    direct_tile(const int64_t *__restrict__ col_ptr, const ColumnEntry<Real> *__restrict__ entries, Twiddles tw,
                Modulus R, uint64_t C, uint64_t stride, const Cplx<Real> *__restrict__ chirp, uint64_t s0,
                uint64_t tile, Cplx<Real> *__restrict__ z) {
  constexpr int U = kColumnRows<Real>;
  extern __shared__ __align__(16) unsigned char shared[];
  tw.load(reinterpret_cast<Cplx<Real> *>(shared));
  const uint64_t c = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= stride) return;
  int64_t e0 = 0, e1 = 0;
  Cplx<Real> ch{Real(1), Real(0)};
  if (c < C) {
    e0 = col_ptr[c];
    e1 = col_ptr[c + 1];
    if (chirp != nullptr) ch = chirp[c];
  }
  for (uint64_t t0 = static_cast<uint64_t>(blockIdx.y) * U; t0 < tile; t0 += static_cast<uint64_t>(gridDim.y) * U) {
    Cplx<Real> acc[U];
#pragma unroll
    for (int i = 0; i < U; ++i) acc[i] = {Real(0), Real(0)};
    column_sums(entries, e0, e1, tw, R, s0 + t0, acc);
#pragma unroll
    for (int i = 0; i < U; ++i)
      if (t0 + i < tile) z[(t0 + i) * stride + c] = cmul(acc[i], ch);
  }
}

// The pointwise passes over a tile (product, fold) give each thread kPassRows rows of one column and issue
// all their loads before any store, so that several reads per thread are in flight (benzene-like case on the
// H100: 2.105-2.117 ms against 2.126-2.131 ms with one row per thread). The product stays a pass of its own:
// as a cuFFT LTO callback (CUDA 13.0) it saved about 0.01 ms, made plan creation take 11-15 s instead of
// 0.17 s, and cuFFT refused to plan it (CUFFT_INTERNAL_ERROR) at L = 4374.
constexpr int kPassRows = 4;

// z[t][k] *= kernel[k] for the count rows of length L of a tile (the Bluestein convolution's product).
template <class Real>
__global__ void multiply_rows(Cplx<Real> *__restrict__ z, const Cplx<Real> *__restrict__ kernel, uint64_t L,
                              uint64_t count) {
  const uint64_t k = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= L) return;
  const Cplx<Real> h = kernel[k];
  for (uint64_t t0 = static_cast<uint64_t>(blockIdx.y) * kPassRows; t0 < count;
       t0 += static_cast<uint64_t>(gridDim.y) * kPassRows) {
    Cplx<Real> x[kPassRows];
#pragma unroll
    for (int i = 0; i < kPassRows; ++i)
      if (t0 + i < count) x[i] = z[(t0 + i) * L + k];
#pragma unroll
    for (int i = 0; i < kPassRows; ++i)
      if (t0 + i < count) z[(t0 + i) * L + k] = cmul(x[i], h);
  }
}

// out[i][v] = Y[first + i][v] for v < W from the tile's transformed rows (length `stride`, times chirp[v]
// when chirp is not nullptr): direct rows copy, mirrored rows u take conj(Z[R - u - s0][(C - v) mod C]).
template <class Real>
__global__ void fold_rows(const Cplx<Real> *__restrict__ z, uint64_t stride, uint64_t C, uint64_t W, uint64_t R,
                          uint64_t s0, uint64_t first, uint64_t count, bool mirrored,
                          const Cplx<Real> *__restrict__ chirp, Cplx<Real> *__restrict__ out) {
  const uint64_t v = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (v >= W) return;
  const uint64_t j = mirrored && v != 0 ? C - v : v;
  const Cplx<Real> ch = chirp != nullptr ? chirp[j] : Cplx<Real>{Real(1), Real(0)};
  for (uint64_t i0 = static_cast<uint64_t>(blockIdx.y) * kPassRows; i0 < count;
       i0 += static_cast<uint64_t>(gridDim.y) * kPassRows) {
    Cplx<Real> x[kPassRows];
#pragma unroll
    for (int i = 0; i < kPassRows; ++i) {
      const uint64_t u = first + i0 + i;
      if (i0 + i < count) x[i] = z[(mirrored ? R - u - s0 : u - s0) * stride + j];
    }
#pragma unroll
    for (int i = 0; i < kPassRows; ++i) {
      if (i0 + i >= count) continue;
      Cplx<Real> y = cmul(x[i], ch);
      if (mirrored) y.y = -y.y;
      out[(i0 + i) * W + v] = y;
    }
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
__global__ void scatter_rows(const int64_t *__restrict__ col_ptr, uint64_t C, const int32_t *__restrict__ row,
                             const Real *__restrict__ weight, uint64_t padded, Real *__restrict__ real_rows) {
  for (uint64_t c = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < C;
       c += static_cast<uint64_t>(gridDim.x) * blockDim.x)
    for (int64_t e = col_ptr[c]; e < col_ptr[c + 1]; ++e)
      real_rows[static_cast<uint64_t>(row[e]) * padded + c] = kWeighted ? weight[e] : Real(1);
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
    // Offsets of every column (empty ones too), so the column-sum threads cover [0, cols) without a map.
    std::vector<int64_t> col_ptr(checked_add(m_->cols, 1, "cols + 1"), 0);
    for (std::size_t j = 0; j < m_->col_id.size(); ++j)
      col_ptr[static_cast<std::size_t>(m_->col_id[j]) + 1] = m_->col_start[j + 1] - m_->col_start[j];
    for (std::size_t c = 0; c < m_->cols; ++c) col_ptr[c + 1] += col_ptr[c];
    col_ptr_ = upload(col_ptr.data(), col_ptr.size());
    row_ = upload(m_->row.data(), m_->row.size());
    if (!m_->binary()) {
      std::vector<Real> w(m_->weight.begin(), m_->weight.end());
      weight_ = upload(w.data(), w.size());
    }
    {
      std::vector<ColumnEntry<Real>> entries(m_->nnz());
      for (std::size_t e = 0; e < entries.size(); ++e) {
        const auto r = static_cast<uint64_t>(m_->row[e]);
        entries[e] = {device_twiddle(r, m_->rows), device_twiddle(r * kRunRows % m_->rows, m_->rows), m_->row[e],
                      m_->binary() ? Real(1) : static_cast<Real>(m_->weight[e])};
      }
      entries_ = upload(entries.data(), entries.size());
    }
    row_id_ = upload(m_->row_id.data(), m_->row_id.size());
    row_start_ = upload(m_->row_start.data(), m_->row_start.size());
    row_col_ = upload(m_->row_col.data(), m_->row_col.size());
    if (!m_->binary()) {
      std::vector<Real> w(m_->row_weight.begin(), m_->row_weight.end());
      row_weight_ = upload(w.data(), w.size());
    }
    // The column sums' twiddles: two tables of about sqrt(rows) entries in shared memory when they fit in
    // kSharedTableBytes, else the global tables.
    unsigned bits = 0;
    while ((uint64_t{1} << (2 * bits)) < m_->rows) ++bits;
    const uint64_t lo_n = uint64_t{1} << bits, hi_n = (m_->rows + lo_n - 1) >> bits;
    if ((lo_n + hi_n) * sizeof(C) <= kSharedTableBytes) {
      std::vector<C> split(lo_n + hi_n);
      for (uint64_t j = 0; j < lo_n; ++j) split[j] = device_twiddle(j, m_->rows);
      for (uint64_t q = 0; q < hi_n; ++q) split[lo_n + q] = device_twiddle(q << bits, m_->rows);
      tw_split_ = upload(split.data(), split.size());
      tw_split_lo_ = static_cast<uint32_t>(lo_n);
      tw_split_bits_ = bits;
    } else {
      auto tw = make_twiddles<Real>(m_->rows);
      tw_lo_ = upload(reinterpret_cast<const C *>(tw.lo.data()), tw.lo.size());
      tw_hi_ = upload(reinterpret_cast<const C *>(tw.hi.data()), tw.hi.size());
    }
    auto tw_cols = make_twiddles<Real>(m_->cols);
    tw_cols_lo_ = upload(reinterpret_cast<const C *>(tw_cols.lo.data()), tw_cols.lo.size());
    tw_cols_hi_ = upload(reinterpret_cast<const C *>(tw_cols.hi.data()), tw_cols.hi.size());
    row_len_ = m_->cols;
    if (!fft_friendly(m_->cols)) setup_bluestein();
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
    // Release the old workspace first: the new one must fit beside nothing else of this plan.
    release_workspace();
    TilePass tiled = make_pass(tile, budget, 4 * layout_.width * cb, false);
    const std::size_t slot = checked_mul(2 * tiled.layout.tile, layout_.width, "staging size");
    for (int s = 0; s < 2; ++s) {
      staging_[s].allocate(slot);
      pinned_[s].allocate(slot);
    }
    // AUTO's whole spectrum in device memory may take DIRECT as one tile: cost it that way.
    Layout one = layout_;
    one.tile = layout_.half + 1;
    spfft2d_method whole_auto = estimate_costs(*m_, one, CostBackend::Cuda, cb).cheapest();
    if (is_whole_method(method)) {
      workspace_.allocate(checked_mul(layout_.rows, layout_.width, "workspace size"));
      plan_whole(method);
    } else if (method == SPFFT2D_METHOD_AUTO) {
      whole_auto = plan_auto_whole(whole_auto, tiled.layout.tile);
    }
    tiled_ = std::move(tiled);
    requested_tile_ = tile;
    method_ = method;
    whole_auto_ = whole_auto;
    stream_ready_ = true;
  }

  uint64_t tile_rows() const override { return tiled_.layout.tile; }
  std::size_t workspace_bytes() const override {
    return tiled_.z.bytes() + tiled_.work + whole_pass_.z.bytes() + whole_pass_.padded.bytes() + whole_pass_.work +
           staging_[0].size() * sizeof(C) * 2 + col_ptr_.bytes() + row_.bytes() + weight_.bytes() + entries_.bytes() +
           tw_lo_.bytes() + tw_hi_.bytes() + row_id_.bytes() + row_start_.bytes() + row_col_.bytes() +
           row_weight_.bytes() + tw_cols_lo_.bytes() + tw_cols_hi_.bytes() + tw_split_.bytes() + chirp_.bytes() +
           kernel_.bytes() + workspace_.bytes() + whole_work_;
  }

  void run(uint64_t lo, uint64_t hi, const Sink &sink, bool out_on_device) override {
    require(static_cast<bool>(tiled_.fft), "the plan has no workspace (a previous spfft2d_set_tile_rows failed)");
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
      TilePass &pass = whole_native && whole_pass_.fft ? whole_pass_ : tiled_;
      C *out = static_cast<C *>(sink.out);
      pass.layout.for_each_tile(lo, hi, [&](uint64_t k) {
        compute_tile(pass, k);
        fold(pass, pass.layout.direct_block(k, lo, hi), k, false, out, sink.row0);
        fold(pass, pass.layout.mirror_block(k, lo, hi), k, true, out, sink.row0);
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
  // The DIRECT method's buffers for one tile height: tile rows of length row_len_ and their C2C plan on one
  // stream. Whole-spectrum passes with Bluestein put the column sums in `padded`, whose zero padding is
  // written once, and transform out of place into z (rewriting the padding each time cost a third of the
  // sums' writes); memory-bounded tiled passes keep one buffer and rewrite it.
  struct TilePass {
    Layout layout;
    CufftPlan fft;
    std::size_t work = 0;  // cuFFT's work area
    DeviceBuffer<C> z, padded;
  };

  struct Pending {
    bool valid = false;
    Layout::Block direct, mirror;
  };

  static constexpr cufftType kC2C = std::is_same_v<Real, float> ? CUFFT_C2C : CUFFT_Z2Z;
  // Shared memory for the column sums' twiddle tables: 32 KiB leaves room for several blocks per SM (rows up
  // to 2^22 in float, 2^20 in double).
  static constexpr std::size_t kSharedTableBytes = std::size_t{32} << 10;

  static C device_twiddle(uint64_t m, uint64_t n) {
    const std::complex<Real> t = twiddle<Real>(m, n);
    return C{t.real(), t.imag()};
  }

  // Bluestein's chirp for the rows: chirp[c] = e^{-pi i c^2 / C} from the exact integer c^2 mod 2C, and
  // kernel = FFT_L(b) / L of b[k] = conj(chirp[|k|]) on the circular indices -C < k < C (zero elsewhere),
  // computed once in double.
  void setup_bluestein() {
    const uint64_t n = m_->cols, L = bluestein_length(n);
    const long double pi = 3.141592653589793238462643383279502884L;
    std::vector<C> chirp(n);
    std::vector<double2> b(L, double2{0.0, 0.0});
    for (uint64_t c = 0; c < n; ++c) {
      const long double a = pi * static_cast<long double>(c * c % (2 * n)) / static_cast<long double>(n);
      const double re = static_cast<double>(std::cos(a)), im = static_cast<double>(std::sin(a));
      chirp[c] = C{static_cast<Real>(re), static_cast<Real>(-im)};
      b[c] = double2{re, im};
      if (c != 0) b[L - c] = b[c];
    }
    DeviceBuffer<double2> d = upload(b.data(), b.size());
    CufftPlan fft;
    long long len = static_cast<long long>(L);
    fft.make_many(1, &len, nullptr, 1, len, nullptr, 1, len, CUFFT_Z2Z, 1);
    fft.set_stream(stream_);
    exec_c2c(fft, d.get(), d.get(), CUFFT_FORWARD);
    SFFT_CUDA_CHECK(cudaMemcpyAsync(b.data(), d.get(), d.bytes(), cudaMemcpyDeviceToHost, stream_));
    SFFT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    std::vector<C> kernel(L);
    for (uint64_t k = 0; k < L; ++k)
      kernel[k] =
          C{static_cast<Real>(b[k].x / static_cast<double>(L)), static_cast<Real>(b[k].y / static_cast<double>(L))};
    chirp_ = upload(chirp.data(), chirp.size());
    kernel_ = upload(kernel.data(), kernel.size());
    row_len_ = L;
  }

  bool bluestein() const { return row_len_ != m_->cols; }

  // Plans a DIRECT pass: tile rows (0: as many as `budget` holds at row_len_ plus extra_row_bytes per row,
  // cuFFT's work area included), its cuFFT plan on the plan's stream and its buffer.
  TilePass make_pass(uint64_t tile, std::size_t budget, std::size_t extra_row_bytes, bool padded_input) {
    TilePass p;
    p.layout = layout_;
    const std::size_t buffers = padded_input && bluestein() ? 2 : 1;
    const std::size_t row_bytes = checked_mul(buffers * row_len_, sizeof(C), "row size") + extra_row_bytes;
    p.layout.tile = tile == 0 ? auto_tile(layout_, row_bytes, budget) : std::min(tile, layout_.half + 1);
    for (int attempt = 0;; ++attempt) {
      long long n = static_cast<long long>(row_len_);
      p.fft.make_many(1, &n, nullptr, 1, n, nullptr, 1, n, kC2C, static_cast<long long>(p.layout.tile));
      p.work = work_size(p.fft);
      const std::size_t total = p.layout.tile * row_bytes + p.work;
      // cuFFT's work area counts against the budget.
      if (tile != 0 || total <= budget + budget / 2 || p.layout.tile == 1 || attempt == 3) break;
      p.layout.tile =
          std::max<uint64_t>(1, static_cast<uint64_t>(static_cast<long double>(p.layout.tile) * budget / total));
    }
    p.fft.set_stream(stream_);
    p.z.allocate(checked_mul(p.layout.tile, row_len_, "tile size"));
    if (buffers == 2) {
      p.padded.allocate(p.z.size());
      SFFT_CUDA_CHECK(cudaMemsetAsync(p.padded.get(), 0, p.padded.bytes(), stream_));
    }
    return p;
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
      down_columns_.make_many(1, &R, &R, W, 1, &R, W, 1, kC2C, W);
      down_columns_.set_stream(stream_);
      whole_work_ += work_size(down_columns_);
    }
  }

  // AUTO takes a whole-spectrum method, or DIRECT as one tile, only where the spectrum and that workspace
  // fit in half the free device memory and cuFFT can plan it (its 2-D plans refuse some huge shapes);
  // otherwise the tiled DIRECT method.
  spfft2d_method plan_auto_whole(spfft2d_method whole, uint64_t tiled_rows) {
    std::size_t free = 0, total = 0;
    SFFT_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    const long double spectrum = static_cast<long double>(layout_.rows) * layout_.width * sizeof(C);
    if (spectrum > free / 2) return SPFFT2D_METHOD_DIRECT;
    try {
      if (whole != SPFFT2D_METHOD_DIRECT) {
        plan_whole(whole);
        return whole;
      }
      // The buffer of one tile and as much again for cuFFT's work area.
      const long double one_tile = (bluestein() ? 3.0L : 2.0L) * (layout_.half + 1) * row_len_ * sizeof(C);
      if (tiled_rows <= layout_.half && spectrum + one_tile <= free / 2)
        whole_pass_ = make_pass(layout_.half + 1, 0, 0, true);
    } catch (const Error &) {
      dense_r2c_.reset();
      down_columns_.reset();
      whole_work_ = 0;
      whole_pass_ = TilePass{};
    }
    return SPFFT2D_METHOD_DIRECT;
  }

  static std::size_t work_size(const CufftPlan &plan) {
    std::size_t work = 0;
    SFFT_CUFFT_CHECK(cufftGetSize(plan.get(), &work));
    return work;
  }

  // Tile k of a pass: column sums (chirped and padded for Bluestein), then the row transform.
  void compute_tile(TilePass &p, uint64_t k) {
    const uint64_t tile = p.layout.tile, s0 = k * tile;
    const C *chirp = bluestein() ? chirp_.get() : nullptr;
    const bool padded = p.padded.size() != 0;
    C *sums = padded ? p.padded.get() : p.z.get();
    {
      constexpr unsigned block = kColumnBlock;
      const uint64_t groups = (tile + kColumnRows<Real> - 1) / kColumnRows<Real>;
      dim3 grid(static_cast<unsigned>(((padded ? layout_.cols : row_len_) + block - 1) / block),
                static_cast<unsigned>(std::min<uint64_t>(groups, 65535)));
      const Modulus R(layout_.rows);
      auto launch = [&](auto tw, std::size_t shared_bytes) {
        direct_tile<Real><<<grid, block, shared_bytes, stream_>>>(col_ptr_.get(), entries_.get(), tw, R, layout_.cols,
                                                                  row_len_, chirp, s0, tile, sums);
      };
      if (tw_split_.size() != 0)
        launch(SharedTwiddles<Real>{tw_split_.get(), tw_split_lo_,
                                    static_cast<uint32_t>(tw_split_.size()) - tw_split_lo_, tw_split_bits_},
               tw_split_.bytes());
      else
        launch(DeviceTwiddles<Real>{tw_lo_.get(), tw_hi_.size() ? tw_hi_.get() : nullptr}, 0);
      SFFT_CUDA_CHECK_LAUNCH();
    }
    auto *z = reinterpret_cast<CufftCplx<Real> *>(p.z.get());
    exec_c2c(p.fft, reinterpret_cast<CufftCplx<Real> *>(sums), z, CUFFT_FORWARD);
    if (chirp == nullptr) return;
    constexpr unsigned block = 256;
    dim3 grid(static_cast<unsigned>((row_len_ + block - 1) / block),
              static_cast<unsigned>(std::min<uint64_t>((tile + kPassRows - 1) / kPassRows, 65535)));
    multiply_rows<Real><<<grid, block, 0, stream_>>>(p.z.get(), kernel_.get(), row_len_, tile);
    SFFT_CUDA_CHECK_LAUNCH();
    exec_c2c(p.fft, z, z, CUFFT_INVERSE);
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
      if (m_->nnz() > 0) {
        constexpr unsigned block = 256;
        const unsigned grid = cuda::grid_for(static_cast<std::size_t>(layout_.cols), block);
        if (m_->binary())
          scatter_rows<Real, false>
              <<<grid, block, 0, stream_>>>(col_ptr_.get(), layout_.cols, row_.get(), nullptr, 2 * W, real_rows);
        else
          scatter_rows<Real, true>
              <<<grid, block, 0, stream_>>>(col_ptr_.get(), layout_.cols, row_.get(), weight_.get(), 2 * W, real_rows);
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

  // Writes output rows blk of tile k of a pass into `base`, whose first row is output row base_row.
  void fold(const TilePass &p, Layout::Block blk, uint64_t k, bool mirrored, C *base, uint64_t base_row) {
    if (blk.count == 0) return;
    C *out = base + (blk.first - base_row) * layout_.width;
    constexpr unsigned block = 256;
    dim3 grid(static_cast<unsigned>((layout_.width + block - 1) / block),
              static_cast<unsigned>(std::min<uint64_t>((blk.count + kPassRows - 1) / kPassRows, 65535)));
    fold_rows<Real><<<grid, block, 0, stream_>>>(p.z.get(), row_len_, layout_.cols, layout_.width, layout_.rows,
                                                 k * p.layout.tile, blk.first, blk.count, mirrored,
                                                 chirp_.size() != 0 ? chirp_.get() : nullptr, out);
    SFFT_CUDA_CHECK_LAUNCH();
  }

  void stream_to_host(uint64_t lo, uint64_t hi, const Sink &sink) {
    Pending pending[2];
    int slot = 0;
    const uint64_t W = layout_.width;
    const Layout &lay = tiled_.layout;
    lay.for_each_tile(lo, hi, [&](uint64_t k) {
      compute_tile(tiled_, k);
      Pending p{true, lay.direct_block(k, lo, hi), lay.mirror_block(k, lo, hi)};
      // staging_[slot] is free once the copy of two tiles ago has left it.
      SFFT_CUDA_CHECK(cudaStreamWaitEvent(stream_, copied_[slot]->get(), 0));
      fold(tiled_, p.direct, k, false, staging_[slot].get(), p.direct.first);
      fold(tiled_, p.mirror, k, true, staging_[slot].get() + p.direct.count * W, p.mirror.first);
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
    tiled_ = TilePass{};
    whole_pass_ = TilePass{};
    for (int s = 0; s < 2; ++s) {
      staging_[s].release();
      pinned_[s].release();
    }
    dense_r2c_.reset();
    down_columns_.reset();
    workspace_.release();
    whole_work_ = 0;
  }

  std::shared_ptr<const SparseColumns> m_;
  int device_;
  cudaStream_t stream_;
  bool stream_ready_ = false;
  Layout layout_;  // tile unset: the geometry the passes share
  DeviceBuffer<int64_t> col_ptr_;
  DeviceBuffer<int32_t> row_;
  DeviceBuffer<Real> weight_;
  DeviceBuffer<ColumnEntry<Real>> entries_;  // the nonzeros by column, for the column sums
  DeviceBuffer<int32_t> row_id_;
  DeviceBuffer<int64_t> row_start_;
  DeviceBuffer<int32_t> row_col_;
  DeviceBuffer<Real> row_weight_;
  DeviceBuffer<C> tw_lo_, tw_hi_, tw_cols_lo_, tw_cols_hi_;
  DeviceBuffer<C> tw_split_;  // the column sums' shared-memory tables (lo then hi), when they fit
  uint32_t tw_split_lo_ = 0;
  unsigned tw_split_bits_ = 0;
  uint64_t row_len_ = 0;            // length of the row FFTs: cols, or the Bluestein length
  DeviceBuffer<C> chirp_, kernel_;  // Bluestein only (cols and row_len_ elements)
  std::unique_ptr<Stream> copy_stream_;
  std::unique_ptr<Event> folded_[2], copied_[2];
  TilePass tiled_;       // tiles of the plan's height: ranges, streams, explicit DIRECT
  TilePass whole_pass_;  // one tile: AUTO's whole spectrum in device memory, when planned
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
