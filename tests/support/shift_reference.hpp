// SPDX-License-Identifier: Apache-2.0
// NumPy's fftshift/ifftshift, element by element: the independent reference every shift test, the
// thread test and the shift fuzz target compare with. Header-only (the fuzz targets link no gtest).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace sfft_test {

inline std::size_t shift_dtype_bytes(int dtype) { return dtype == 1 ? 4 : dtype == 4 ? 16 : 8; }

// Along every shifted axis of extent n, element i lands at (i + n/2) % n (fftshift) or (i + (n+1)/2) % n
// (ifftshift); mask 0 shifts every axis.
inline std::vector<unsigned char> shift_reference(const std::vector<unsigned char> &in,
                                                  const std::vector<int64_t> &shape, uint32_t mask, std::size_t elem,
                                                  bool inverse) {
  std::vector<unsigned char> out(in.size());
  const std::size_t n = in.size() / elem;
  for (std::size_t flat = 0; flat < n; ++flat) {
    std::size_t rem = flat, dst = 0, stride = 1;
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
      auto e = static_cast<std::size_t>(shape[d]);
      std::size_t i = rem % e;
      rem /= e;
      bool shifted = mask == 0 || ((mask >> d) & 1u);
      std::size_t s = shifted ? (inverse ? (e + 1) / 2 : e / 2) : 0;
      dst += ((i + s) % e) * stride;
      stride *= e;
    }
    std::memcpy(&out[dst * elem], &in[flat * elem], elem);
  }
  return out;
}

}  // namespace sfft_test
