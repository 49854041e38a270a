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

// Smallest even 2,3,5,7-smooth integer >= n.
long long next_smooth_even(long long n);

// Throws SFFT_ERROR_INVALID_ARGUMENT unless tol is finite and within what the precision can reach.
void validate_tolerance(double tol, bool is_double);
// Throws SFFT_ERROR_INVALID_ARGUMENT for an upsampfac the kernel cannot use. Returns the value to use:
// 0 (ES: automatic, see choose_layout) becomes 2.25 for the Gaussian kernel.
double resolve_upsampfac(KernelKind kind, double upsampfac);

// upsampfac 0 means 2.0 here.
KernelSpec make_kernel(KernelKind kind, double tol, double upsampfac);

// lo/hi: per dimension min and max of the sources (x) and targets (s); all finite.
// bytes_per_cell is what one FFT cell costs across the batch; the layout is rejected with
// SFFT_ERROR_OUT_OF_MEMORY (naming the bytes needed) when it cannot fit in `memory_limit` bytes.
Layout make_layout(int dim, const KernelSpec &kernel, double upsampfac, const double *x_lo, const double *x_hi,
                   const double *s_lo, const double *s_hi, double bytes_per_cell, double memory_limit);

// Time per kernel tap (one point, one grid cell, spreading or interpolation) and per FFT-grid cell of one
// backend, in ns; only their ratio matters.
struct CostModel {
  double per_tap;
  double per_cell;
};
// CPU: Horner-table loops on the 2-core development host (sigma = 1.25 beat 2 by 1.4-1.8x at 1e-6 and 1e-4 in
// 2-D, N = K = 1e6). CUDA: the H100 measurements the GPU path was tuned with.
constexpr CostModel kCpuCost{0.6, 40.0};
constexpr CostModel kCudaCost{2.3, 20.0};

// make_layout with the kernel for tol; upsampfac 0 (ES only) picks sigma = 2 or 1.25, whichever `cost`
// predicts to be faster for N sources and K targets, among those accurate at tol in the precision.
Layout choose_layout(int dim, KernelKind kind, double tol, double upsampfac, std::size_t N, std::size_t K,
                     const double *x_lo, const double *x_hi, const double *s_lo, const double *s_hi,
                     double bytes_per_cell, double memory_limit, const CostModel &cost, bool is_double);

// Physical host memory in bytes (an upper bound for a host workspace; allocation may still fail).
double host_memory_bytes();

// 1 / phihat(2 pi c / n2) for c in [-n1/2, n1/2): the grid deconvolution of one dimension.
void grid_correction(const KernelSpec &k, const DimLayout &a, double *out);

}  // namespace sfft::nufft3
