// SPDX-License-Identifier: Apache-2.0
// Reference for the spfft2d fuzzers: the half-spectrum rows of a sparse matrix by the direct sum over its
// nonzeros in long double (exact integer phases), and the checks of one exec's rows against it.
#pragma once

#include <cfloat>
#include <map>
#include <utility>

#include "fuzz_support.hpp"

namespace sfft_fuzz {

// Merged nonzeros: (row, col) -> weight. Binary mode: every listed coordinate is 1.
using SparseMatrix = std::map<std::pair<uint64_t, uint64_t>, double>;

// spfft2d_create's overflow rule (sfft.h): a merged weight beyond the double range, or a sum of |weights| above
// 0.999 times the output type's largest value, is refused. 1: the matrix certainly passes, -1: it certainly
// fails, 0: its sum lies within rounding of the limit (the library sums in another order: either answer holds).
// The merged weights here are summed in input order, as the library merges repeats.
inline int output_range_verdict(const SparseMatrix &m, bool is_double) {
  const long double limit = 0.999L * (is_double ? DBL_MAX : FLT_MAX);
  long double mass = 0;
  for (const auto &e : m) {
    if (!std::isfinite(e.second)) return -1;
    mass += std::fabs(static_cast<long double>(e.second));
  }
  return mass < limit * (1 - 1e-9L) ? 1 : mass > limit * (1 + 1e-9L) ? -1 : 0;
}

// Y[u][v] by the direct sum over the nonzeros (exact integer phase fractions: rows, cols < 2^31).
inline std::complex<double> direct_element(const SparseMatrix &m, uint64_t rows, uint64_t cols, uint64_t u,
                                           uint64_t v) {
  const long double two_pi = 6.283185307179586476925286766559005768L;
  long double re = 0, im = 0;
  for (const auto &[rc, w] : m) {
    long double fr = static_cast<long double>((rc.first * u) % rows) / rows;
    long double fc = static_cast<long double>((rc.second * v) % cols) / cols;
    long double ph = -two_pi * (fr + fc);
    re += w * std::cos(ph);
    im += w * std::sin(ph);
  }
  return {static_cast<double>(re), static_cast<double>(im)};
}

// Checks `got` (rows [row0, row0 + nrows) of the half spectrum, nrows * (cols/2 + 1) elements of the dtype)
// against the direct sum; the error of an element may reach a few ulps of sum |w| per FFT stage. Large
// outputs are checked on an evenly strided subset of about 2^20 / (nnz + 1) elements.
inline void check_rows(const void *got, bool is_double, const SparseMatrix &m, uint64_t rows, uint64_t cols,
                       uint64_t row0, uint64_t nrows, const char *call) {
  const uint64_t half = cols / 2 + 1, total = nrows * half;
  const uint64_t budget = (uint64_t{1} << 20) / (m.size() + 1);
  const uint64_t stride = total > budget ? total / budget + 1 : 1;
  double mass = 0;
  for (const auto &e : m) mass += std::fabs(e.second);
  // Sums beyond the output type's range legitimately overflow to infinity.
  if (!(mass < (is_double ? 1e300 : 1e36))) return;
  const double bound = (is_double ? 1e-12 : 2e-5) * std::max(1.0, mass) * (1 + std::log2(static_cast<double>(cols)));
  for (uint64_t i = 0; i < total; i += stride) {
    std::complex<double> g = is_double ? static_cast<const std::complex<double> *>(got)[i]
                                       : std::complex<double>(static_cast<const std::complex<float> *>(got)[i]);
    const std::complex<double> want = direct_element(m, rows, cols, row0 + i / half, i % half);
    double err = std::abs(g - want);
    if (!(err <= bound))
      violation(std::string(call) + ": element " + std::to_string(i) + " of rows [" + std::to_string(row0) + ", +" +
                std::to_string(nrows) + ") of a " + std::to_string(rows) + " x " + std::to_string(cols) +
                " matrix is off by " + std::to_string(err) + " (bound " + std::to_string(bound) + ")");
  }
}

}  // namespace sfft_fuzz
