// SPDX-License-Identifier: Apache-2.0
#include "spfft2d/sparse_row_r2c.hpp"

#include <algorithm>
#include <cstring>

#include "common/checked.hpp"
#include "common/cpu_isa.hpp"
#include "spfft2d/plan.hpp"

namespace sfft::spfft2d {
namespace {

constexpr uint64_t kMinRows = 2, kMinColumns = 8;  // P, Q
// Where a row of T takes kGroupedRowBytes or more, nonzeros sorted by T's row kRampChunk at a time, and up to
// kRampGroup ramps added in one pass over the row (shorter rows stay in L1, and sorting cost more than it saved:
// 1024 x 16384 and 2048 x 32768, 128 values a row, 1-4 % slower).
constexpr std::size_t kGroupedRowBytes = 16 * 1024;
constexpr int64_t kRampChunk = 64;

// The largest power of two that divides m and is at most sqrt(m).
uint64_t power_of_two_factor(uint64_t m) {
  uint64_t p = 1;
  while (m % (2 * p) == 0 && (2 * p) * (2 * p) <= m) p *= 2;
  return p;
}

// The ramp loop of the widest instruction set built and supported here (SFFT_SPFFT2D_ISA=generic|avx2|avx512 in the
// environment caps it).
template <class Real>
RampAdders<Real> select_ramp_adders() {
  switch (cpu_isa("SFFT_SPFFT2D_ISA")) {
#if defined(SFFT_X86_VARIANTS)
    case CpuIsa::kAvx512:
      return ramps_avx512::adders<Real>();
    case CpuIsa::kAvx2:
      return ramps_avx2::adders<Real>();
#endif
    default:
      return ramps_generic::adders<Real>();
  }
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
  adders_ = select_ramp_adders<Real>();
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
  // The nonzeros a chunk at a time, each ramp into T's row m mod P. Where those rows pass L1 the chunk is sorted by
  // row first, so that up to kRampGroup ramps share a pass over a row; otherwise one ramp a pass, in column order.
  const bool grouped = q_ * sizeof(Complex) >= kGroupedRowBytes;
  const int group_limit = grouped ? kRampGroup : 1;
  for (int64_t e0 = 0; e0 < count; e0 += kRampChunk) {
    const auto n = static_cast<int>(std::min<int64_t>(kRampChunk, count - e0));
    uint64_t key[kRampChunk];  // T's row << 32 | index in the chunk
    for (int i = 0; i < n; ++i) key[i] = (static_cast<uint64_t>(col[e0 + i]) / 2 % p_) << 32 | static_cast<uint64_t>(i);
    if (grouped) std::sort(key, key + n);
    for (int i = 0; i < n;) {
      const uint64_t t_row = key[i] >> 32;
      RampSource<Real> group[kRampGroup];
      int g = 0;
      for (; g < group_limit && i < n && key[i] >> 32 == t_row; ++g, ++i) {
        const int64_t e = e0 + static_cast<int64_t>(key[i] & 0xffffffffu);
        const auto c = static_cast<uint64_t>(col[e]);
        group[g] = {c / 2, c % 2 != 0, weight != nullptr ? weight[e] : Real(1)};
      }
      adders_.add[g - 1](reinterpret_cast<Real *>(table + t_row * q_), reinterpret_cast<const Real *>(ramp_.get()), q_,
                         m_, group);
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
