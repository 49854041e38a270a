// SPDX-License-Identifier: Apache-2.0
// Plugin side of the CUDA seam: the entry table the plugin's units fill at load, and the two C symbols
// libsfft looks up (the plugin's only exports).
#include <map>
#include <string>

#include "common/cuda_plugin.hpp"
#include "common/error.hpp"
#include "common/process.hpp"
#include "sfft/sfft.h"

namespace sfft::cuda_plugin {
namespace {

// libsfft's fork detection (common/process.cpp), handed over at load: the plugin may be loaded only in a
// forked child, where a copy of its own would not know about the fork.
bool (*library_in_forked_child)() = nullptr;

std::map<std::string, const void *> &entries() {
  static std::map<std::string, const void *> table;  // filled by static initialisers, then read-only
  return table;
}

// The entry `name`, or nullptr.
const void *find_entry(const char *name) {
  const auto &table = entries();
  auto it = table.find(name);
  return it == table.end() ? nullptr : it->second;
}

}  // namespace

Registration::Registration(const char *name, const void *function) noexcept {
  try {
    entries()[name] = function;
  } catch (...) {
    // Out of memory at load: the entry stays missing, and lookup reports it by name.
  }
}

// Inside the plugin the seam's library-side API resolves directly, so code shared by both libraries
// (common/backend.cpp) reads the same in each.
bool available() noexcept { return true; }

const char *unavailable_reason() noexcept { return ""; }

const void *lookup(const char *name) {
  const void *function = find_entry(name);
  if (function == nullptr) fail(SFFT_ERROR_INTERNAL, "the CUDA backend plugin has no entry '", name, "'");
  return function;
}

}  // namespace sfft::cuda_plugin

namespace sfft {

bool in_forked_child() {
  return cuda_plugin::library_in_forked_child != nullptr && cuda_plugin::library_in_forked_child();
}

}  // namespace sfft

extern "C" {

__attribute__((visibility("default"))) uint32_t sfft_cuda_plugin_interface(int *library_version,
                                                                           bool (*in_forked_child)()) {
  *library_version = SFFT_VERSION_NUMBER;
  sfft::cuda_plugin::library_in_forked_child = in_forked_child;
  return sfft::cuda_plugin::kInterfaceVersion;
}

__attribute__((visibility("default"))) const void *sfft_cuda_plugin_lookup(const char *name) {
  return sfft::cuda_plugin::find_entry(name);
}

}  // extern "C"
