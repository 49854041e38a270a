// SPDX-License-Identifier: Apache-2.0
// The CUDA backend is a plugin: libsfft_cuda.so.<major> holds every CUDA unit and is the only file that
// needs the CUDA runtime and cuFFT. libsfft loads it on first use (dlopen), so the CPU backend loads and
// runs on hosts without CUDA. The two libraries are built together from this tree: they share the
// internal C++ types, and the plugin is refused unless its version and entry-table layout match.
//
// Plugin side: each family's cuda_seam.cpp (compiled with SFFT_CUDA_PLUGIN_SIDE) names its entry points
// with SFFT_CUDA_PLUGIN_ENTRY. Library side: the same file defines each entry's internal function as a
// forward through cuda_plugin::entry. Host code the CUDA units call (designs, layouts) is compiled into both
// libraries; process-wide state is not: the plugin asks libsfft whether the process is a forked child.
#pragma once

#include <cstdint>

namespace sfft::cuda_plugin {

// Bumped whenever an entry's signature changes; checked at load together with the library version.
constexpr uint32_t kInterfaceVersion = 1;

// ---- plugin side
class Registration {
 public:
  Registration(const char *name, const void *function) noexcept;
};

#define SFFT_CUDA_PLUGIN_CAT2(a, b) a##b
#define SFFT_CUDA_PLUGIN_CAT(a, b) SFFT_CUDA_PLUGIN_CAT2(a, b)
// Registers `function` (a function pointer of the exact internal signature) under `name`.
#define SFFT_CUDA_PLUGIN_ENTRY(name, function)                                                     \
  static const ::sfft::cuda_plugin::Registration SFFT_CUDA_PLUGIN_CAT(sfft_cuda_entry_, __LINE__)( \
      name, reinterpret_cast<const void *>(function))

// ---- library side
// True when the plugin is loaded (first call loads it; thread-safe; never unloaded).
bool available() noexcept;
// Why the plugin is not available ("" when it is): built without CUDA, or the loader's message.
const char *unavailable_reason() noexcept;
// The entry `name`; throws SFFT_ERROR_UNSUPPORTED (built without CUDA) or SFFT_ERROR_NO_DEVICE (the plugin
// or the CUDA libraries it needs cannot be loaded) with the reason.
const void *lookup(const char *name);

template <class Function>
Function entry(const char *name) {
  return reinterpret_cast<Function>(const_cast<void *>(lookup(name)));
}

}  // namespace sfft::cuda_plugin
