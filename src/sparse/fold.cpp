// SPDX-License-Identifier: Apache-2.0
// Reading the signal on the host: the window-fold of every hashing and the comb pre-pass's samples. Used
// by the CPU backend and, for host input, by the CUDA backend (which therefore links this unit too).
#include <algorithm>
#include <cmath>
#include <complex>

#include "common/error.hpp"
#include "common/process.hpp"
#include "sparse/plan.hpp"

namespace sfft::sparse {

namespace {

// The window-fold of every hashing over the samples [offset, offset + length) of the signal, x pointing at
// sample offset (kBlock); the whole signal otherwise. Returns whether every folded sum is finite.
template <class Real, bool kBlock>
bool fold_window(const Design &d, const std::complex<Real> *x, uint64_t offset, uint64_t length, std::complex<Real> *z,
                 int threads) {
  const Geometry &g = d.geom;
  const long hashings = static_cast<long>(d.total_hashings());
  const std::size_t buckets = g.buckets;
  bool finite = true;
  // Threads only pay off (and only survive oversubscribed machines) for enough taps.
  const bool parallel = static_cast<std::size_t>(hashings) * d.window.size() >= (std::size_t{1} << 18);
#pragma omp parallel for num_threads(usable_threads(threads)) schedule(dynamic, 1) reduction(&& : finite) if (parallel)
  for (long h = 0; h < hashings; ++h) {
    const int64_t half = d.half_taps_of(static_cast<std::size_t>(h));
    const double *window = d.window_of(static_cast<std::size_t>(h)).data();
    std::complex<Real> *zh = z + static_cast<std::size_t>(h) * buckets;
    std::fill(zh, zh + buckets, std::complex<Real>(0, 0));
    const uint64_t sigma = d.loops[static_cast<std::size_t>(d.loop_of(static_cast<std::size_t>(h)))].sigma;
    uint64_t index = tap_index(hashing_base(d, static_cast<std::size_t>(h)), sigma, -half, g);
    uint64_t residue = mod_b(buckets - mod_b(static_cast<uint64_t>(half), g), g);  // -half mod B
    for (int64_t t = -half; t <= half; ++t) {
      // Unsigned wrap-around: index < offset gives a huge difference, so one compare tests both ends.
      if (!kBlock || index - offset < length) zh[residue] += static_cast<Real>(window[t + half]) * x[index - offset];
      index = advance_index(index, sigma, g);
      residue = residue + 1 == buckets ? 0 : residue + 1;
    }
    for (std::size_t i = 0; i < buckets; ++i)
      finite = finite && std::isfinite(zh[i].real()) && std::isfinite(zh[i].imag());
  }
  return finite;
}

// Fails naming the first non-finite sample among those of [offset, offset + length) that the hashings read;
// returns when there is none.
template <class Real>
void require_finite_taps(const Design &d, const std::complex<Real> *x, uint64_t offset, uint64_t length) {
  for (std::size_t h = 0; h < d.total_hashings(); ++h) {
    const uint64_t base = hashing_base(d, h);
    const uint64_t sigma = d.loops[static_cast<std::size_t>(d.loop_of(h))].sigma;
    const int64_t half = d.half_taps_of(h);
    for (int64_t t = -half; t <= half; ++t) {
      const uint64_t i = tap_index(base, sigma, t, d.geom);
      if (i - offset >= length) continue;
      const std::complex<Real> v = x[i - offset];
      if (!std::isfinite(v.real()) || !std::isfinite(v.imag()))
        fail(SFFT_ERROR_INVALID_ARGUMENT, "x[", i, "] is not finite (", v.real(), ", ", v.imag(), ")");
    }
  }
}

}  // namespace

template <class Real>
void fold_hashings(const Design &d, const std::complex<Real> *x, std::complex<Real> *z, int threads) {
  if (fold_window<Real, false>(d, x, 0, d.geom.n, z, threads)) return;
  // Slow path, only on error.
  require_finite_taps(d, x, 0, d.geom.n);
  fail(SFFT_ERROR_INVALID_ARGUMENT, "x is too large: the windowed sums overflow ",
       sizeof(Real) == 4 ? "float" : "double");
}

template void fold_hashings<float>(const Design &, const std::complex<float> *, std::complex<float> *, int);
template void fold_hashings<double>(const Design &, const std::complex<double> *, std::complex<double> *, int);

template <class Real>
void fold_block(const Design &d, const std::complex<Real> *x, uint64_t offset, uint64_t length, std::complex<Real> *z,
                int threads) {
  fold_window<Real, true>(d, x, offset, length, z, threads);  // finiteness waits for the reduced sums
}

template <class Real>
void check_reduced_folds(const Design &d, const std::complex<Real> *x, uint64_t offset, uint64_t length,
                         const std::complex<Real> *z) {
  const std::size_t count = d.total_hashings() * d.geom.buckets;
  bool finite = true;
  for (std::size_t i = 0; i < count && finite; ++i) finite = std::isfinite(z[i].real()) && std::isfinite(z[i].imag());
  if (finite) return;
  require_finite_taps(d, x, offset, length);
  fail(SFFT_ERROR_INVALID_ARGUMENT, "the folded sums over all ranks are not finite: another rank's samples are ",
       "not finite, or x is too large (the windowed sums overflow ", sizeof(Real) == 4 ? "float" : "double", ")");
}

template void fold_block<float>(const Design &, const std::complex<float> *, uint64_t, uint64_t, std::complex<float> *,
                                int);
template void fold_block<double>(const Design &, const std::complex<double> *, uint64_t, uint64_t,
                                 std::complex<double> *, int);
template void check_reduced_folds<float>(const Design &, const std::complex<float> *, uint64_t, uint64_t,
                                         const std::complex<float> *);
template void check_reduced_folds<double>(const Design &, const std::complex<double> *, uint64_t, uint64_t,
                                          const std::complex<double> *);

template <class Real>
void gather_comb(const Design &d, const std::complex<Real> *x, std::complex<Real> *z) {
  const uint64_t width = d.comb_width, stride = d.comb_stride();
  for (int c = 0; c < d.comb_loops; ++c) {
    std::complex<Real> *zc = z + static_cast<std::size_t>(c) * width;
    uint64_t index = d.comb_offsets[static_cast<std::size_t>(c)];
    for (uint64_t j = 0; j < width; ++j) {
      const std::complex<Real> v = x[index];
      if (!std::isfinite(v.real()) || !std::isfinite(v.imag()))
        fail(SFFT_ERROR_INVALID_ARGUMENT, "x[", index, "] is not finite (", v.real(), ", ", v.imag(), ")");
      zc[j] = v;
      index = advance_index(index, stride, d.geom);
    }
  }
}

template void gather_comb<float>(const Design &, const std::complex<float> *, std::complex<float> *);
template void gather_comb<double>(const Design &, const std::complex<double> *, std::complex<double> *);

template <class Real>
void gather_comb_block(const Design &d, const std::complex<Real> *x, uint64_t offset, uint64_t length,
                       std::complex<Real> *z) {
  const uint64_t width = d.comb_width, stride = d.comb_stride();
  for (int c = 0; c < d.comb_loops; ++c) {
    std::complex<Real> *zc = z + static_cast<std::size_t>(c) * width;
    uint64_t index = d.comb_offsets[static_cast<std::size_t>(c)];
    for (uint64_t j = 0; j < width; ++j) {
      zc[j] = index - offset < length ? x[index - offset] : std::complex<Real>(0, 0);
      index = advance_index(index, stride, d.geom);
    }
  }
}

template <class Real>
void check_reduced_comb(const Design &d, const std::complex<Real> *z) {
  const uint64_t width = d.comb_width, stride = d.comb_stride();
  for (int c = 0; c < d.comb_loops; ++c) {
    const std::complex<Real> *zc = z + static_cast<std::size_t>(c) * width;
    uint64_t index = d.comb_offsets[static_cast<std::size_t>(c)];
    for (uint64_t j = 0; j < width; ++j) {
      const std::complex<Real> v = zc[j];
      if (!std::isfinite(v.real()) || !std::isfinite(v.imag()))
        fail(SFFT_ERROR_INVALID_ARGUMENT, "x[", index, "] is not finite (", v.real(), ", ", v.imag(), ")");
      index = advance_index(index, stride, d.geom);
    }
  }
}

template void gather_comb_block<float>(const Design &, const std::complex<float> *, uint64_t, uint64_t,
                                       std::complex<float> *);
template void gather_comb_block<double>(const Design &, const std::complex<double> *, uint64_t, uint64_t,
                                        std::complex<double> *);
template void check_reduced_comb<float>(const Design &, const std::complex<float> *);
template void check_reduced_comb<double>(const Design &, const std::complex<double> *);

}  // namespace sfft::sparse
