// SPDX-License-Identifier: Apache-2.0
// Which backend runs a call, and what kind of memory a pointer is.
#pragma once

#include <cstddef>
#include <initializer_list>

#include "common/options.hpp"

namespace sfft {

enum class PointerKind { Host, Device, Managed };
enum class Backend { Cpu, Cuda };

// Number of usable CUDA devices (0 without CUDA support, driver or GPU). Never throws.
int cuda_device_count() noexcept;

// Versions of the CUDA runtime, driver and cuFFT the CUDA backend runs on (0 where not loaded).
struct CudaVersions {
  int runtime = 0, driver = 0, cufft = 0;
};
CudaVersions cuda_versions() noexcept;

// What memory p is, from one runtime query: kind is Host for plain/pinned host memory (and always without CUDA
// support), Device or Managed otherwise; device is the CUDA device that owns p when p is device memory, -1 for
// host and managed memory (which every device reaches) and without CUDA support.
struct PointerInfo {
  PointerKind kind = PointerKind::Host;
  int device = -1;
};
PointerInfo pointer_info(const void *p) noexcept;

inline PointerKind pointer_kind(const void *p) noexcept { return pointer_info(p).kind; }
inline int pointer_device(const void *p) noexcept { return pointer_info(p).device; }

// Throws SFFT_ERROR_INVALID_ARGUMENT, naming the array, when one of `arrays` (NULLs are ignored) is device memory
// of a CUDA device other than `device`, the one the plan runs on: its kernels would fault on it, and a fault
// poisons the CUDA context of the whole process.
struct NamedArray {
  const void *p;
  const char *name;
};
void require_arrays_on_device(int device, std::initializer_list<NamedArray> arrays);

// The one backend rule of every family (sfft.h, "Backends"), applied by the call that fixes where the work runs
// (a shift call, sfft_create, nufft3_setpts, spfft2d_create*) to the arrays it receives (NULLs are ignored):
//  CPU  -> CPU; device-only arrays are refused (SFFT_ERROR_INVALID_ARGUMENT, naming `what`);
//  CUDA -> CUDA: SFFT_ERROR_UNSUPPORTED without CUDA support, SFFT_ERROR_NO_DEVICE without a usable opts.device;
//          device arrays of another device than opts.device are refused (require_arrays_on_device);
//  AUTO -> follows the memory: CUDA when any array is device or managed memory; a call that receives no arrays
//          takes CUDA when opts.device is a usable GPU; otherwise CPU.
// Each distinct array is queried once (pointer_info); `kinds`, when not NULL, receives the arrays' kinds in order
// (Host for NULL), so that the backend need not query them again. At most kMaxBackendArrays arrays.
constexpr std::size_t kMaxBackendArrays = 8;
Backend resolve_backend(const Options &opts, std::initializer_list<const void *> arrays, const char *what,
                        PointerKind *kinds = nullptr);

// Throws unless opts.device names a usable device (CUDA backend only): SFFT_ERROR_UNSUPPORTED without CUDA
// support, SFFT_ERROR_NO_DEVICE (naming what is missing) when the CUDA backend cannot load or finds no GPU.
void require_cuda_device(const Options &opts);

}  // namespace sfft
