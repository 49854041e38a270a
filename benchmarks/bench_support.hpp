// SPDX-License-Identifier: Apache-2.0
// Shared pieces of the benchmark drivers: medians, peak-memory probes, device info, table printing.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <random>
#include <string>
#include <vector>

#if SFFT_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace bench {

inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

// Wall time in seconds of one call of fn() (host clock; fn must synchronise itself if it launches device work).
template <class Fn>
double time_once(Fn &&fn) {
  const auto t0 = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Median wall time in seconds of `repeats` calls of fn() after `warmup` calls (time_once each).
template <class Fn>
double time_median(Fn &&fn, int repeats, int warmup = 2) {
  for (int i = 0; i < warmup; ++i) fn();
  std::vector<double> t;
  for (int i = 0; i < repeats; ++i) t.push_back(time_once(fn));
  return median(t);
}

// Median wall times in seconds of each of fns timed in turn, `repeats` rounds of one call each,
// so that a slow drift of the host (other load, clocks) reaches every one alike. Each timed call follows an
// untimed call of the same fn, so that it finds the caches as a run of repeated calls of it would. Each round
// takes the fns in a fresh shuffled order (fixed seed), so that no fn always runs right after the same other one:
// in a fixed order, and equally in one that only rotates (the cyclic order stays), whatever followed
// bench_spfft2d's peer, a 24 MiB FFTW call, ran 5-10 % slower at 2048^2 (AUTO against PRUNED, the same method).
template <class Fn>
std::vector<double> time_medians_in_turn(const std::vector<Fn> &fns, int repeats) {
  std::vector<std::vector<double>> t(fns.size());
  std::vector<std::size_t> order(fns.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::mt19937 shuffler(20261203u);
  for (int i = 0; i < repeats; ++i) {
    std::shuffle(order.begin(), order.end(), shuffler);
    for (const std::size_t f : order) {
      fns[f]();
      t[f].push_back(time_once(fns[f]));
    }
  }
  std::vector<double> m;
  for (const auto &v : t) m.push_back(median(v));
  return m;
}

// Peak resident set size of this process in bytes (VmHWM).
std::size_t host_peak_rss();

// Device name, or "no CUDA device".
std::string device_name();

// Device memory in use right now (total - free), bytes; 0 without CUDA.
std::size_t device_used_bytes();

// Today's date as YYYY-MM-DD (for RESULTS.md).
std::string today();

#if SFFT_HAVE_CUDA
// Exits with the call and CUDA's message when a setup call of a benchmark failed (nothing to measure then).
void require_cuda(cudaError_t status, const char *call);
#endif

}  // namespace bench

#if SFFT_HAVE_CUDA
#define BENCH_CUDA(x) ::bench::require_cuda((x), #x)
#endif
