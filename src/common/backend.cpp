// SPDX-License-Identifier: Apache-2.0
#include "common/backend.hpp"

#include <algorithm>

#include "common/cuda_plugin.hpp"
#include "common/error.hpp"

namespace sfft {

void require_cuda_device(const Options &opts) {
  if (!cuda_plugin::available())
    fail(SFFT_HAVE_CUDA ? SFFT_ERROR_NO_DEVICE : SFFT_ERROR_UNSUPPORTED, cuda_plugin::unavailable_reason());
  int n = cuda_device_count();
  if (n == 0) fail(SFFT_ERROR_NO_DEVICE, "the CUDA backend was requested but no usable CUDA device was found");
  if (opts.device >= n)
    fail(SFFT_ERROR_NO_DEVICE, "opts->device = ", opts.device, " but only ", n, " CUDA device(s) are present");
}

namespace {

// `owner`: the device of an array (pointer_device), -1 for host or managed memory and NULL.
void require_owner(int owner, int device, const char *what, const char *name) {
  require(owner < 0 || owner == device, what, name, " is memory of CUDA device ", owner, " but the plan runs on device ",
          device, " (opts->device): pass arrays of that device, host memory or managed memory");
}

}  // namespace

void require_arrays_on_device(int device, std::initializer_list<NamedArray> arrays) {
  for (const NamedArray &a : arrays) require_owner(a.p == nullptr ? -1 : pointer_device(a.p), device, "", a.name);
}

Backend resolve_backend(const Options &opts, std::initializer_list<const void *> arrays, const char *what,
                        PointerKind *kinds) {
  if (arrays.size() > kMaxBackendArrays) fail(SFFT_ERROR_INTERNAL, what, ": more arrays than resolve_backend takes");
  PointerInfo info[kMaxBackendArrays];
  bool any_array = false;
  bool any_device_only = false;
  bool any_gpu_memory = false;
  std::size_t j = 0;
  for (const void *p : arrays) {
    if (p != nullptr) {
      const void *const *same = std::find(arrays.begin(), arrays.begin() + j, p);  // in place: asked once
      info[j] = same != arrays.begin() + j ? info[same - arrays.begin()] : pointer_info(p);
      any_array = true;
      any_device_only |= info[j].kind == PointerKind::Device;
      any_gpu_memory |= info[j].kind != PointerKind::Host;
    }
    if (kinds != nullptr) kinds[j] = info[j].kind;
    ++j;
  }
  auto on_plan_device = [&] {
    for (std::size_t a = 0; a < arrays.size(); ++a) require_owner(info[a].device, opts.device, what, ": an array");
    return Backend::Cuda;
  };
  switch (opts.backend) {
    case SFFT_BACKEND_CPU:
      require(!any_device_only, what, ": the CPU backend cannot access CUDA device memory");
      return Backend::Cpu;
    case SFFT_BACKEND_CUDA:
      require_cuda_device(opts);
      return on_plan_device();
    case SFFT_BACKEND_AUTO:
      break;
  }
  if (any_array) return any_gpu_memory ? on_plan_device() : Backend::Cpu;
  return cuda_device_count() > opts.device ? Backend::Cuda : Backend::Cpu;
}

}  // namespace sfft
