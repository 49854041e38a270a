// SPDX-License-Identifier: Apache-2.0
// The type-3 NUFFT's CUDA seam (see common/cuda_plugin.hpp): compiled into the plugin it registers the
// CUDA entry, compiled into libsfft it forwards to it.
#include "common/cuda_plugin.hpp"
#include "nufft3/plan.hpp"

namespace sfft::nufft3 {

#if SFFT_CUDA_PLUGIN_SIDE
SFFT_CUDA_PLUGIN_ENTRY("nufft3::make_cuda_engine", &make_cuda_engine);
#else
std::unique_ptr<Engine> make_cuda_engine(const Config &c) {
  return cuda_plugin::entry<decltype(&make_cuda_engine)>("nufft3::make_cuda_engine")(c);
}
#endif

}  // namespace sfft::nufft3
