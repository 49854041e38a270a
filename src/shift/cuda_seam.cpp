// SPDX-License-Identifier: Apache-2.0
// The shift family's CUDA seam (see common/cuda_plugin.hpp): compiled into the plugin it registers the
// CUDA entry, compiled into libsfft it forwards to it.
#include "common/cuda_plugin.hpp"
#include "shift/shift.hpp"

namespace sfft::shift {

#if SFFT_CUDA_PLUGIN_SIDE
SFFT_CUDA_PLUGIN_ENTRY("shift::run_cuda", &run_cuda);
#else
void run_cuda(const Layout &l, void *out, const void *in, const Options &opts, PointerKind out_kind,
              PointerKind in_kind) {
  static const auto run = cuda_plugin::entry<decltype(&run_cuda)>("shift::run_cuda");  // once: runs per call
  run(l, out, in, opts, out_kind, in_kind);
}
#endif

}  // namespace sfft::shift
