// SPDX-License-Identifier: Apache-2.0
// FFT lengths the libraries transform by their own codelets and Cooley-Tukey steps alone.
#pragma once

#include <cstdint>

namespace sfft {

// No prime factor above `largest` (n > 0).
inline bool smooth(uint64_t n, uint64_t largest) {
  for (uint64_t p = 2; p <= largest && n > 1; ++p)
    while (n % p == 0) n /= p;
  return n == 1;
}

// Factors 2, 3, 5 and 7 only: lengths cuFFT and FFTW transform directly (others take Bluestein's or Rader's route).
inline bool seven_smooth(uint64_t n) { return smooth(n, 7); }

}  // namespace sfft
