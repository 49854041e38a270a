// SPDX-License-Identifier: Apache-2.0
// Pieces shared by the sparse FFT benchmarks (bench_sparse, bench_sparse_noise): planted spectra, status checks,
// GPU timing.
#pragma once

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <random>
#include <vector>

#include "bench_support.hpp"
#include "sfft/sfft.h"

#if SFFT_HAVE_CUDA
#include <cuda_runtime_api.h>
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
#endif

}  // namespace sparse_bench
