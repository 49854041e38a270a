// SPDX-License-Identifier: Apache-2.0
// The sparse-input 2-D FFT: the matrix in compressed-column form, the tile geometry shared by both
// backends, and the small engine interface the C API drives.
//
// Method. For output rows u in [0, rows/2] (Hermitian symmetry of a real input gives the others),
//   Z[u][c] = sum_{r in column c} w_rc e^{-2 pi i r u / rows}      (direct sparse DFT, nonempty columns)
//   Y[u][.] = C2C_cols(Z[u][.])                                      (batched FFT along the columns)
// and Y[rows-u][v] = conj(Y[u][(cols-v) mod cols]) fills the rows the half did not compute. Rows are
// processed in fixed tiles of `tile` source rows so memory is tile x cols whatever the matrix size; tile
// boundaries are fixed per plan, so any sub-range of output rows is bit-identical to the one-shot output.
// The CUDA backend transforms rows of a length with a prime factor above 97 by its own Bluestein pass
// (bluestein_length) rather than cuFFT's.
//
// Three whole-spectrum methods compute the half spectrum in one buffer B (rows x width, the output layout):
//   DIRECT_ROWS: B[r][v] = sum_{c in row r} w_rc e^{-2 pi i c v / cols} for v < width (direct, per row),
//   DENSE:       the rows scattered into B as padded reals, then an in-place R2C along each row,
// both finishing with an in-place C2C of length rows down each of the width columns, and
//   PRUNED:      S[j][v], the half spectra of the K nonempty rows only (an R2C of the row alone, or direct
//                sums for a row with few nonzeros: pruned_shape), then one column pass from S into B:
//                B[u][v] = sum_j S[j][v] e^{-2 pi i row_j u / rows}, by an FFT of each column whose input is
//                nonzero only at the K nonempty rows, or by those K direct terms when K is small;
// the dense input is never formed and empty rows and columns cost nothing. B is the caller's array when the
// call writes the whole spectrum to the plan's native memory, else a plan workspace.
// The cost model (estimate_costs) picks the cheapest method for AUTO.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "common/backend.hpp"
#include "common/options.hpp"
#include "common/smooth.hpp"
#include "common/wall_stages.hpp"
#include "sfft/sfft.h"

namespace sfft::spfft2d {

// FFT lengths are ints in FFTW and in the twiddle index math.
constexpr uint64_t kMaxExtent = 0x7fffffffu;

// Nonzeros grouped by column, empty columns skipped, rows sorted within a column, repeats merged.
struct SparseColumns {
  uint64_t rows = 0, cols = 0;
  std::vector<int32_t> col_id;     // the nonempty columns, increasing
  std::vector<int64_t> col_start;  // col_id.size() + 1 offsets into row/weight
  std::vector<int32_t> row;        // row of each stored nonzero
  std::vector<double> weight;      // empty in binary mode (every weight 1)
  // The same nonzeros grouped by row, empty rows skipped: the direct sums along rows.
  std::vector<int32_t> row_id;     // the nonempty rows, increasing
  std::vector<int64_t> row_start;  // row_id.size() + 1 offsets into row_col/row_weight
  std::vector<int32_t> row_col;    // column of each nonzero, increasing within a row
  std::vector<double> row_weight;  // empty in binary mode
  bool binary() const { return weight.empty(); }
  uint64_t nnz() const { return row.size(); }
  bool has_empty_columns() const { return col_id.size() < cols; }
  bool has_empty_rows() const { return row_id.size() < rows; }
};

// Validates a COO description (host arrays) and builds the compressed columns, sorting with `threads` threads.
SparseColumns build_columns(uint64_t rows, uint64_t cols, uint64_t nnz, const int64_t *row_idx, const int64_t *col_idx,
                            const double *values, int threads, const char *fn);

// Refuses matrices whose spectrum could overflow the output precision: a repeated coordinate whose values
// sum beyond the double range, or a sum of |weights| (a bound on every output coefficient) above 0.999 times
// the largest value of the output type (the rest is headroom for rounding in the sums and FFTs).
void require_finite_output(const SparseColumns &m, bool double_output, const char *fn);

// A Matrix Market coordinate file as COO (0-based); values empty in binary mode.
struct MtxMatrix {
  uint64_t rows = 0, cols = 0;
  std::vector<int64_t> row, col;
  std::vector<double> value;
};
MtxMatrix read_mtx(const char *path, bool binary);

// e^{-2 pi i m / n} for m in [0, n), from the exact integers m and n.
template <class Real>
std::complex<Real> twiddle(uint64_t m, uint64_t n);

// e^{-2 pi i m / n} for m in [0, n), from exact integer m: one table when n is small, else a two-level
// table (hi[m >> kSplitBits] * lo[m & mask]) so memory stays O(sqrt n) for huge n.
template <class Real>
struct TwiddleTables {
  static constexpr unsigned kSplitBits = 11;
  static constexpr uint64_t kSingleTableMax = uint64_t{1} << 22;
  std::vector<std::complex<Real>> lo, hi;  // hi empty: lo is the single table
};
template <class Real>
TwiddleTables<Real> make_twiddles(uint64_t n);

// sum_{k < len} e^{-2 pi i k a / n} (len >= 1): e^{-pi i (len - 1) a / n} sin(pi len a / n) / sin(pi a / n), each
// angle reduced from exact integers, in double; len where a is a multiple of n. n <= 2^32.
std::complex<double> twiddle_run_sum(uint64_t len, uint64_t a, uint64_t n);

// twiddle_run_sum(len, a, n) for one n and `uses` pairs (len, a), bit-identical to it: the sines and cosines of the
// reduced angles pi x / n (x <= n / 2) from a table made once where that table has at most half as many entries as
// there are uses (so it takes no more memory than the sums it serves), else computed per sum as there (four library
// calls a sum: whole run tables are lengths x about n / 2 sums).
class RunSums {
 public:
  RunSums(uint64_t n, uint64_t uses);
  std::complex<double> operator()(uint64_t len, uint64_t a) const;

