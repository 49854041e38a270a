// SPDX-License-Identifier: Apache-2.0
// Unit phase factors scale * exp(i sign phase) for the CPU engine's points: one at a time (unit_phase), and a
// block of sources at a time (unit_phases), whose single-precision loop vectorises.
#pragma once

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace sfft::nufft3::cpu {

// Single precision takes the phase modulo 2 pi in double and the sine and cosine of the remainder in float: a few
// times cheaper than double sincos of the whole phase, which was a fifth of nufft3_setpts with N >> K, and within
// a few float ulps of it. Beyond kReducedPhase that remainder keeps fewer digits than float (and from about 1e46
// radians it overflows float: the outputs were NaN for coordinates near float's largest value), so such phases
// take the double sine and cosine, whose reduction is exact.
constexpr double kReducedPhase = 0x1p40;

template <class Real>
std::complex<Real> unit_phase(double phase, double sign, double scale = 1) {
  if (phase == 0) return {static_cast<Real>(scale), 0};  // every centre at 0 (make_layout): no sine or cosine
  if constexpr (sizeof(Real) == 4) {
    if (!(std::fabs(phase) < kReducedPhase))
      return {static_cast<float>(scale * std::cos(phase)), static_cast<float>(scale * sign * std::sin(phase))};
    constexpr double kTwoPi = 2 * M_PI;
    const auto r = static_cast<float>(phase - kTwoPi * std::nearbyint(phase * (1 / kTwoPi)));
    const auto f = static_cast<float>(scale);
    return {f * std::cos(r), f * static_cast<float>(sign) * std::sin(r)};
  } else {
    return {scale * std::cos(phase), scale * sign * std::sin(phase)};
  }
}

// mask ? a : b for a mask of all ones or all zeros, on the bits.
inline float select_bits(std::uint32_t mask, float a, float b) {
  std::uint32_t ua, ub;
  std::memcpy(&ua, &a, sizeof ua);
  std::memcpy(&ub, &b, sizeof ub);
  const std::uint32_t bits = (ua & mask) | (ub & ~mask);
  float r;
  std::memcpy(&r, &bits, sizeof r);
  return r;
}

// Clang reports the `omp simd` loop below as not vectorised where it unrolls it instead (and under sanitizer
// instrumentation); either is harmless, as in cpu_kernels.inl.
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wpass-failed"
#endif
// out[i] = unit_phase<Real>(phase[i], sign) for i < n. Single precision: the same reduction to r in [-pi, pi],
// then a quarter period t = r - q pi/2 (|t| <= pi/4, pi/2 in two floats) and Taylor polynomials of sin t (to t^9)
// and cos t (to t^8), whose truncation stays below 2.5e-8, swapped and negated by the quadrant q without branches,
// so that the loop vectorises (the one-at-a-time sinf and cosf calls were a fifth of nufft3_setpts in 1-D with
// N >> K, development VM). Phases unit_phase gives the double sine and cosine (|phase| >= kReducedPhase, NaN)
// enter the loop as 0, so that nothing there overflows a float, and are redone by unit_phase after it.
template <class Real>
void unit_phases(const double *phase, std::size_t n, double sign, std::complex<Real> *out) {
  if constexpr (sizeof(Real) == 4) {
    constexpr std::size_t kChunk = 64;
    constexpr double kTwoPi = 2 * M_PI;
    constexpr float kTwoOverPi = static_cast<float>(2 / M_PI), kHalfPiHi = 1.5707963705062866211f,
                    kHalfPiLo = -4.3711388286737928865e-8f;
    const auto fsign = static_cast<float>(sign);
    for (std::size_t i0 = 0; i0 < n; i0 += kChunk) {
      const std::size_t m = std::min(kChunk, n - i0);
      double reducible[kChunk];  // a ?: inside the vector loop left a branch there, which then did not vectorise
      for (std::size_t i = 0; i < m; ++i) reducible[i] = std::fabs(phase[i0 + i]) < kReducedPhase ? phase[i0 + i] : 0;
      float *o = reinterpret_cast<float *>(out + i0);
#pragma omp simd
      for (std::size_t i = 0; i < m; ++i) {
        // Rounding to the nearest integer by adding and subtracting 1.5 2^52 (1.5 2^23): nearbyint is a library
        // call without SSE4.1, which keeps the loop from vectorising; the same result for |x| < 2^51 (2^22), and
        // the float sum's low bits are the quarter turns mod 4.
        const double p = reducible[i], turns = p * (1 / kTwoPi);
        const auto r = static_cast<float>(p - kTwoPi * ((turns + 0x1.8p52) - 0x1.8p52));
        const float shifted = r * kTwoOverPi + 0x1.8p23f, q = shifted - 0x1.8p23f;
        std::uint32_t shifted_bits;
        std::memcpy(&shifted_bits, &shifted, sizeof shifted_bits);
        const float t = (r - q * kHalfPiHi) - q * kHalfPiLo, t2 = t * t;
        const float s = t + t * t2 * (-1.f / 6 + t2 * (1.f / 120 + t2 * (-1.f / 5040 + t2 * (1.f / 362880))));
        const float c = 1 + t2 * (-0.5f + t2 * (1.f / 24 + t2 * (-1.f / 720 + t2 * (1.f / 40320))));
        // cos r, sin r by quadrant: (c, s), (-s, c), (-c, -s), (s, -c); the swap a bit select (see reducible).
        const std::uint32_t quadrant = shifted_bits & 3;
        const std::uint32_t swap = 0u - (quadrant & 1);
        const auto cos_sign = static_cast<float>(1 - static_cast<int>((quadrant + 1) & 2));
        const auto sin_sign = static_cast<float>(1 - static_cast<int>(quadrant & 2));
        o[2 * i] = cos_sign * select_bits(swap, s, c);
        o[2 * i + 1] = fsign * sin_sign * select_bits(swap, c, s);
      }
    }
    for (std::size_t i = 0; i < n; ++i)
      if (!(std::fabs(phase[i]) < kReducedPhase)) out[i] = unit_phase<Real>(phase[i], sign);
  } else {
    for (std::size_t i = 0; i < n; ++i) out[i] = unit_phase<Real>(phase[i], sign);
  }
}
#if defined(__clang__)
#pragma clang diagnostic pop
#endif

}  // namespace sfft::nufft3::cpu
