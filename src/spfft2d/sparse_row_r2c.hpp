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
#include "spfft2d/sparse_row_ramps.hpp"

namespace sfft::spfft2d {

template <class Real>
class SparseRowR2c {
 public:
  using Complex = std::complex<Real>;

  SparseRowR2c() = default;
  // Rows of n points for up to `threads` threads at once; empty where !fits(n).
  SparseRowR2c(uint64_t n, int threads);

  // Whether rows of n points can take this route: n even, n / 2 = P x Q with P a power of two >= 2, Q >= 8.
  static bool fits(uint64_t n);
  explicit operator bool() const noexcept { return m_ > 0; }
  // Whether a row of `nonzeros` takes this route: at most set_limit's count (0 until set). Its time grows with the
  // nonzeros (a ramp of Q terms each), a dense R2C's does not; the plan times both (CpuEngine::choose_sparse_rows).
  bool prefers(int64_t nonzeros) const noexcept { return m_ > 0 && nonzeros <= limit_; }
  void set_limit(int64_t nonzeros) noexcept { limit_ = nonzeros; }
  std::size_t buffer_bytes() const noexcept;
  // The instruction set of the ramp loop this transform runs ("" where !*this).
  const char *isa() const noexcept { return adders_.isa != nullptr ? adders_.isa : ""; }

  // out[k] = sum_e w_e e^{-2 pi i col_e k / n}, k = 0 .. n / 2 (out need not be aligned): the row's nonzeros in
  // columns col[0 .. count), weights weight (nullptr: all 1), on thread `thread`'s buffers.
  void transform(const int32_t *col, const Real *weight, int64_t count, Complex *out, int thread) const;

 private:
  uint64_t m_ = 0, p_ = 0, q_ = 0;  // M = n / 2 = P x Q
  int64_t limit_ = 0;
  std::size_t slot_ = 0;            // a thread's table T, then its Z: slot_ values each
  HostBuffer<Complex> ramp_;        // e^{-2 pi i m / M}, m < M
  HostBuffer<Complex> split_;       // e^{-2 pi i k / n}, k < M
  HostBuffer<Complex> work_;        // 2 slot_ values per thread
  fftw::Plan<Real> columns_;        // T -> Z: P-point DFTs down the Q columns
  RampAdders<Real> adders_{};
};

}  // namespace sfft::spfft2d