 private:
  uint64_t n_;
  std::vector<std::pair<double, double>> quarter_;  // {sin, cos}(pi x / n), x <= n / 2; empty: no table
};

// twiddle<Real>(m, n) for `uses` indices m < n: from a table of all n values where n <= uses (a long-double sine
// and cosine a use had been most of a CUDA plan's creation: 0.2 s of 0.33 at 16384^2 with 557000 nonzeros),
// else computed at each use.
template <class Real>
class TwiddleMemo {
 public:
  TwiddleMemo(uint64_t n, uint64_t uses);
  std::complex<Real> operator()(uint64_t m) const { return table_.empty() ? twiddle<Real>(m, n_) : table_[m]; }

 private:
  uint64_t n_;
  std::vector<std::complex<Real>> table_;
};

// Tile geometry: source rows [0, half] in tiles of `tile`; tile k covers [k*tile, (k+1)*tile).
struct Layout {
  uint64_t rows = 0, cols = 0, width = 0, half = 0, tile = 1;
  Layout() = default;
  Layout(uint64_t r, uint64_t c) : rows(r), cols(c), width(c / 2 + 1), half(r / 2) {}
  uint64_t tile_count() const { return (half + 1 + tile - 1) / tile; }
  // Output rows of tile k inside [lo, hi): the directly computed block and the mirrored block.
  struct Block {
    uint64_t first = 0, count = 0;  // output rows [first, first + count)
  };
  Block direct_block(uint64_t k, uint64_t lo, uint64_t hi) const;
  Block mirror_block(uint64_t k, uint64_t lo, uint64_t hi) const;
  // Calls fn(k) once for each tile needed by output rows [lo, hi), in increasing k.
  template <class Fn>
  void for_each_tile(uint64_t lo, uint64_t hi, Fn &&fn) const;
};

// The circular convolution length of a Bluestein transform of length n: the smallest 2^a 3^b >= 2n - 1
// (columns.cpp says why not 5 and 7).
uint64_t bluestein_length(uint64_t n);
// Whether the CUDA DIRECT method transforms rows of length n by its own Bluestein pass (bluestein.cu) rather
// than by cuFFT: lengths with a prime factor above kCudaLibraryRowPrime (columns.cpp says why).
bool cuda_rows_take_bluestein(uint64_t n);

// Automatic tile height: `budget` bytes at `bytes_per_row` per source row, within [1, half + 1].
uint64_t auto_tile(const Layout &layout, std::size_t bytes_per_row, std::size_t budget);
// Default workspace budget: a quarter of the full output, within [8 MiB, 128 MiB], so streaming a
// spectrum needs a small fraction of what the dense transform holds while tiles stay large enough to
// fill the GPU.
std::size_t auto_budget(const Layout &layout, std::size_t complex_bytes);

// Estimated time in ns of each method on one backend for a whole spectrum of `complex_bytes` elements, DIRECT
// with the tiles of `tiled` (the CUDA backend transforms rows of an FFT-unfriendly length by its own
// Bluestein pass); the constants are fitted to measurements (columns.cpp says where they come from).
// CUDA: the memory-bound terms (bytes streamed, cuFFT's transforms) are times on the GPU the constants were
// fitted on, multiplied by `memory_scale` (memory_time_scale()) for another GPU; the CPU ignores it.
enum class CostBackend { Cpu, Cuda };
struct MethodCosts {
  double direct = 0, direct_rows = 0, dense = 0, pruned = 0;
  spfft2d_method cheapest() const;
};
MethodCosts estimate_costs(const SparseColumns &m, const Layout &tiled, CostBackend backend, std::size_t complex_bytes,
                           double memory_scale = 1.0);

// The memory time scale of a GPU of `bytes_per_second` peak memory bandwidth (cuda::memory_bandwidth): the
// fitting GPU's bandwidth over it, within [1/4, 4]; 1 where the bandwidth is unknown (0).
double memory_time_scale(double bytes_per_second);

// The CUDA DIRECT column sums give each column a thread, and a column of more nonzeros than this (twice the
// mean of the nonempty columns, at least 16) a warp of its own: a warp of single threads runs as long as its
// longest column (columns.cpp, warp_padded_terms).
uint64_t heavy_column_limit(const SparseColumns &m);

// What the four-step generation sums for the direct rows (not fft_row), in row_id order: their nonzeros, where
// a run of at least kFourStepMinRun adjacent columns of equal weight whose length has a table is one entry
// (table >= 0): sum_{k < len} w e^{-2 pi i (col + k) v / C} = w e^{-2 pi i col v / C} D_len(v), one complex
// product per column instead of len terms (banded rows). Tables go to the lengths that save the most, at most
// min(32, rows / 32) of them (2 x width elements each: D_len and the mirror's alternating sum) and 2^27
// length x width products to make at plan time.
constexpr int64_t kFourStepMinRun = 3;
// A run entry's time per output in the CPU's direct row sums against a single nonzero's: a twiddle times the table's
// value, one run at a time, against a twiddle added in the four chains of the single nonzeros (development VM,
// 4096^2: banded rows' runs about 1 ns an output, block-diagonal rows' nonzeros 0.28).
constexpr double kCpuRunTerms = 3.5;
struct FourStepEntries {
  struct Entry {
    int32_t col;
    int32_t table;  // -1: a single nonzero
    double weight;
  };
  std::vector<int64_t> start;  // direct row d's entries: [start[d], start[d + 1]), its runs first
  std::vector<int32_t> runs;   // how many of direct row d's entries are runs (table >= 0)
  std::vector<Entry> entry;
  std::vector<int64_t> run_length;  // of each table
};

// The CPU's FFTs of lengths that are not 7-smooth, as one thread measured them on this host (ns; 0: from the
// model), by the faster of FFTW's plan and Bluestein's route (common/fftw_bluestein.hpp). The cost model's units
// are the wall time of kCpuModelThreads threads, so it prices each at ns / kCpuModelThreads.
// CUDA: row_line alone, cuFFT's batched C2C at DIRECT's row length, the batch's time a row on the plan's GPU (AUTO
// times it where that length has a prime factor from 5 to 97: cuFFT's speed varies from one such length to another).
struct MeasuredFfts {
  double row_r2c = 0;      // PRUNED's R2C of one row (cols points)
  double row_line = 0;     // DIRECT's C2C of one tile row (cols points)
  double column_line = 0;  // the column pass's C2C of one column (rows points)
};
constexpr double kCpuModelThreads = 2;

// How PRUNED treats a matrix on a backend, from operation counts (columns.cpp): which nonempty rows (in
// row_id order) a real FFT transforms rather than direct sums, and whether the column pass sums the few
// nonempty rows' spectra directly rather than running an FFT down each column. On the CUDA backend an FFT
// column pass at a power-of-two row count in [kFourStepMinRows, kFourStepMaxRows] is the four-step FFT of
// our own (cuda/four_step.cu: rows = four_step_p x (rows / four_step_p)), which generates the direct rows'
// spectra as it reads them, so its FFT rows are only the rows far longer than the others. The CPU sums a direct
// row's runs of adjacent equal nonzeros through tables as the four-step generation does (four_step_entries), so
// its break-even counts a row's entries (a run kCpuRunTerms, any other nonzero 1) rather than its nonzeros.
struct PrunedShape {
  std::vector<char> fft_row;
  uint64_t fft_rows = 0;
  bool direct_columns = false;
  bool four_step = false;
  uint64_t four_step_p = 0;
  double direct_terms = 0;  // the direct rows' nonzeros; CPU: their entries, a run counted kCpuRunTerms times
  FourStepEntries entries;  // CPU, where some row has a run: every nonempty row's entries (four_step_entries)
  MeasuredFfts measured;    // as given to pruned_shape
};
constexpr uint64_t kFourStepMinRows = 16, kFourStepMaxRows = 65536;
// Shared memory of a block of the four-step pass 1 at length q (cuda/four_step.cu): q rows of a 256-byte column
// tile padded by one element, the split twiddle tables (kFourStepSplitBytes: C up to 2^18 in float and 2^16 in
// double), and 2 q twiddles.
constexpr std::size_t kFourStepSplitBytes = std::size_t{8} << 10;
constexpr std::size_t four_step_rows_shared_bytes(uint64_t q, std::size_t complex_bytes) {
  return static_cast<std::size_t>(q) * (256 / complex_bytes + 1) * complex_bytes + kFourStepSplitBytes +
         2 * static_cast<std::size_t>(q) * complex_bytes;
}
// A measured row R2C also sets the rows' break-even (the CPU measures it where cols is not 7-smooth: FFTW's R2C
// of a prime length 8219 took 315 us, 23 times that of 8192, where the model's Bluestein route said 123 us).
PrunedShape pruned_shape(const SparseColumns &m, CostBackend backend, const MeasuredFfts &measured = {});
// estimate_costs with PRUNED's shape of m on that backend given, for a caller that plans with it too.
MethodCosts estimate_costs(const SparseColumns &m, const Layout &tiled, CostBackend backend, std::size_t complex_bytes,
                           const PrunedShape &shape, double memory_scale = 1.0);

// max_tables 0: the four-step's min(32, rows / 32); the CPU's tables are rows-independent (kCpuRunTables), and
// its runs at least kCpuMinRun long (a shorter run costs its sums no less than its nonzeros apart).
FourStepEntries four_step_entries(const SparseColumns &m, const PrunedShape &s, uint64_t max_tables = 0,
                                  int64_t min_run = kFourStepMinRun);
constexpr uint64_t kCpuRunTables = 32;
constexpr int64_t kCpuMinRun = 5;

// The method of a call: AUTO resolves to `whole_auto` for a whole spectrum written to the plan's native
// memory and to the tiled DIRECT method for anything else (host output of a CUDA plan, row ranges, streams).
spfft2d_method method_of_call(spfft2d_method set, spfft2d_method whole_auto, bool whole_native);
bool is_whole_method(spfft2d_method m);

// Where a tile's output rows go: straight into the caller's array (rows [row0, ...)), or block by block
// to a callback.
struct Sink {
  void *out = nullptr;  // destination of output row `row0` (array mode)
  uint64_t row0 = 0;
  spfft2d_rows_callback callback = nullptr;  // stream mode when set
  void *user = nullptr;
};

// One backend's executor for one precision. Implementations: cpu.cpp, cuda.cu.
class Engine {
 public:
  virtual ~Engine() = default;
  // Re-plans the workspace for tile height `tile` (0 = automatic).
  virtual void set_tile_rows(uint64_t tile) = 0;
  // Re-plans for `method` (AUTO: the cost model); a failure leaves the previous method in place.
  virtual void set_method(spfft2d_method method) = 0;
  // The method a whole-spectrum exec into the plan's native memory uses (never AUTO).
  virtual spfft2d_method whole_method() const = 0;
  // Output rows [lo, hi) to the sink; out_on_device says the array is CUDA device/managed memory.
  virtual void run(uint64_t lo, uint64_t hi, const Sink &sink, bool out_on_device) = 0;
  virtual uint64_t tile_rows() const = 0;
  virtual std::size_t workspace_bytes() const = 0;
};

template <class Real>
std::unique_ptr<Engine> make_cpu_engine(std::shared_ptr<const SparseColumns> matrix, const Options &opts);
// The CUDA engine and device-to-host copy, through the CUDA plugin (cuda_seam.cpp): without CUDA support
// both fail with SFFT_ERROR_UNSUPPORTED.
template <class Real>
std::unique_ptr<Engine> make_cuda_engine(std::shared_ptr<const SparseColumns> matrix, const Options &opts);
void copy_to_host(void *dst, const void *src, std::size_t bytes);

// What an spfft2d_plan handle stands for: the matrix, the backend fixed at create by sfft::resolve_backend,
// and the engine of that backend. The C functions (capi/spfft2d_api.cpp) check their own arguments and
// make one call here.
class Plan {
 public:
  // From COO arrays (host, device or managed memory: AUTO follows them, sfft.h "Backends").
  static std::unique_ptr<Plan> from_coo(uint64_t rows, uint64_t cols, uint64_t nnz, const int64_t *row_idx,
                                        const int64_t *col_idx, const double *values, const sfft_dtype &out_dtype,
                                        const sfft_options *opts);
  // From a Matrix Market file (no caller arrays: AUTO takes the GPU when opts->device is usable).
  static std::unique_ptr<Plan> from_mtx(const char *path, bool binary, const sfft_dtype &out_dtype,
                                        const sfft_options *opts);

