#include "common/options.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <thread>

#include "common/dtype.hpp"
#include "common/error.hpp"
#include "common/process.hpp"

namespace sfft {

void default_options(sfft_options *opts) {
  std::memset(opts, 0, sizeof *opts);
  opts->struct_size = sizeof *opts;
  opts->backend = SFFT_BACKEND_AUTO;
}

Options resolve_options(const sfft_options *opts) {
  Options out;
  if (opts != nullptr) {
    require(opts->struct_size >= offsetof(sfft_options, backend) + sizeof opts->backend,
            "opts->struct_size = ", opts->struct_size, " is too small; call sfft_options_init() first");
    // A caller compiled against an older header passes a smaller struct: read only what it has.
    sfft_options full;
    default_options(&full);
    std::size_t n = opts->struct_size < sizeof full ? opts->struct_size : sizeof full;
    std::memcpy(&full, opts, n);
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
  if (out.threads == 0) {
    unsigned hw = std::thread::hardware_concurrency();
    out.threads = hw == 0 ? 1 : static_cast<int>(hw);
  }
  out.threads = std::min(out.threads, max_threads());
  return out;
}

}  // namespace sfft
