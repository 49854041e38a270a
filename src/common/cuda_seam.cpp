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

PointerKind pointer_kind(const void *p) noexcept {
  if (p == nullptr || !cuda_plugin::available()) return PointerKind::Host;
  try {
    static const auto kind = cuda_plugin::entry<PointerKind (*)(const void *) noexcept>("common::pointer_kind");
    return kind(p);
  } catch (...) {
    return PointerKind::Host;
  }
}

int pointer_device(const void *p) noexcept {
  if (p == nullptr || !cuda_plugin::available()) return -1;
  try {
    static const auto device = cuda_plugin::entry<int (*)(const void *) noexcept>("common::pointer_device");
    return device(p);
  } catch (...) {
    return -1;
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