  void exec(void *out) { run(0, matrix_->rows, out); }
  void exec_rows(uint64_t row0, uint64_t nrows, void *out) { run(row0, nrows, out); }
  void exec_stream(spfft2d_rows_callback callback, void *user);
  void set_tile_rows(uint64_t tile_rows) { engine_->set_tile_rows(tile_rows); }
  void set_method(int method);  // any int may arrive from C
  spfft2d_method method() const { return engine_->whole_method(); }
  struct Info {
    uint64_t rows, cols, nnz, tile_rows, workspace_bytes;
    sfft_backend backend;
  };
  Info info() const;

 private:
  // stages: the creation's stage times so far (SFFT_SPFFT2D_STAGE_TIMES); the engine's is added and the line printed.
  Plan(std::shared_ptr<const SparseColumns> matrix, Backend backend, bool double_output, const Options &opts,
       const char *fn, WallStages &stages);
  void run(uint64_t row0, uint64_t nrows, void *out);

  std::shared_ptr<const SparseColumns> matrix_;
  Backend backend_;
  int device_;  // opts->device: a CUDA plan's output must be host, managed or this device's memory
  std::unique_ptr<Engine> engine_;
};

template <class Fn>
void Layout::for_each_tile(uint64_t lo, uint64_t hi, Fn &&fn) const {
  // Direct rows [lo, min(hi, half + 1)) need sources of the same index; mirrored rows u in
  // [max(lo, half + 1), hi) need sources rows - u.
  uint64_t a0 = 1, a1 = 0, b0 = 1, b1 = 0;  // inclusive tile ranges, empty when first > last
  uint64_t dhi = hi < half + 1 ? hi : half + 1;
  if (lo < dhi) {
    a0 = lo / tile;
    a1 = (dhi - 1) / tile;
  }
  uint64_t mlo = lo > half + 1 ? lo : half + 1;
  if (mlo < hi) {
    b0 = (rows - hi + 1) / tile;
    b1 = (rows - mlo) / tile;
  }
  if (a0 > a1) {
    for (uint64_t k = b0; k <= b1; ++k) fn(k);
    return;
  }
  if (b0 > b1 || b0 > a1 + 1 || a0 > b1 + 1) {  // disjoint: two runs in increasing order
    uint64_t f0 = a0, f1 = a1, s0 = b0, s1 = b1;
    if (b0 <= b1 && b0 < a0) std::swap(f0, s0), std::swap(f1, s1);
    for (uint64_t k = f0; k <= f1; ++k) fn(k);
    if (s0 <= s1)
      for (uint64_t k = s0; k <= s1; ++k) fn(k);
    return;
  }
  uint64_t u0 = a0 < b0 ? a0 : b0, u1 = a1 > b1 ? a1 : b1;
  for (uint64_t k = u0; k <= u1; ++k) fn(k);
}

}  // namespace sfft::spfft2d
