// SPDX-License-Identifier: Apache-2.0
// memcpy for the runs of odd rows: long runs whose source and destination differ in alignment.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace sfft {

// glibc's memcpy moves runs from its `rep movsb` threshold (2 KiB at the lowest, more with wider vectors) up to
// its non-temporal threshold with `rep movsb`, which ran at about a third of a copy where source and destination
// differ in their alignment within a cache line, as the runs of odd rows do (2-core AMD EPYC VM, glibc 2.36,
// 2026-12-04: fftshift of 3x(2^23+1) float64 in place 27 ms, 12 ms with `rep movsb` tuned off). Such runs are
// copied here in 16-byte vectors, the destination aligned; the rest go to memcpy, whose wider vectors win on
// shorter runs. Source and destination must not overlap.
inline void copy_bytes(void *to, const void *from, std::size_t n) {
  auto *dst = static_cast<unsigned char *>(to);
  const auto *src = static_cast<const unsigned char *>(from);
#if defined(__x86_64__)
  constexpr std::size_t kRepMovsbMinBytes = 2048;
  if (n >= kRepMovsbMinBytes &&
      (reinterpret_cast<std::uintptr_t>(dst) - reinterpret_cast<std::uintptr_t>(src)) % 64 != 0) {
    const auto load = [&](std::size_t at) { return _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + at)); };
    _mm_storeu_si128(reinterpret_cast<__m128i *>(dst), load(0));
    std::size_t at = 16 - reinterpret_cast<std::uintptr_t>(dst) % 16;  // the first aligned destination vector
    for (; at + 64 <= n; at += 64) {
      const __m128i a = load(at), b = load(at + 16), c = load(at + 32), d = load(at + 48);
      auto *out = reinterpret_cast<__m128i *>(dst + at);
      _mm_store_si128(out, a);
      _mm_store_si128(out + 1, b);
      _mm_store_si128(out + 2, c);
      _mm_store_si128(out + 3, d);
    }
    for (; at + 16 <= n; at += 16) _mm_store_si128(reinterpret_cast<__m128i *>(dst + at), load(at));
    _mm_storeu_si128(reinterpret_cast<__m128i *>(dst + n - 16), load(n - 16));
    return;
  }
#endif
  std::memcpy(dst, src, n);
}

}  // namespace sfft
