// SPDX-License-Identifier: Apache-2.0
// Pieces shared by the sparse FFT benchmarks (bench_sparse, bench_sparse_noise): planted spectra, the signal of a
// spectrum and the FFTW peer (CPU), status checks, GPU timing, device white noise.
#pragma once

#include <fftw3.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <random>
#include <thread>
#include <vector>

#include "bench_support.hpp"
#include "sfft/sfft.h"

#if SFFT_HAVE_CUDA
#include <cuda_runtime_api.h>
#include <curand.h>
#endif

namespace sparse_bench {

using cd = std::complex<double>;

struct Planted {
  std::vector<uint64_t> freqs;
  std::vector<cd> values;  // random phases; magnitudes 1, or log-uniform in [1, 10]
  double energy = 0;       // sum of |value|^2
};

// k distinct frequencies of [0, n), reproducible per seed.
inline Planted plant(uint64_t n, uint64_t k, bool log_uniform, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0, 1);
  std::map<uint64_t, bool> used;
  Planted p;
  while (p.freqs.size() < k) {
    const uint64_t f = rng() % n;
    if (used[f]) continue;
    used[f] = true;
    const double mag = log_uniform ? std::exp(unit(rng) * std::log(10.0)) : 1.0;
    p.freqs.push_back(f);
    p.values.push_back(std::polar(mag, 2 * M_PI * unit(rng)));
    p.energy += mag * mag;
  }
  return p;
}

// The signal whose forward DFT is `spectrum`: its inverse DFT (FFTW in double) over n.
template <class Real>
std::vector<std::complex<Real>> signal_of(std::vector<cd> spectrum) {
  const std::size_t n = spectrum.size();
  std::vector<cd> xd(n);
  fftw_plan inverse = fftw_plan_dft_1d(static_cast<int>(n), reinterpret_cast<fftw_complex *>(spectrum.data()),
                                       reinterpret_cast<fftw_complex *>(xd.data()), FFTW_BACKWARD, FFTW_ESTIMATE);
  fftw_execute(inverse);
  fftw_destroy_plan(inverse);
  std::vector<std::complex<Real>> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = std::complex<Real>(xd[i] / static_cast<double>(n));
  return x;
}

// FFTW's double and single precision APIs behind one name (the benchmarks link FFTW directly).
template <class Real>
struct Fftw {
  using complex = fftw_complex;
  using plan = fftw_plan;
  static constexpr auto plan_with_nthreads = fftw_plan_with_nthreads;
  static constexpr auto plan_dft_1d = fftw_plan_dft_1d;
  static constexpr auto execute_dft = fftw_execute_dft;
  static constexpr auto destroy_plan = fftw_destroy_plan;
};
template <>
struct Fftw<float> {
  using complex = fftwf_complex;
  using plan = fftwf_plan;
  static constexpr auto plan_with_nthreads = fftwf_plan_with_nthreads;
  static constexpr auto plan_dft_1d = fftwf_plan_dft_1d;
  static constexpr auto execute_dft = fftwf_execute_dft;
  static constexpr auto destroy_plan = fftwf_destroy_plan;
};

// The CPU peer: median time of threaded FFTW's forward DFT of x into full (FFTW_MEASURE, every hardware thread;
// the caller has run fftw_init_threads and fftwf_init_threads).
template <class Real>
double fftw_peer_time(std::vector<std::complex<Real>> &x, std::vector<std::complex<Real>> &full, int repeats) {
  using F = Fftw<Real>;
  using C = typename F::complex;
  F::plan_with_nthreads(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  std::vector<std::complex<Real>> scratch(x.size());
  typename F::plan fp = F::plan_dft_1d(static_cast<int>(x.size()), reinterpret_cast<C *>(scratch.data()),
                                       reinterpret_cast<C *>(full.data()), FFTW_FORWARD, FFTW_MEASURE);
  const double peer = bench::time_median(
      [&] { F::execute_dft(fp, reinterpret_cast<C *>(x.data()), reinterpret_cast<C *>(full.data())); }, repeats);
  F::destroy_plan(fp);
  return peer;
}

// True on success; else prints what failed and sfft's message.
inline bool check(sfft_status s, const char *what) {
  if (s == SFFT_SUCCESS) return true;
  std::printf("%s failed: %s: %s\n", what, sfft_status_string(s), sfft_last_error());
  return false;
}

#if SFFT_HAVE_CUDA
// Median wall time of fn() followed by a device synchronisation.
inline double gpu_time(const std::function<void()> &fn, int repeats) {
  return bench::time_median(
      [&] {
        fn();
        cudaDeviceSynchronize();
      },
      repeats);
}

// n complex values on the device (complex128 when dbl, else complex64) whose real and imaginary parts are
// independent N(0, sigma^2), zeros when sigma is 0: white noise of a spectrum. cuRAND Philox, reproducible per seed.
inline void device_white_noise(void *spectrum, uint64_t n, bool dbl, double sigma, uint64_t seed) {
  if (sigma == 0) {
    cudaMemset(spectrum, 0, n * (dbl ? sizeof(std::complex<double>) : sizeof(std::complex<float>)));
    return;
  }
  curandGenerator_t gen;
  curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_PHILOX4_32_10);
  curandSetPseudoRandomGeneratorSeed(gen, seed);
  if (dbl) {
    curandGenerateNormalDouble(gen, static_cast<double *>(spectrum), 2 * n, 0.0, sigma);
  } else {
    curandGenerateNormal(gen, static_cast<float *>(spectrum), 2 * n, 0.0f, static_cast<float>(sigma));
  }
  curandDestroyGenerator(gen);
}
#endif

}  // namespace sparse_bench
