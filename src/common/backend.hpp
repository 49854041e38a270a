// SPDX-License-Identifier: Apache-2.0
// Which backend runs a call, and what kind of memory a pointer is.
#pragma once

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

// Host for plain/pinned host memory (and always without CUDA support), Device or Managed otherwise.
PointerKind pointer_kind(const void *p) noexcept;

// Resolves opts.backend against the pointers a call will touch (NULLs are ignored):
//  AUTO -> CUDA if any pointer is device/managed memory and a GPU is usable, else CPU;
//  CPU  -> rejects device-only pointers (SFFT_ERROR_INVALID_ARGUMENT);
//  CUDA -> SFFT_ERROR_UNSUPPORTED without CUDA support, SFFT_ERROR_NO_DEVICE without a usable device.
Backend choose_backend(const Options &opts, std::initializer_list<const void *> pointers, const char *what);

// Throws unless opts.device names a usable device (CUDA backend only): SFFT_ERROR_UNSUPPORTED without CUDA
// support, SFFT_ERROR_NO_DEVICE (naming what is missing) when the CUDA backend cannot load or finds no GPU.
void require_cuda_device(const Options &opts);

}  // namespace sfft
