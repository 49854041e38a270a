// SPDX-License-Identifier: Apache-2.0
// Piecewise-polynomial form of a spreading kernel for the CPU path: tap i of a point whose first cell sits
// t in [0, 1) cells to its right of pos - half_width has weight phi(t - half_width + i) = P_i(2t - 1), with
// every P_i of one degree, so all taps come from one Horner recurrence vectorised over i.
#pragma once

#include <vector>

#include "nufft3/kernel.hpp"

namespace sfft::nufft3 {

struct HornerTable {
  int width = 0;
  int degree = 0;
  int stride = 0;             // taps per coefficient row (width rounded up to a SIMD multiple), zero padded
  std::vector<double> coeff;  // (degree + 1) x stride, row 0 = highest power
  double max_error = 0;       // measured max |P_i - phi| over the kernel's support, in the working precision
};

// Fits the kernel by Chebyshev interpolation on each cell, picking the lowest degree whose error evaluated in
// the working precision (`unit_roundoff`: 2^-53 or 2^-24) is below max(tap_tol (params.hpp: tap_tolerance),
// 8 unit_roundoff), and for the ES kernel's two edge taps below max(that, 4 e^-beta); the lowest-error fit up to
// degree 24 if none is.
HornerTable fit_horner(const KernelSpec &k, double tap_tol, double unit_roundoff, int stride_multiple);

}  // namespace sfft::nufft3
