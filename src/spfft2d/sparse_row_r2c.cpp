// SPDX-License-Identifier: Apache-2.0
#include "spfft2d/sparse_row_r2c.hpp"

#include <algorithm>
#include <cstring>

#include "common/checked.hpp"
#include "spfft2d/plan.hpp"

namespace sfft::spfft2d {
namespace {

constexpr uint64_t kMinRows = 2, kMinColumns = 8;  // P, Q
constexpr int kRampBlock = 32;

// The largest power of two that divides m and is at most sqrt(m).
uint64_t power_of_two_factor(uint64_t m) {
  uint64_t p = 1;
  while (m % (2 * p) == 0 && (2 * p) * (2 * p) <= m) p *= 2;
  return p;
}

}  // namespace

template <class Real>
bool SparseRowR2c<Real>::fits(uint64_t n) {
  if (n % 2 != 0 || n / 2 > (uint64_t{1} << 30)) return false;
  const uint64_t m = n / 2, p = power_of_two_factor(m);
  return p >= kMinRows && m / p >= kMinColumns;
}

template <class Real>
SparseRowR2c<Real>::SparseRowR2c(uint64_t n, int threads) {
  if (!fits(n)) return;
  const uint64_t m = n / 2, p = power_of_two_factor(m), q = m / p;
  slot_ = aligned_slot<Complex>(static_cast<std::size_t>(m));
  work_.allocate(checked_mul(2 * slot_, static_cast<std::size_t>(std::max(1, threads)), "sparse row FFT buffers"));
  ramp_.allocate(static_cast<std::size_t>(m));
  split_.allocate(static_cast<std::size_t>(m));
  // split_[k] = u^k, u = e^{-2 pi i / n} (fits: 4 divides n): twiddle() up to n / 8, then exactly by the symmetries
  // u^(n/4 - k) = -i conj(u^k) and u^(k + n/4) = -i u^k; ramp_[k] = u^(2k) = split_[2k], or -split_[2k - m] past m
  // (u^m = -1). (Every entry by twiddle()'s long-double sine and cosine had added 1.7-3.7 ms to plans at 16384-32768
  // columns.)
  const uint64_t quarter = n / 4, eighth = n % 8 == 0 ? n / 8 : quarter;
  for (uint64_t k = 0; k <= eighth && k < quarter; ++k) split_[k] = twiddle<Real>(k, n);
  for (uint64_t k = eighth + 1; k < quarter; ++k)
    split_[k] = Complex(-split_[quarter - k].imag(), -split_[quarter - k].real());
  for (uint64_t k = quarter; k < m; ++k) split_[k] = Complex(split_[k - quarter].imag(), -split_[k - quarter].real());
  for (uint64_t k = 0; k < m; ++k) ramp_[k] = 2 * k < m ? split_[2 * k] : -split_[2 * k - m];
  const auto P = static_cast<std::ptrdiff_t>(p), Q = static_cast<std::ptrdiff_t>(q);
  const fftw_iodim64 columns[1] = {{Q, 1, 1}};
  columns_ = fftw::Plan<Real>::strided({P, Q, Q}, 1, columns, work_.get(), work_.get() + slot_, FFTW_FORWARD,
                                       FFTW_ESTIMATE, 1);
  m_ = m;
  p_ = p;
  q_ = q;
}

template <class Real>
std::size_t SparseRowR2c<Real>::buffer_bytes() const noexcept {
  return (work_.size() + ramp_.size() + split_.size()) * sizeof(Complex);
}

template <class Real>
void SparseRowR2c<Real>::transform(const int32_t *col, const Real *weight, int64_t count, Complex *out,
                                   int thread) const {
  Complex *table = work_.get() + 2 * slot_ * static_cast<std::size_t>(thread), *z = table + slot_;
  std::memset(static_cast<void *>(table), 0, m_ * sizeof(Complex));
  const Complex *ramp = ramp_.get();
  // A ramp's terms e^{-2 pi i m k / M} come in blocks of kRampBlock: each block's first term (the anchor) from the
  // table, the block's terms as anchor x e^{-2 pi i m j / M}, j < kRampBlock (the steps, from the table once a
  // nonzero). Two roundings a term whatever Q is, and the inner loop has no gathers, so it vectorises; a term read
  // from the table at a stride had cost 11 us a nonzero at Q = 8219.
  alignas(64) Real steps[2 * kRampBlock], turned[2 * kRampBlock];  // steps interleaved; turned = i x steps
  for (int64_t e = 0; e < count; ++e) {
    const auto c = static_cast<uint64_t>(col[e]), m = c / 2;
    const Real w = weight != nullptr ? weight[e] : Real(1);
    Real *__restrict__ row = reinterpret_cast<Real *>(table + (m & (p_ - 1)) * q_);
    uint64_t phase = 0;
    for (int j = 0; j < kRampBlock; ++j) {
      steps[2 * j] = ramp[phase].real();
      steps[2 * j + 1] = ramp[phase].imag();
      turned[2 * j] = -ramp[phase].imag();
      turned[2 * j + 1] = ramp[phase].real();
      phase += m;
      if (phase >= m_) phase -= m_;
    }
    // x[c] is z[c / 2]'s real part (c even) or imaginary part (c odd): the ramp times w or i w.
    const uint64_t block_phase = phase;
    phase = 0;
    for (uint64_t k0 = 0; k0 < q_; k0 += kRampBlock) {
      const Complex anchor = ramp[phase];
      const Real ar = c % 2 == 0 ? w * anchor.real() : -w * anchor.imag();
      const Real ai = c % 2 == 0 ? w * anchor.imag() : w * anchor.real();
      const uint64_t reals = 2 * std::min<uint64_t>(kRampBlock, q_ - k0);
      Real *__restrict__ out_block = row + 2 * k0;
      for (uint64_t j = 0; j < reals; ++j) out_block[j] += ar * steps[j] + ai * turned[j];
      phase += block_phase;
      if (phase >= m_) phase -= m_;
    }
  }
  columns_.execute_dft(table, z);
  // X[k] = E + e^{-2 pi i k / n} O with E = (Z[k] + conj Z[M - k]) / 2, O = (Z[k] - conj Z[M - k]) / 2i: in reals,
  // the loop vectorises (std::complex's product would call __mulsc3).
  const Real *__restrict__ zr = reinterpret_cast<const Real *>(z);
  const Real *__restrict__ wr = reinterpret_cast<const Real *>(split_.get());
  Real *__restrict__ x = reinterpret_cast<Real *>(out);
  x[0] = zr[0] + zr[1];
  x[1] = 0;
  x[2 * m_] = zr[0] - zr[1];
  x[2 * m_ + 1] = 0;
  for (uint64_t k = 1; k < m_; ++k) {
    const uint64_t j = m_ - k;
    const Real ar = zr[2 * k], ai = zr[2 * k + 1], br = zr[2 * j], bi = -zr[2 * j + 1];
    const Real er = Real(0.5) * (ar + br), ei = Real(0.5) * (ai + bi);
    const Real orr = Real(0.5) * (ai - bi), oi = Real(-0.5) * (ar - br);
    x[2 * k] = er + wr[2 * k] * orr - wr[2 * k + 1] * oi;
    x[2 * k + 1] = ei + wr[2 * k] * oi + wr[2 * k + 1] * orr;
  }
}

template class SparseRowR2c<float>;
template class SparseRowR2c<double>;

}  // namespace sfft::spfft2d
