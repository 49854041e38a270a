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
// Where a row of T takes kGroupedRowBytes or more, nonzeros sorted by T's row kRampChunk at a time, and up to
// kRampGroup ramps added in one pass over the row (shorter rows stay in L1, and sorting cost more than it saved:
// 1024 x 16384 and 2048 x 32768, 128 values a row, 1-4 % slower).
constexpr std::size_t kGroupedRowBytes = 16 * 1024;
constexpr int64_t kRampChunk = 64;
constexpr int kRampGroup = 4;

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define SFFT_X86_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define SFFT_X86_CLONES
#endif

// The largest power of two that divides m and is at most sqrt(m).
uint64_t power_of_two_factor(uint64_t m) {
  uint64_t p = 1;
  while (m % (2 * p) == 0 && (2 * p) * (2 * p) <= m) p *= 2;
  return p;
}

// One nonzero's ramp: z[m] = w (odd: i w), adding w e^{-2 pi i m k / M} (odd: times i) to T's row m mod P.
template <class Real>
struct RampSource {
  uint64_t m;
  bool odd;
  Real w;
};

// Adds the ramps of G nonzeros of one row of T (q values, interleaved reals). The terms come in blocks of
// kRampBlock: each block's first term (the anchor) from the table, the block's terms as anchor x e^{-2 pi i m j / M},
// j < kRampBlock (the steps, from the table once a nonzero). Two roundings a term however long the ramp, and the
// inner loop has no gathers, so it vectorises; G ramps at once read and write the row once. Built for AVX-512 and
// AVX2 as well where GCC picks the variant at load time. docs/spfft2d.md ("Sparse FFT rows on the CPU").
template <class Real, int G>
SFFT_X86_CLONES void add_ramps(Real *__restrict__ row, const std::complex<Real> *__restrict__ ramp, uint64_t q,
                               uint64_t M, const RampSource<Real> *source) {
  alignas(64) Real steps[G][2 * kRampBlock], turned[G][2 * kRampBlock];  // interleaved; turned = i x steps
  uint64_t phase[G], block_phase[G];
  for (int g = 0; g < G; ++g) {
    uint64_t at = 0;
    for (int j = 0; j < kRampBlock; ++j) {
      steps[g][2 * j] = ramp[at].real();
      steps[g][2 * j + 1] = ramp[at].imag();
      turned[g][2 * j] = -ramp[at].imag();
      turned[g][2 * j + 1] = ramp[at].real();
      at += source[g].m;
      if (at >= M) at -= M;
    }
    phase[g] = 0;
    block_phase[g] = at;
  }
  for (uint64_t k0 = 0; k0 < q; k0 += kRampBlock) {
    Real ar[G], ai[G];
    for (int g = 0; g < G; ++g) {
      const std::complex<Real> anchor = ramp[phase[g]];
      const Real w = source[g].w;
      ar[g] = source[g].odd ? -w * anchor.imag() : w * anchor.real();
      ai[g] = source[g].odd ? w * anchor.real() : w * anchor.imag();
      phase[g] += block_phase[g];
      if (phase[g] >= M) phase[g] -= M;
    }
    const uint64_t reals = 2 * std::min<uint64_t>(kRampBlock, q - k0);
    Real *__restrict__ out = row + 2 * k0;
    for (uint64_t j = 0; j < reals; ++j) {
      Real sum = out[j];
      for (int g = 0; g < G; ++g) sum += ar[g] * steps[g][j] + ai[g] * turned[g][j];
      out[j] = sum;
    }
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
      Real *row = reinterpret_cast<Real *>(table + t_row * q_);
      switch (g) {
        case 1:
          add_ramps<Real, 1>(row, ramp_.get(), q_, m_, group);
          break;
        case 2:
          add_ramps<Real, 2>(row, ramp_.get(), q_, m_, group);
          break;
        case 3:
          add_ramps<Real, 3>(row, ramp_.get(), q_, m_, group);
          break;
        default:
          add_ramps<Real, 4>(row, ramp_.get(), q_, m_, group);
          break;
      }
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
