// SPDX-License-Identifier: Apache-2.0
// The R2C of a real row with few nonzeros (PRUNED's FFT rows on the CPU), without a dense transform's first
// stages: the row's n reals are n / 2 complex values z[m] = x[2m] + i x[2m + 1], split as m = m1 + P m2
// (M = n / 2 = P x Q, P a power of two). Each nonzero adds one ramp of Q values, e^{-2 pi i m k1 / M} for
// k1 < Q, to row m1 of a P x Q table T (the Q-point DFTs of the decimated sequences, their twiddles included);
// FFTW's P-point DFTs down T's columns give Z[k1 + Q k2] in natural order, and the R2C's split of Z writes the
// n / 2 + 1 outputs. docs/spfft2d.md ("Sparse FFT rows on the CPU").
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>

#include "common/fftw_plan.hpp"
#include "common/host_buffer.hpp"

namespace sfft::spfft2d {

template <class Real>
class SparseRowR2c {
 public:
  using Complex = std::complex<Real>;

  SparseRowR2c() = default;
  // Rows of n points for up to `threads` threads at once; empty where !fits(n).
  SparseRowR2c(uint64_t n, int threads);

  // Whether rows of n points take this route: n even, n / 2 with a power-of-two factor P >= 8 and P x Q, Q >= 8.
  static bool fits(uint64_t n);
  explicit operator bool() const noexcept { return m_ > 0; }
  // Whether a row of `nonzeros` costs less this way than by FFTW's dense R2C: the ramps (nonzeros x Q terms)
  // against the P-point DFTs (M log2 P), measured on the development VM (docs/spfft2d.md).
  bool prefers(int64_t nonzeros) const noexcept;
  std::size_t buffer_bytes() const noexcept;

  // out[k] = sum_e w_e e^{-2 pi i col_e k / n}, k = 0 .. n / 2 (out need not be aligned): the row's nonzeros in
  // columns col[0 .. count), weights weight (nullptr: all 1), on thread `thread`'s buffers.
  void transform(const int32_t *col, const Real *weight, int64_t count, Complex *out, int thread) const;

 private:
  uint64_t m_ = 0, p_ = 0, q_ = 0;  // M = n / 2 = P x Q
  std::size_t slot_ = 0;            // a thread's table T, then its Z: slot_ values each
  HostBuffer<Complex> ramp_;        // e^{-2 pi i m / M}, m < M
  HostBuffer<Complex> split_;       // e^{-2 pi i k / n}, k < M
  HostBuffer<Complex> work_;        // 2 slot_ values per thread
  fftw::Plan<Real> columns_;        // T -> Z: P-point DFTs down the Q columns
};

}  // namespace sfft::spfft2d
