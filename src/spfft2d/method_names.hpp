// SPDX-License-Identifier: Apache-2.0
// spfft2d_method's names as the programs around the library spell them: the CLI's --method and its summary,
// bench_spfft2d's rows and --method, the tests' messages (the Python package's `method` strings are the same).
// Header-only and not part of the public API (CMake target sfft_spfft2d_method_names).
#pragma once

#include <optional>
#include <string_view>

#include "sfft/sfft.h"

namespace sfft::spfft2d {

// Indexed by the enum's value.
inline constexpr const char *kMethodNames[] = {"auto", "direct", "direct_rows", "dense", "pruned"};
static_assert(sizeof kMethodNames / sizeof kMethodNames[0] == SPFFT2D_METHOD_PRUNED + 1);

inline const char *method_name(spfft2d_method m) {
  return m >= SPFFT2D_METHOD_AUTO && m <= SPFFT2D_METHOD_PRUNED ? kMethodNames[m] : "unknown";
}

// The method called `name`, if one is.
inline std::optional<spfft2d_method> method_named(std::string_view name) {
  for (int m = SPFFT2D_METHOD_AUTO; m <= SPFFT2D_METHOD_PRUNED; ++m)
    if (name == kMethodNames[m]) return static_cast<spfft2d_method>(m);
  return std::nullopt;
}

}  // namespace sfft::spfft2d
