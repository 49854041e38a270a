// SPDX-License-Identifier: Apache-2.0
// Parameter choice of the type-3 NUFFT, shared by the CPU and CUDA paths: kernel shape/width from the
// tolerance, and per dimension the centring, the source grid (n1 cells of spacing h1) and the FFT length n2.
//
// Per dimension, with sources x = C + xr (|xr| <= X) and targets s = D + sr (|sr| <= S):
//   1. spread f_j * exp(i sign D xr_j) with phi at grid coordinate xr_j / h1 onto n1 cells (no wrap),
//   2. multiply cell c by 1 / phihat(2 pi c / n2), zero-pad to n2 and FFT (the "type-2" step),
//   3. interpolate with phi at grid coordinate sr_k * h1 * n2 / (2 pi) (periodic, n2 cells),
//   4. multiply by exp(i sign C s_k) / phihat(sr_k h1).
// h1 = pi / (upsampfac * S) keeps |sr h1| <= pi / upsampfac, where the kernel's aliasing error is below tol.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <vector>

#include "common/error.hpp"
#include "nufft3/kernel.hpp"

namespace sfft::nufft3 {

struct DimLayout {
  double src_center = 0;  // C
  double tgt_center = 0;  // D
  double h1 = 1;          // source grid spacing, in coordinate units
  long long n1 = 0;       // source grid cells, even; cell c in [-n1/2, n1/2)
  long long n2 = 0;       // FFT length, 2,3,5,7-smooth and even
  double tgt_scale = 0;   // target grid coordinate per coordinate unit: h1 * n2 / (2 pi)
};

struct Layout {
  int dim = 1;
  double upsampfac = 2;
  KernelSpec kernel;
  DimLayout axis[3];
  std::size_t n1_total = 1;  // product of n1
  std::size_t n2_total = 1;  // product of n2
};

// Smallest even 2,3,5,7-smooth integer >= n (n < 2^62).
long long next_smooth_even(long long n);
// What a grid axis's FFT length costs beyond its points (CostModel): per distinct odd prime dividing it, and once if
// it is twice an odd number.
struct FftLengthCost {
  double odd_prime = 0, twice_odd = 0;
};
// A grid axis's FFT length: next_smooth_even(n), or where a cost is set the even 2,3,5,7-smooth m of at most
// 1/kFftLengthSlack more that costs least as m (1 + odd_prime k + twice_odd [m = 2 mod 4]), k the number of
// distinct odd primes dividing m (ties to the shorter).
constexpr long long kFftLengthSlack = 10;
long long fft_length(long long n, FftLengthCost cost);

// Throws SFFT_ERROR_INVALID_ARGUMENT unless tol is finite and within what the precision can reach.
void validate_tolerance(double tol, bool is_double);
// Throws SFFT_ERROR_INVALID_ARGUMENT for an upsampfac the kernel cannot use. Returns the value to use:
// 0 (ES, prolate: automatic, see choose_layout) becomes 2.25 for the Gaussian kernel.
double resolve_upsampfac(KernelKind kind, double upsampfac);

// Widest ES or prolate kernel make_kernel picks (wider ones run the CPU's generic-width loops).
constexpr int kMaxShapedWidth = 24;
// make_kernel sizes ES and prolate kernels so that max(2, dim) times the worst error of one stage (spreading or
// interpolation in one dimension) plus rounding is at most kWorstCaseTolerances[dim - 1] tol. Of the 2 dim
// stage errors, measured with 1 to 8 points (tests/nufft3_test.cpp, FewSources...), the worst outputs add up
// like 2 in 1-d and 2-d and like 3 in 3-d: the errors peak at different offsets and frequencies and rarely
// align. The budgets set where the many-point error lands (the tol rule, issue 18): the relative l2 error of
// thousands of well-spread points is a fixed fraction of the worst case per dimension, and the budgets put it
// in [tol/10, tol] (AchievedErrorLandsInToleranceBand; the benchmark suite). With one budget of 7 for every
// dim it reached 1.4 tol in 2-d and 1.2 tol in 3-d at some tolerances.
constexpr double kWorstCaseTolerances[3] = {6, 4.5, 6};
// Above sigma = 2 the many-point error of ES is a larger fraction of its predicted worst case. At sigma = 3 the full
// budget reached 1.14 tol (1-D, 4000 uniform points, tol 1e-9) and 1.45 tol (2-D clusters, 1e-11), where sigma = 2
// reached 0.96 on the same uniform points, and 0.75 of it 1.48 tol on the suite's dense 3-D clusters (1e-12).
// With half the budget: at most 0.82 tol (sigma 2.5) and 0.62 (3) in double on uniform and clustered points, 1-D to
// 3-D, tol 1e-3 to 1e-11, and 0.95 / 0.69 in single (1e-2 to 1e-6). Sigma 2.5 still reached 1.06-1.22 tol on the
// dense 3-D clusters at 1e-7 and 1e-9 (its width there the same under any budget tried).
constexpr double kWideSigmaBudget = 0.5;
// The prolate kernel's many-point error is a larger fraction of its worst case than ES's (about 1.3x at widths
// 10-11 in double), so its budgets are this fraction of ES's.
constexpr double kProlateBudget = 0.75;
// Relative offset of the points' centre from 0 (to their half-width) below which make_layout centres them at 0.
constexpr double kCentreSnap = 0.02;
// Predicted double-precision rounding error (relative to the outputs) that may come on top of a kernel meeting
// tol: sigma = 2 predicts up to ~3e-12 in 3-d (measured there with few points: below 1e-12).
constexpr double kRoundingAllowance = 4e-12;
// Rounding of the kernel values (in units in the last place) and of the FFT (relative to the unit roundoff times
// the grid's dynamic range), both measured with few points at sigma = 1.25, where they dominate below 1e-8.
constexpr double kTapRounding = 200;
constexpr double kFftRounding = 0.25;

// upsampfac 0 means 2.0 here. Throws SFFT_ERROR_INVALID_ARGUMENT when no kernel reaches tol at upsampfac in dim.
KernelSpec make_kernel(KernelKind kind, double tol, double upsampfac, int dim, bool is_double);

// make_layout's SFFT_ERROR_OUT_OF_MEMORY: the grid does not fit the memory limit it was given, so retrying with
// the same limit cannot help.
class GridTooLarge : public Error {
 public:
  using Error::Error;
};

// lo/hi: per dimension min and max of the sources (x) and targets (s); all finite.
// bytes_per_cell is what one FFT cell costs across the batch; the layout is rejected with
// GridTooLarge (SFFT_ERROR_OUT_OF_MEMORY, naming the bytes needed) when it cannot fit in `memory_limit` bytes.
// length_cost: fft_length's, for every axis (the smallest lengths where the longer grid would not fit).
Layout make_layout(int dim, const KernelSpec &kernel, double upsampfac, const double *x_lo, const double *x_hi,
                   const double *s_lo, const double *s_hi, double bytes_per_cell, double memory_limit,
                   FftLengthCost length_cost = {});

// Pruned grid FFTs: the CUDA backend takes them where they do at most kPruneAtMost of the full transform's work
// (sigma = 1.25 skips about 20 %, which strided line batches may not repay); the CPU's transform is the same
// passes either way and skips whatever lines it can. Both round the lines kept at each end of an axis, and a
// band's start, to whole multiples of kPruneRound, so that new points of the same distribution, needing a few
// lines more, still take over the previous points' plans.
constexpr double kPruneAtMost = 0.75;
constexpr long long kPruneRound = 8;
constexpr long long round_up_to_prune_lines(long long v) { return (v + kPruneRound - 1) / kPruneRound * kPruneRound; }

// The lines of a 2-D or 3-D grid FFT that sources fill or targets within [s_lo, s_hi] read (the CPU backend
// transforms only those): sources fill the first and the last n1/2 indices of each dimension (rows); the targets
// read a band [band_lo, band_lo + band) of the last dimension about n2/2 (the deconvolution's alternating sign
// moved the spectrum there) and, in 3-D, the first and last `ends` indices of dimension 1. rows and ends are
// counts at each end of their axis, or the axis length (one block) where the two ends meet. Extents are rounded up
// to kPruneRound lines, so that new points of the same distribution keep the previous plans, and the band's start
// stays a multiple of it. 1-D: the whole line.
struct FftLines {
  bool pruned = false;              // some lines skipped
  long long rows[2] = {0, 0};       // source indices at each end of dimensions 0 and 1 (3-D)
  long long band_lo = 0, band = 0;  // the last dimension's indices [band_lo, band_lo + band)
  long long ends = 0;               // 3-D: dimension 1's indices read at each end of the axis
};
FftLines fft_lines(const Layout &L, const double *s_lo, const double *s_hi);
// Every line of the grid (SFFT_NUFFT3_FFT=full).
FftLines all_fft_lines(const Layout &L);
// The work of transforming f's lines, per transform: each line's length times its log2, summed over the passes
// (2-D: along dimension 1 on the source rows of dimension 0, then along dimension 0 on the band; 3-D: along
// dimension 2 on the lines whose dimensions 0 and 1 both hold sources, along dimension 1 on the source rows of
// dimension 0 crossing the band, along dimension 0 on the `ends` of dimension 1 crossing the band).
double fft_line_work(const Layout &L, const FftLines &f);
// The lines a count of FftLines (rows, ends) at dimension d stands for: both ends, or the whole axis.
inline long long fft_lines_at_both_ends(const Layout &L, int d, long long count) {
  return count >= L.axis[d].n2 ? count : 2 * count;
}

// Relative times of one backend's stages, in ns (only their ratios matter): spreading, per kernel tap of a
// source and transform; interpolation, per tap of a target (its weights) plus per tap and transform (the sums);
// the FFT grid (zeroing and transforms), per cell and transform, in single and in double precision;
// fft_odd_prime: fft_length's cost per distinct odd prime of a 1-D or 2-D grid's axis length (3-D grids take
// the next smooth length).
// widest_sigma: the largest of kAutoSigmas the backend takes.
// line_point_3d (0: none) and cell_3d price a 3-D grid's FFT instead of cell_*: per point and log2 of each line
// fft_lines keeps (fft_line_work: the CPU transforms only those), plus cell_3d per cell of the whole grid.
// fft_twice_odd_single: fft_length's cost of a 2-D or 3-D single-precision grid's axis length that is twice an odd
// number.
struct CostModel {
  double spread_tap;
  double interp_tap, interp_tap_transform;
  double cell_single, cell_double;
  double fft_odd_prime;
  double widest_sigma;
  double line_point_3d = 0, cell_3d = 0;
  double fft_twice_odd_single = 0;
};
// CPU: Horner-table loops on the 2-core development host (sigma = 1.25 beat 2 by 1.4-1.8x at 1e-6 and 1e-4 in
// 2-D, N = K = 1e6); one cost per tap of either side, as before the split. CUDA: refitted on the H200 from exec
// at both sigmas on the benchmark's 13 point sets (1-D to 3-D, ntransf 1 and 16, both precisions, tol 1e-2 to
// 1e-7): where targets far outnumber sources, or 16 transforms share each target's weights, the smaller grid
// wins (K >> N 2-D double 1e-5: 0.28 ms against 0.33 at sigma = 2; uniform 2-D ntransf 16 double 1e-3: 1.33
// against 1.64), which one cost per tap of either side missed. The refit picks the faster sigma within 8 % on
// every measured row (the previous constants: within 23 %).
// fft_odd_prime, CUDA: cuFFT on the H200 (in-place c2c, every even 7-smooth length, both precisions): 2-D n x n
// for n in [400, 4200] in double took about 24 ps a cell at powers of 2, 27 with one odd prime, 35 with two, 44
// with three; the cheapest length by this rule, within 10 % longer, made the transform a median 13 % faster
// there (1-D lengths in [5e5, 2.5e6]: 12 %), 20 % slower at worst. 3-D times follow no such pattern (the rule:
// median 0 %, 35 % slower at worst). CPU: FFTW (FFTW_ESTIMATE, 2 threads, development VM; 2-D n x n, n in
// [100, 1200], 1-D lengths in [5e4, 3e5]) shows no such pattern: the same rule's median was 0.94-1.01 of the
// smallest length's time, 0.3-0.4 at worst, so 0.
// line_point_3d, CPU (development VM, 2 threads, 2026-12-01): the pruned 3-D transform took 0.30 (single) / 0.47
// (double) ns per unit of fft_line_work at sigma 1.5 to 3, where its time per cell of the whole grid fell from 6
// to 2 ns as sigma grew (the 40 a cell overpriced the larger grids). 1.5 a unit and 2 a cell (against 0.6 a tap):
// refitted 2026-12-02 on the four 3-D point sets at every sigma of kAutoSigmas from 1.25 to 3, both precisions,
// the plans of a row timed in turn (VM: 0.28 / 0.42 ns a unit against 0.13-0.20 a tap; the H200 host: 0.28 / 0.44):
// the model's sigma within 1.16 of the fastest on all 44 rows, 1.011 in total (3 a unit: 1.27, 1.035 — it kept
// sigma 2 and W 7 at single 1e-5 where 2.5 and W 6 ran 8-10 % faster on the VM, no faster on the H200 host, and
// 1.75 at double 1e-7 where 2.5 ran 8-27 % faster); 1.3 a unit already takes 2.5 for uniform and sphere-shell points
// at single 1e-5, 13-16 % slower (docs/nufft3.md). 2-D grids keep 40 a cell: priced by lines they took sigma = 1.6
// over 1.4 at double 1e-7, 3-11 % slower (their spreading costs per kernel row, not per tap).
// fft_twice_odd_single, CPU: FFTW_ESTIMATE's plans of 16 contiguous single-precision lines (lengths 16 to 1200, the
// development VM and the H200 host) took 3-10 ns a point at lengths twice an odd number (4.7-10 at 18, 50, 90, 162,
// 270, 350, 450, 486, 810), against 1-4 at the multiples of 4 within 10 % above them (20, 56, 96, 168, 280, 360, 480,
// 500, 840); double precision showed no such step, nor did 1-D grids' longer lengths (docs/nufft3.md).
constexpr CostModel kCpuCost{0.6, 0.0, 0.6, 40.0, 40.0, 0.0, 3.0, 1.5, 2.0, 1.0};
constexpr CostModel kCudaCost{2.3, 0.6, 0.2, 8.0, 20.0, 0.2, 2.0};

// The sigmas upsampfac 0 (ES, prolate) chooses among. The kernel width is a whole number of cells, so at one
// sigma the achieved error falls in steps of 4x (sigma = 1.25) to 9x (sigma = 2) per cell; the sigmas between
// put their steps elsewhere, and the cheapest layout that meets tol then lands nearer tol. 2 comes first, the
// smaller ones next in decreasing order, then those above 2, which take narrower kernels on larger grids (at
// most CostModel::widest_sigma: the CPU's, whose spreading costs more than its FFTs where points cluster). The
// prolate kernel takes 2 or 1.25 only (choose_layout).
constexpr double kAutoSigmas[] = {2.0, 1.75, 1.6, 1.5, 1.4, 1.3, 1.25, 2.5, 3.0};
// Kernel designs are kept for this many most recently used sigmas: the automatic ones and two a caller chose.
constexpr std::size_t kDesignMemoSigmas = std::size(kAutoSigmas) + 2;

// Up to kOccupancySample of `total` sources, drawn at random (a fixed sequence), for source_occupancy. Random
// rather than every stride-th: in sources sorted by position, a cell's sources are neighbours, and a stride longer
// than their run would never see two of them.
struct SourceSample {
  std::vector<double> coord[3];
  std::size_t total = 0;
};
constexpr std::size_t kOccupancySample = 2048;
// The sample of the sources x[d][i] (i < N) that choose_layout takes: all of them up to kOccupancySample.
template <class Real>
SourceSample sample_sources(const Real *const *x, int dim, std::size_t N) {
  SourceSample sample;
  sample.total = N;
  const std::size_t count = N < kOccupancySample ? N : kOccupancySample;
  std::uint64_t state = 0x9e3779b97f4a7c15ull;
  for (std::size_t k = 0; k < count; ++k) {
    std::size_t i = k;
    if (N > kOccupancySample) {  // xorshift64*
      state ^= state >> 12, state ^= state << 25, state ^= state >> 27;
      i = static_cast<std::size_t>(state * 0x2545f4914f6cdd1dull % N);
    }
    for (int d = 0; d < dim; ++d) sample.coord[d].push_back(static_cast<double>(x[d][i]));
  }
  return sample;
}
// Estimated mean, over the sources, of the number of sources in a source's cell of L's source grid (spacing
// h1): 1 + (total - 1) / (count - 1) times the mean number of other sample points in a sample point's cell.
double source_occupancy(const Layout &L, const SourceSample &sample);

// Single precision: the many-point rounding error (relative to the outputs) that stays whatever the kernel's
// width: kFftRounding u (phihat(0) / phihat(band edge))^dim, the few-point term of `meets`, times
// max(1, kOccupancyRounding sqrt(occupancy)). A cell sums the terms of every source within the kernel's reach;
// their rounding errors add up like a random walk, so the noise relative to the cell grows like the square root
// of the sources per cell, and the deconvolution amplifies it like the FFT's. Fitted to the suite's dense 3-D
// clusters (4 blobs of 2.5e4 points; development VM, forced sigma, single 5e-5 to 2e-6): the error stopped
// falling at 3.9e-6 (sigma 2, W 7, 2.0e4 sources a cell) and 1.1e-5 (sigma 1.75, W 7, 2.5e4 a cell), 18.6 and 19
// times the few-point term: 0.13 and 0.12 times the square root.
constexpr double kOccupancyRounding = 0.13;
double single_rounding_floor(const KernelSpec &k, double sigma, int dim, double occupancy);
// Below tol 1e-4 (down to kOccupancyTolFloor) in single precision a sigma in [kOccupancySigmaFloor, 2) is taken only
// where single_rounding_floor is at most kSingleRoundingShare tol (the kernel's own error takes the rest); smaller ones
// not at all: at sigma 1.25 and 1.4 the 1-D suite points' errors passed tol (1.1-3.3 tol at 1e-5 to 2e-6, occupancy
// 2.5) where this floor was below tol / 2, so something other than the cells' sums limits them there. Nor below
// 2e-6: at 1e-6 sigma 1.5 took the 1-D point sets to 1.23-1.28 tol (1.08-2.37 on 12 of the 13 in an earlier
// measurement), at 2e-6 and above at most 0.86.
constexpr double kSingleRoundingShare = 0.5;
constexpr double kOccupancySigmaFloor = 1.5;
constexpr double kOccupancyTolFloor = 2e-6;
// Whether the sources' occupancy decides about sigmas below 2 (choose_layout), i.e. whether a sample is worth taking.
inline bool occupancy_decides(bool is_double, double tol) {
  return !is_double && tol < 1e-4 && tol >= kOccupancyTolFloor;
}

// make_layout with the kernel for tol; upsampfac 0 (ES, prolate) picks the sigma of kAutoSigmas that `cost`
// predicts to be fastest for N sources, K targets and ntransf transforms, among those accurate at tol in the
// precision. `sample` (nullptr: none) lets single precision take sigmas below 2 from tol 2e-6 to 1e-4 where the
// sources' occupancy allows (single_rounding_floor); without one they are not taken there.
Layout choose_layout(int dim, KernelKind kind, double tol, double upsampfac, std::size_t N, std::size_t K, int ntransf,
                     const double *x_lo, const double *x_hi, const double *s_lo, const double *s_hi,
                     double bytes_per_cell, double memory_limit, const CostModel &cost, bool is_double,
                     const SourceSample *sample = nullptr);

// Gives L the FFT grid shape of `prev` (the plan's previous points) when it has the same dim, at least L's
// cells per dimension and at most `slack` times L's cells in all: a larger n2 only oversamples more (the band
// |s h1| <= pi / upsampfac and the source grid n1 stay), and the previous grid and FFT plan can then be taken
// over instead of made anew. Returns whether L changed to it.
bool adopt_grid_shape(Layout &L, const Layout &prev, double slack);

// The automatic maxbatchsize's most transforms per pass. H200, ntransf 16, N = K = 2.5e5 uniform 2-D and 1e5
// clustered 3-D, double tol 1e-3 to 1e-12 and single 1e-2 to 1e-5 (benchmarks/RESULTS.md): passes of 8 took
// 1.00-1.07x the time of one pass of 16 in single precision and 2-D double, 0.86-1.03x in 3-D double, holding
// 37-60 % of its memory (uniform 2-D double 1e-6: 2.11 ms and 356 MiB against 2.04 ms and 680 MiB); passes of
// 4, 2 or 1 up to 2.8x the time (1 a pass, 2-D double 1e-12), but for 3-D double at 1e-9 and 1e-12 (0.87-1.0x).
// The CPU (2 threads, development VM, a tenth of the points, median of 9; single 1e-3 and 1e-5, double 1e-3, 1e-6
// and 1e-9): passes of 8 at 0.88-1.04x the time of one pass, 4 at 0.83-1.13x.
constexpr int kAutoTransformsPerPass = 8;

// Transforms per pass of exec (the grids an engine holds): max_batch where set (at most ntransf); else at most
// kAutoTransformsPerPass, and where only `grids_that_fit` grids fit the memory at most that many (at least 1),
// in the fewest passes, of sizes as equal as they come (the last pass the short one).
int transforms_per_pass(int ntransf, int max_batch, double grids_that_fit);

// An engine's layout and transforms per pass (*batch): layout_within(memory_limit, grids) is its choose_layout
// for `grids` grids at once. Passes of transforms_per_pass where their grids fit; otherwise, with max_batch 0
// (automatic), as many grids as fit in half the memory (the rest left to the points, the FFT plans and the
// caller), grid_bytes_per_cell being what one more grid costs. GridTooLarge where even one grid does not fit.
template <class LayoutWithin>
Layout layout_for_passes(int ntransf, int max_batch, double memory_limit, double grid_bytes_per_cell,
                         LayoutWithin &&layout_within, int *batch) {
  *batch = transforms_per_pass(ntransf, max_batch, kAutoTransformsPerPass);
  try {
    return layout_within(memory_limit, *batch);
  } catch (const GridTooLarge &) {
    if (max_batch != 0 || *batch == 1) throw;
  }
  const Layout one = layout_within(memory_limit, 1);
  *batch =
      transforms_per_pass(ntransf, 0, memory_limit / (2 * static_cast<double>(one.n2_total) * grid_bytes_per_cell));
  return layout_within(memory_limit, *batch);
}

// Absolute error allowed in each kernel value (CPU polynomial tables) so that the 2 dim stages together add at
// most tol: an error d in every tap of one stage changes its result by up to width d / phihat(pi / upsampfac),
// relative (the deconvolution divides by phihat, smallest at the band's edge).
double tap_tolerance(const Layout &L, double tol);

// ES and prolate kernel designs make_kernel keeps for reuse; bounded (a few sigmas' worth, kMaxShapedWidth
// designs of each kind each).
std::size_t design_memo_size();

// The Chebyshev fit of phihat over the band |w| <= pi / upsampfac that targets and grid cells use, with the
// fewest terms (at most kMaxFourierTerms) whose relative error against the quadrature is below max_error; terms =
// 0 (the quadrature) for the Gaussian kernel or where no fit is that accurate. fourier_fit_error(tol) is the
// bound plans use: a thousandth of tol (every output is divided by phihat at 2 dim points), never below
// kFourierFitError. The quadrature's own rounding is 2e-15 to 1e-14 relative (its 2 width + 8 terms), so the fit
// converges to that level at 12 to 48 terms and kFourierFitError sits just above it; a bound of 2e-14 at every
// tol missed at W = 12, sigma = 1.25 (3.0e-14 at 48 terms), and the quadrature then took setpts from 15 to 65 ms
// (2-D double, 1e5 targets, tol 1e-6 to 3e-8).
constexpr double kFourierFitError = 2e-14;
double fourier_fit_error(double tol);
FourierFit fit_fourier(const KernelSpec &k, double upsampfac, double max_error);

// acc[i] += log phihat(w[i]) for i < m (m <= kLogFourierBlock): the fit's Clenshaw recurrences of a block run side
// by side (one recurrence is a chain of dependent multiply-adds, latency-bound target by target), and a caller
// that multiplies the factors of several dimensions takes one exp of the sum. Outside the fit (the Gaussian's
// closed form, the quadrature beyond the fitted band) element by element.
constexpr std::size_t kLogFourierBlock = 16;
void add_log_fourier(const KernelSpec &k, const FourierFit &fit, const double *w, std::size_t m, double *acc);

// 1 / phihat(2 pi c / n2) for c in [-n1/2, n1/2): the grid deconvolution of one dimension.
void grid_correction(const KernelSpec &k, const FourierFit &fit, const DimLayout &a, double *out, int threads);

}  // namespace sfft::nufft3
