// SPDX-License-Identifier: Apache-2.0
// Overflow-checked size arithmetic for user-supplied extents.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

#include "common/error.hpp"

namespace sfft {

// a * b, or SFFT_ERROR_INVALID_ARGUMENT naming `what` when it does not fit in size_t.
inline std::size_t checked_mul(std::size_t a, std::size_t b, const char *what) {
  if (a != 0 && b > std::numeric_limits<std::size_t>::max() / a)
    fail(SFFT_ERROR_INVALID_ARGUMENT, what, " overflows size_t (", a, " * ", b, ")");
  return a * b;
}

inline std::size_t checked_add(std::size_t a, std::size_t b, const char *what) {
  if (b > std::numeric_limits<std::size_t>::max() - a)
    fail(SFFT_ERROR_INVALID_ARGUMENT, what, " overflows size_t (", a, " + ", b, ")");
  return a + b;
}

// Converts a user count to size_t, rejecting values the address space cannot index.
inline std::size_t to_size(uint64_t v, const char *what) {
  if (v > static_cast<uint64_t>(std::numeric_limits<std::ptrdiff_t>::max()))
    fail(SFFT_ERROR_INVALID_ARGUMENT, what, " = ", v, " is too large for this platform");
  return static_cast<std::size_t>(v);
}

}  // namespace sfft
