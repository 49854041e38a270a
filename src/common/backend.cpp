#include "common/backend.hpp"

#include "common/error.hpp"

#if SFFT_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace sfft {

int cuda_device_count() noexcept {
#if SFFT_HAVE_CUDA
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky "no driver/no device" error
    return 0;
  }
  return n;
#else
  return 0;
#endif
}

PointerKind pointer_kind(const void *p) noexcept {
#if SFFT_HAVE_CUDA
  if (p == nullptr || cuda_device_count() == 0) return PointerKind::Host;
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return PointerKind::Host;
  }
  switch (attr.type) {
    case cudaMemoryTypeDevice: return PointerKind::Device;
    case cudaMemoryTypeManaged: return PointerKind::Managed;
    default: return PointerKind::Host;
  }
#else
  (void)p;
  return PointerKind::Host;
#endif
}

void require_cuda_device(const Options &opts) {
#if SFFT_HAVE_CUDA
  int n = cuda_device_count();
  if (n == 0) fail(SFFT_ERROR_NO_DEVICE, "the CUDA backend was requested but no usable CUDA device was found");
  if (opts.device >= n)
    fail(SFFT_ERROR_NO_DEVICE, "opts->device = ", opts.device, " but only ", n, " CUDA device(s) are present");
#else
  (void)opts;
  fail(SFFT_ERROR_UNSUPPORTED, "this sfft was built without CUDA support (SFFT_ENABLE_CUDA=OFF)");
#endif
}

Backend choose_backend(const Options &opts, std::initializer_list<const void *> pointers, const char *what) {
  bool any_device_only = false;
  bool any_gpu_memory = false;
  for (const void *p : pointers) {
    PointerKind k = pointer_kind(p);
    any_device_only |= k == PointerKind::Device;
    any_gpu_memory |= k != PointerKind::Host;
  }
  switch (opts.backend) {
    case SFFT_BACKEND_CPU:
      require(!any_device_only, what, ": the CPU backend cannot access CUDA device memory");
      return Backend::Cpu;
    case SFFT_BACKEND_CUDA:
      require_cuda_device(opts);
      return Backend::Cuda;
    case SFFT_BACKEND_AUTO:
      break;
  }
  return any_gpu_memory ? Backend::Cuda : Backend::Cpu;
}

}  // namespace sfft
