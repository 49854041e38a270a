// SPDX-License-Identifier: Apache-2.0
// The arithmetic of the CUDA backend's bucket FFTs (cuda/fold.cu's normalise_fft_kernel), shared verbatim with the
// host test that checks it: a forward, unnormalised B-point DFT (B a power of two) by self-sorting (Stockham)
// passes of radix 8 between two row buffers, the last pass radix 4 or 2 where log2 B is not a multiple of 3, so
// that the output is in natural order. A radix-R pass at stride s takes, for j = p s + q < B / R, the points
// j + r B / R (r < R) through an R-point DFT to q + s (R p + r), output r times twiddle[r p s] = exp(-2 pi i r p s
// / B). The buffers hold a padding slot after every 16 (fft_slot), so that the strided stores of the early passes
// fall into distinct shared-memory banks.
#pragma once

#include <cmath>
#include <vector>

#include "sparse/bucket_math.hpp"

namespace sfft::sparse {

SFFT_HD constexpr unsigned fft_slot(unsigned i) { return i + (i >> 4); }

template <class Real>
struct FftMath {
  using C = Cplx<Real>;
  static SFFT_HD C add(C a, C b) { return {a.re + b.re, a.im + b.im}; }
  static SFFT_HD C sub(C a, C b) { return {a.re - b.re, a.im - b.im}; }
  static SFFT_HD C times_minus_i(C a) { return {a.im, -a.re}; }
  static SFFT_HD C times(C a, C w) { return {a.re * w.re - a.im * w.im, a.re * w.im + a.im * w.re}; }
  // Forward 4-point DFT in place.
  static SFFT_HD void dft4(C &b0, C &b1, C &b2, C &b3) {
    const C s02 = add(b0, b2), d02 = sub(b0, b2), s13 = add(b1, b3), d13 = times_minus_i(sub(b1, b3));
    b0 = add(s02, s13);
    b1 = add(d02, d13);
    b2 = sub(s02, s13);
    b3 = sub(d02, d13);
  }
  // Forward 8-point DFT in place: two 4-point DFTs (even and odd points) and the radix-2 step.
  static SFFT_HD void dft8(C (&a)[8]) {
    dft4(a[0], a[2], a[4], a[6]);
    dft4(a[1], a[3], a[5], a[7]);
    const Real h = static_cast<Real>(0.70710678118654752440);
    const C o[4] = {a[1], times(a[3], {h, -h}), times_minus_i(a[5]), times(a[7], {-h, -h})};
    const C e[4] = {a[0], a[2], a[4], a[6]};
    SFFT_UNROLL
    for (int k = 0; k < 4; ++k) {
      a[k] = add(e[k], o[k]);
      a[k + 4] = sub(e[k], o[k]);
    }
  }
};

// Butterfly j < n / 8 of the radix-8 pass at stride 2^log_stride, from x into y (padded buffers).
template <class Real>
SFFT_HD void fft_radix8_butterfly(const Cplx<Real> *x, Cplx<Real> *y, unsigned n, unsigned stride, unsigned log_stride,
                                  unsigned j, const Cplx<Real> *__restrict__ twiddle) {
  using M = FftMath<Real>;
  const unsigned eighth = n / 8;
  Cplx<Real> a[8];
  SFFT_UNROLL
  for (unsigned r = 0; r < 8; ++r) a[r] = x[fft_slot(j + r * eighth)];
  M::dft8(a);
  const unsigned q = j & (stride - 1), p = j >> log_stride, out = q + (p << (log_stride + 3)), t = p * stride;
  y[fft_slot(out)] = a[0];
  SFFT_UNROLL
  for (unsigned r = 1; r < 8; ++r) y[fft_slot(out + r * stride)] = M::times(a[r], twiddle[r * t]);
}

// Butterfly j < stride of the last pass (length 4: stride n / 4; length 2: stride n / 2), p = 0: no twiddles.
template <class Real>
SFFT_HD void fft_last4_butterfly(const Cplx<Real> *x, Cplx<Real> *y, unsigned stride, unsigned j) {
  Cplx<Real> b0 = x[fft_slot(j)], b1 = x[fft_slot(j + stride)], b2 = x[fft_slot(j + 2 * stride)],
             b3 = x[fft_slot(j + 3 * stride)];
  FftMath<Real>::dft4(b0, b1, b2, b3);
  y[fft_slot(j)] = b0;
  y[fft_slot(j + stride)] = b1;
  y[fft_slot(j + 2 * stride)] = b2;
  y[fft_slot(j + 3 * stride)] = b3;
}
template <class Real>
SFFT_HD void fft_last2_butterfly(const Cplx<Real> *x, Cplx<Real> *y, unsigned stride, unsigned j) {
  const Cplx<Real> a = x[fft_slot(j)], b = x[fft_slot(j + stride)];
  y[fft_slot(j)] = FftMath<Real>::add(a, b);
  y[fft_slot(j + stride)] = FftMath<Real>::sub(a, b);
}

// Every pass of the transform of the n points in x (padded slots), y the second buffer: for_each(count, f) calls
// f(j) for every butterfly j < count of a pass (the kernel: its threads striding), barrier() ends a pass (the
// kernel: __syncthreads). Returns the buffer that holds the result.
template <class Real, class ForEach, class Barrier>
SFFT_HD Cplx<Real> *bucket_fft_passes(Cplx<Real> *x, Cplx<Real> *y, unsigned n, const Cplx<Real> *__restrict__ twiddle,
                                      ForEach for_each, Barrier barrier) {
  unsigned stride = 1, log_stride = 0, len = n;
  for (; len >= 8; len /= 8) {
    for_each(n / 8, [&](unsigned j) { fft_radix8_butterfly(x, y, n, stride, log_stride, j, twiddle); });
    barrier();
    Cplx<Real> *swap = x;
    x = y;
    y = swap;
    stride *= 8;
    log_stride += 3;
  }
  if (len == 4) {  // the last pass
    for_each(stride, [&](unsigned j) { fft_last4_butterfly(x, y, stride, j); });
    barrier();
    x = y;
  } else if (len == 2) {
    for_each(stride, [&](unsigned j) { fft_last2_butterfly(x, y, stride, j); });
    barrier();
    x = y;
  }
  return x;
}

// The twiddle table of a B-point transform: exp(-2 pi i t / B), t < B, computed in double.
template <class Real>
std::vector<Cplx<Real>> bucket_fft_twiddles(uint64_t buckets) {
  std::vector<Cplx<Real>> twiddles(buckets);
  for (uint64_t t = 0; t < buckets; ++t) {
    const double turn = 2 * M_PI * static_cast<double>(t) / static_cast<double>(buckets);
    twiddles[t] = {static_cast<Real>(std::cos(turn)), static_cast<Real>(-std::sin(turn))};
  }
  return twiddles;
}

}  // namespace sfft::sparse
