// SPDX-License-Identifier: Apache-2.0
// Planted sparse spectra and the backend/precision cases of the sparse FFT's test programs.
#pragma once

#include <cmath>
#include <complex>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test_support.hpp"

namespace sfft_test {

using cd = std::complex<double>;

// A k-sparse spectrum: distinct random frequencies, magnitudes log-uniform in [1, dynamic_range], random
// phases; x = its inverse DFT (FFTW convention: X = forward DFT of x), plus complex Gaussian noise at
// `snr_db` (infinite = none). `truth` is FFTW's full forward transform of the final samples.
struct Signal {
  std::vector<cd> x;
  std::vector<cd> truth;
  std::vector<uint64_t> support;
};

inline Signal planted(uint64_t n, uint64_t k, uint64_t seed, double dynamic_range, double snr_db) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<cd> spectrum(n);
  Signal s;
  while (s.support.size() < k) {
    uint64_t f = rng() % n;
    if (spectrum[f] != cd(0, 0)) continue;
    double mag = std::exp(unit(rng) * std::log(dynamic_range));
    spectrum[f] = std::polar(mag, 2 * M_PI * unit(rng));
    s.support.push_back(f);
  }
  s.x = sfft_test::fftw_dft(spectrum, {static_cast<int>(n)}, +1);
  for (auto &v : s.x) v /= static_cast<double>(n);
  if (std::isfinite(snr_db)) {
    double power = 0;
    for (const auto &v : s.x) power += std::norm(v);
    double sigma = std::sqrt(power / static_cast<double>(n) / std::pow(10.0, snr_db / 10) / 2);
    std::normal_distribution<double> gauss(0.0, sigma);
    for (auto &v : s.x) v += cd(gauss(rng), gauss(rng));
  }
  s.truth = sfft_test::fftw_dft(s.x, {static_cast<int>(n)});
  return s;
}

// Where a test case runs: the CPU backend, or the CUDA backend given host or device pointers.
enum class Where { Cpu, CudaHost, CudaDevice };

struct Case {
  Where where;
  sfft_dtype dtype;
};

inline std::string case_name(const testing::TestParamInfo<Case> &info) {
  std::string w = info.param.where == Where::Cpu        ? "Cpu"
                  : info.param.where == Where::CudaHost ? "CudaHost"
                                                        : "CudaDevice";
  return w + (info.param.dtype == SFFT_COMPLEX128 ? "_c128" : "_c64");
}

}  // namespace sfft_test
