// SPDX-License-Identifier: Apache-2.0
// The library's view of sfft_options: read only the fields the caller's struct_size covers.
#pragma once

#include <cstdint>

#include "sfft/sfft.h"

namespace sfft {

struct Options {
  sfft_backend backend = SFFT_BACKEND_AUTO;
  int device = 0;
  void *stream = nullptr;
  int threads = 0;  // resolved: in [1, max_threads()] after resolve_options
  uint64_t seed = 0;
};

sfft_options default_options();

// Copies the fields covered by opts->struct_size (NULL = defaults), validates them, resolves threads = 0 to
// the hardware thread count and caps threads at max_threads(). Throws SFFT_ERROR_INVALID_ARGUMENT on bad values.
Options resolve_options(const sfft_options *opts);

}  // namespace sfft
