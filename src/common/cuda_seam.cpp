// SPDX-License-Identifier: Apache-2.0
// libsfft's side of the runtime queries: forwards to the CUDA plugin when it loads, answers "no CUDA"
// (no device, host memory) when it does not, so CPU-only hosts never need the CUDA libraries. Entries are
// looked up once (function-local statics): these run on every call.
#include "common/backend.hpp"
#include "common/cuda_plugin.hpp"

namespace sfft {

int cuda_device_count() noexcept {
  if (!cuda_plugin::available()) return 0;
  try {
    static const auto count = cuda_plugin::entry<int (*)() noexcept>("common::cuda_device_count");
    return count();
  } catch (...) {
    return 0;
  }
}

PointerInfo pointer_info(const void *p) noexcept {
  if (p == nullptr || !cuda_plugin::available()) return {};
  try {
    static const auto info = cuda_plugin::entry<PointerInfo (*)(const void *) noexcept>("common::pointer_info");
    return info(p);
  } catch (...) {
    return {};
  }
}

CudaVersions cuda_versions() noexcept {
  if (!cuda_plugin::available()) return {};
  try {
    return cuda_plugin::entry<CudaVersions (*)() noexcept>("common::cuda_versions")();
  } catch (...) {
    return {};
  }
}

}  // namespace sfft
