// SPDX-License-Identifier: Apache-2.0
// The sparse-input 2-D FFT's CUDA seam (see common/cuda_plugin.hpp): compiled into the plugin it
// registers the CUDA entries, compiled into libsfft it forwards to them.
#include "common/cuda_plugin.hpp"
#include "spfft2d/plan.hpp"

namespace sfft::spfft2d {

using MakeEngine = std::unique_ptr<Engine> (*)(std::shared_ptr<const SparseColumns>, const Options &);

#if SFFT_CUDA_PLUGIN_SIDE
SFFT_CUDA_PLUGIN_ENTRY("spfft2d::make_cuda_engine<float>", static_cast<MakeEngine>(&make_cuda_engine<float>));
SFFT_CUDA_PLUGIN_ENTRY("spfft2d::make_cuda_engine<double>", static_cast<MakeEngine>(&make_cuda_engine<double>));
SFFT_CUDA_PLUGIN_ENTRY("spfft2d::copy_to_host", &copy_to_host);
#else
template <class Real>
std::unique_ptr<Engine> make_cuda_engine(std::shared_ptr<const SparseColumns> matrix, const Options &opts) {
  const char *name =
      sizeof(Real) == sizeof(double) ? "spfft2d::make_cuda_engine<double>" : "spfft2d::make_cuda_engine<float>";
  return cuda_plugin::entry<MakeEngine>(name)(std::move(matrix), opts);
}
template std::unique_ptr<Engine> make_cuda_engine<float>(std::shared_ptr<const SparseColumns>, const Options &);
template std::unique_ptr<Engine> make_cuda_engine<double>(std::shared_ptr<const SparseColumns>, const Options &);

void copy_to_host(void *dst, const void *src, std::size_t bytes) {
  cuda_plugin::entry<decltype(&copy_to_host)>("spfft2d::copy_to_host")(dst, src, bytes);
}
#endif

}  // namespace sfft::spfft2d
