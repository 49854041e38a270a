// SPDX-License-Identifier: Apache-2.0
// The plugin's side of the runtime queries (see cuda_seam.cpp for libsfft's).
#include <cuda_runtime_api.h>
#include <cufft.h>

#include "common/backend.hpp"
#include "common/cuda_plugin.hpp"

namespace sfft {

int cuda_device_count() noexcept {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky "no driver/no device" error
    return 0;
  }
  return n;
}

PointerInfo pointer_info(const void *p) noexcept {
  if (p == nullptr || cuda_device_count() == 0) return {};
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return {};
  }
  switch (attr.type) {
    case cudaMemoryTypeDevice:
      return {PointerKind::Device, attr.device};
    case cudaMemoryTypeManaged:
      return {PointerKind::Managed, -1};
    default:
      return {};
  }
}

CudaVersions cuda_versions() noexcept {
  CudaVersions v;
  if (cudaRuntimeGetVersion(&v.runtime) != cudaSuccess) v.runtime = 0;
  if (cudaDriverGetVersion(&v.driver) != cudaSuccess) v.driver = 0;
  if (cufftGetVersion(&v.cufft) != CUFFT_SUCCESS) v.cufft = 0;
  (void)cudaGetLastError();
  return v;
}

SFFT_CUDA_PLUGIN_ENTRY("common::cuda_device_count", &cuda_device_count);
SFFT_CUDA_PLUGIN_ENTRY("common::pointer_info", &pointer_info);
SFFT_CUDA_PLUGIN_ENTRY("common::cuda_versions", &cuda_versions);

}  // namespace sfft
