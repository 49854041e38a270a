// SPDX-License-Identifier: Apache-2.0
// What the spfft2d CUDA units share (internal): element types, complex product, twiddle lookups, the Barrett
// modulus, the column sums' entry layout, the stages' launchers (direct_tiles.cu, bluestein.cu, whole.cu) and
// small host helpers. The folder's units, by stage:
//   direct_tiles.cu  the DIRECT method's column sums (one tile of spectrum rows) and the fold into output rows
//   bluestein.cu     the rows of an FFT-unfriendly length: chirp, kernel spectrum, pointwise product
//   whole.cu         the whole-spectrum methods' kernels (DIRECT_ROWS row sums, DENSE scatter)
//   pruned.cu        the PRUNED method: the nonempty rows' spectra, then the column pass from them
//   four_step.cu     PRUNED's column pass at power-of-two row counts: a four-step FFT fed from the rows
//   engine.cu        the engine: plans, workspaces, method choice, the tile loop into device memory
//   streaming.cu     host and callback outputs: double-buffered pinned copies overlapping the next tile
#pragma once

#include <complex>
#include <cstdint>
#include <type_traits>

#include "common/cuda_util.cuh"
#include "spfft2d/plan.hpp"

namespace sfft::spfft2d::gpu {

using cuda::DeviceBuffer;

template <class Real>
using Cplx = cuda::Vector2<Real>;
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

// all their loads before any store, so that several reads per thread are in flight (benzene-like case on the
// H100: 2.105-2.117 ms against 2.126-2.131 ms with one row per thread). The product stays a pass of its own:
// as a cuFFT LTO callback (CUDA 13.0) it saved about 0.01 ms, made plan creation take 11-15 s instead of
// 0.17 s, and cuFFT refused to plan it (CUFFT_INTERNAL_ERROR) at L = 4374.
constexpr int kPassRows = 4;

// The column sums' twiddles e^{-2 pi i m / rows}: the shared-memory split tables (lo then hi, when `split` is
// set), else the global tables of TwiddleTables (hi nullptr: lo is the single table).
template <class Real>
struct ColumnTwiddles {
  const Cplx<Real> *split = nullptr;
  uint32_t split_lo = 0, split_hi = 0;
  unsigned bits = 0;
  const Cplx<Real> *lo = nullptr, *hi = nullptr;
};

// The columns of more than `limit` nonzeros (heavy_column_limit), which the column sums give a warp each.
struct HeavyColumns {
  const int32_t *col = nullptr;  // device array of `count` column indices
  uint64_t count = 0;
  int64_t limit = 0;
};

// direct_tiles.cu. Column sums of tile rows [s0, s0 + tile) into z (rows of `stride`, premultiplied by chirp
// when not nullptr); the grid covers columns [0, grid_cols) (cols, or stride to write the Bluestein padding).
template <class Real>
void launch_direct_tile(const int64_t *col_ptr, const ColumnEntry<Real> *entries, const ColumnTwiddles<Real> &tw,
                        const HeavyColumns &heavy, uint64_t R, uint64_t C, uint64_t stride, uint64_t grid_cols,
                        const Cplx<Real> *chirp, uint64_t s0, uint64_t tile, Cplx<Real> *z, cudaStream_t stream);
// Output rows [first, first + count) (direct or mirrored) of a transformed tile into out.
template <class Real>
void launch_fold(const Cplx<Real> *z, uint64_t stride, uint64_t C, uint64_t W, uint64_t R, uint64_t s0, uint64_t first,
                 uint64_t count, bool mirrored, const Cplx<Real> *chirp, Cplx<Real> *out, cudaStream_t stream);

// bluestein.cu. The chirp (n entries) and the convolution kernel's spectrum (length entries) of Bluestein rows of
// length n, and the pointwise product of count rows of length L with the kernel.
template <class Real>
struct Bluestein {
  uint64_t length = 0;
  DeviceBuffer<Cplx<Real>> chirp, kernel;
};
template <class Real>
Bluestein<Real> make_bluestein(uint64_t n, cudaStream_t stream);
template <class Real>
void launch_multiply_rows(Cplx<Real> *z, const Cplx<Real> *kernel, uint64_t L, uint64_t count, cudaStream_t stream);

// whole.cu. Row sums of the nrows nonempty rows into b (rows x W; weight nullptr: binary), and the scatter of
// every nonzero into real rows (at: its index there).
template <class Real>
void launch_row_sums(const int32_t *row_id, const int64_t *row_start, const int32_t *col, const Real *weight,
                     uint64_t nrows, const Cplx<Real> *tw_lo, const Cplx<Real> *tw_hi, uint64_t C, uint64_t W,
                     Cplx<Real> *b, cudaStream_t stream);
template <class Real>
void launch_scatter_at(const uint64_t *at, const Real *weight, uint64_t nnz, Real *real_rows, cudaStream_t stream);

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

// One entry of a row for the four-step generation (four_step_entries): e^{-2 pi i col / C}, its column, its
// run table (-1: a single nonzero) and weight (1 in binary mode).
template <class Real>
struct RowEntry {
  Cplx<Real> step;
  int32_t col;
  int32_t table;
  Real weight;
};

// A row of a pass-1 block of the four-step pass, in the order its threads take them: shared row r2, and either
// an R2C slot's spectrum (spectrum >= 0) or the direct entries [begin, begin + count) (an empty row: none).
struct FourStepRow {
  int64_t begin;
  int32_t count;
  int32_t spectrum;
  int32_t r2;
  int32_t runs;  // the first `runs` entries are runs (table >= 0), the others single nonzeros
};

// four_step.cu. What the four-step column pass reads: each pass-1 block's rows (`rows`), the R2C slots' spectra
// (rows of W), the direct rows' entries, the twiddles e^{-2 pi i m / C} and e^{-2 pi i m / R} (one table of R
// entries), P (pass 2's length; pass 1's is R / P) and the output width.
template <class Real>
struct FourStepArgs {
  // rows[r1 Q + i]: block r1's rows r1 + P r2 by decreasing direct entries, so that a warp's rows are about as
  // long as each other (a warp sums as long as its longest row); one load gives a thread all it needs of a row.
  const FourStepRow *rows = nullptr;
  const Cplx<Real> *spectra = nullptr;
  const RowEntry<Real> *entries = nullptr;
  DeviceTwiddles<Real> tw_cols{nullptr, nullptr};
  Modulus cols{1};
  // C - 1 when C is a power of two (then c v mod C is the low bits of a 32-bit product), else 0 (cols).
  uint32_t col_mask = 0;
  // The same twiddles e^{-2 pi i m / C} as two split tables for shared memory (split_cols.src set) when they
  // fit in kFourStepSplitBytes: the generation's lookups are random within the C-entry table, which from
  // global memory missed L1 once the table outgrew it.
  SharedTwiddles<Real> split_cols{nullptr, 0, 0, 0};
  const Cplx<Real> *tw_rows = nullptr;
  // The run tables: table t holds D_len(v) = sum_{k < len} e^{-2 pi i k v / C} at [2 t S, 2 t S + W) and the
  // mirror's sum_{k < len} (-1)^k e^{-2 pi i k v / C} at [2 t S + S, 2 t S + S + W), S = run_stride(W): zeros
  // up to each part's end, so a thread reads its columns from one pointer without clamping them to the width
  // (a plain complex64 tile's last thread reads up to 30 columns past W, into its table's second part: within
  // the table, and those columns' sums are never stored).
  const Cplx<Real> *runs = nullptr;
  uint64_t P = 0, W = 0;
  bool mirror = false;  // C even: pass 1 sums columns v and C/2 - v together
};
// Entries of each part of a run table (FourStepArgs::runs): the width and a generation thread's columns.
constexpr uint64_t run_stride(uint64_t W) { return W + 16; }
// The half spectrum (R x W, R = P x Q a power of two with P, Q in [4, 256]) into out, on `stream`; `between`
// (unless nullptr) is recorded between the two passes.
template <class Real>
void launch_four_step(const FourStepArgs<Real> &a, uint64_t R, Cplx<Real> *out, cudaStream_t stream,
                      cudaEvent_t between);

// pruned.cu. The PRUNED method's slots (the nonempty rows' spectra: K rows of W, the R2C rows first), their
// nonzeros by slot, the tables and the batched in-place R2C; run_pruned writes the whole half spectrum into b
// (direct column sums), or every row of b from the slots, empty rows as zeros, for the engine's column C2C,
// or (four_step) the whole half spectrum by the four-step pass, whose spectra are the R2C slots' only and
// whose direct rows are summed as the pass reads them.
template <class Real>
struct PrunedPass {
  uint64_t slots = 0, fft_slots = 0;
  bool direct_columns = false;
  bool four_step = false;
  uint64_t four_step_p = 0;
  DeviceBuffer<RowEntry<Real>> entries;    // four_step: the direct slots' nonzeros
  DeviceBuffer<Cplx<Real>> tw_cols_split;  // four_step: FourStepArgs::split_cols (lo then hi), when it fits
  DeviceBuffer<FourStepRow> rows;          // four_step: FourStepArgs::rows
  DeviceBuffer<Cplx<Real>> runs;           // four_step: FourStepArgs::runs
  uint32_t split_lo = 0;
  unsigned split_bits = 0;
  DeviceBuffer<Cplx<Real>> spectra;
  DeviceBuffer<int32_t> slot_row, row_slot;  // row_slot: rows entries, -1 for an empty row (FFT column pass)
  DeviceBuffer<int64_t> fft_start, direct_start;
  DeviceBuffer<int32_t> fft_col, direct_col, direct_slot;
  DeviceBuffer<Real> fft_weight, direct_weight;  // empty in binary mode
  DeviceBuffer<Cplx<Real>> tw_cols_lo, tw_cols_hi, tw_rows_lo, tw_rows_hi;
  cuda::CufftPlan row_r2c;
  std::size_t work = 0;  // cuFFT's work area of row_r2c
  // SFFT_SPFFT2D_STAGE_TIMES set and not "0" when the pass is made: each four-step exec synchronises and
  // prints its stages' times to stderr (profiling: it costs the exec its asynchrony).
  bool stage_times = false;
  std::size_t bytes() const;
  bool writes_spectrum() const { return direct_columns || four_step; }  // no column C2C after it
};
template <class Real>
PrunedPass<Real> make_pruned(const SparseColumns &m, cudaStream_t stream);
template <class Real>
void run_pruned(const PrunedPass<Real> &p, uint64_t R, uint64_t C, Cplx<Real> *b, cudaStream_t stream);

template <class Real>
Cplx<Real> device_value(std::complex<Real> v) {
  return Cplx<Real>{v.real(), v.imag()};
}

template <class Real>
Cplx<Real> device_twiddle(uint64_t m, uint64_t n) {
  return device_value(twiddle<Real>(m, n));
}

}  // namespace sfft::spfft2d::gpu
