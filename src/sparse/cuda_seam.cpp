// SPDX-License-Identifier: Apache-2.0
// The sparse FFT's CUDA seam (see common/cuda_plugin.hpp): compiled into the plugin it registers the
// CUDA entry, compiled into libsfft it forwards to it.
#include "common/cuda_plugin.hpp"
#include "sparse/plan.hpp"

namespace sfft::sparse {

#if SFFT_CUDA_PLUGIN_SIDE
SFFT_CUDA_PLUGIN_ENTRY("sparse::make_cuda_engine", &make_cuda_engine);
#else
std::unique_ptr<Engine> make_cuda_engine(const Design &d, const Options &opts, bool double_precision,
                                         std::size_t batch) {
  return cuda_plugin::entry<decltype(&make_cuda_engine)>("sparse::make_cuda_engine")(d, opts, double_precision, batch);
}
#endif

}  // namespace sfft::sparse
