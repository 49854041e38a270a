// SPDX-License-Identifier: Apache-2.0
#include "common/options.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "common/dtype.hpp"
#include "common/error.hpp"
#include "common/process.hpp"
#include "common/versioned_struct.hpp"

namespace sfft {

sfft_options default_options() {
  sfft_options d;
  std::memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  d.backend = SFFT_BACKEND_AUTO;
  return d;
}

Options resolve_options(const sfft_options *opts) {
  Options out;
  if (opts != nullptr) {
    const sfft_options full = read_versioned(opts, offsetof(sfft_options, backend) + sizeof opts->backend,
                                             default_options(), "opts", "sfft_options_init");
    const int backend = enum_value(full.backend);
    require(backend >= SFFT_BACKEND_AUTO && backend <= SFFT_BACKEND_CUDA, "opts->backend = ", backend,
            " is not an sfft_backend");
    require(full.device >= 0, "opts->device = ", full.device, " is negative");
    require(full.threads >= 0, "opts->threads = ", full.threads, " is negative");
    out.backend = full.backend;
    out.device = full.device;
    out.stream = full.stream;
    out.threads = full.threads;
    out.seed = full.seed;
  }
  if (out.threads == 0) out.threads = hardware_threads();
  out.threads = std::min(out.threads, max_threads());
  return out;
}

}  // namespace sfft
