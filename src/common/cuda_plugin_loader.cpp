// SPDX-License-Identifier: Apache-2.0
// Library side of the CUDA seam: finds libsfft_cuda.so.<major> beside libsfft (then on the loader's
// search path), loads it once, checks that it was built with this library, and resolves its entries.
#include <dlfcn.h>

#include <mutex>
#include <string>

#include "common/cuda_plugin.hpp"
#include "common/error.hpp"
#include "common/process.hpp"

namespace sfft::cuda_plugin {
namespace {

#if SFFT_HAVE_CUDA
#define SFFT_PLUGIN_STR2(x) #x
#define SFFT_PLUGIN_STR(x) SFFT_PLUGIN_STR2(x)
constexpr const char *kPluginName = "libsfft_cuda.so." SFFT_PLUGIN_STR(SFFT_VERSION_MAJOR);
#endif

using InterfaceFn = uint32_t (*)(int *, bool (*)());
using LookupFn = const void *(*)(const char *);

struct Plugin {
  LookupFn lookup = nullptr;
  std::string reason;
};

#if SFFT_HAVE_CUDA
// The directory of the file that holds this function, i.e. libsfft itself ("" if unknown).
std::string own_directory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void *>(&own_directory), &info) == 0 || info.dli_fname == nullptr) return {};
  std::string path = info.dli_fname;
  auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}
#endif

Plugin load() {
  Plugin p;
#if !SFFT_HAVE_CUDA
  p.reason = "this sfft was built without CUDA support (SFFT_ENABLE_CUDA=OFF)";
  return p;
#else
  // RTLD_LOCAL keeps the plugin's CUDA symbols out of the process's global scope; it is never unloaded
  // (the CUDA runtime registers process-exit handlers).
  std::string beside = own_directory() + kPluginName;
  void *handle = dlopen(beside.c_str(), RTLD_NOW | RTLD_LOCAL);
  std::string first_error = handle == nullptr ? dlerror() : "";
  if (handle == nullptr) handle = dlopen(kPluginName, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    // Prefer the message about the copy beside libsfft: it names the missing CUDA library when the plugin
    // is there but libcudart/libcufft are not.
    p.reason = cat("the CUDA backend could not be loaded: ", first_error.empty() ? dlerror() : first_error.c_str());
    return p;
  }
  auto interface = reinterpret_cast<InterfaceFn>(dlsym(handle, "sfft_cuda_plugin_interface"));
  auto lookup = reinterpret_cast<LookupFn>(dlsym(handle, "sfft_cuda_plugin_lookup"));
  int plugin_library_version = -1;
  const uint32_t plugin_interface = interface != nullptr ? interface(&plugin_library_version, &in_forked_child) : 0;
  if (lookup == nullptr || plugin_interface != kInterfaceVersion || plugin_library_version != SFFT_VERSION_NUMBER) {
    p.reason = cat("the CUDA backend could not be loaded: ", beside, " is not the plugin of this sfft (version ",
                   plugin_library_version, ", interface ", plugin_interface, "; expected ", SFFT_VERSION_NUMBER, ", ",
                   kInterfaceVersion, ")");
    return p;
  }
  p.lookup = lookup;
  return p;
#endif
}

const Plugin &plugin() {
  static const Plugin loaded = load();  // thread-safe one-time initialisation
  return loaded;
}

}  // namespace

bool available() noexcept {
  try {
    return plugin().lookup != nullptr;
  } catch (...) {
    return false;
  }
}

const char *unavailable_reason() noexcept {
  try {
    return plugin().reason.c_str();
  } catch (...) {
    return "the CUDA backend could not be loaded (out of memory)";
  }
}

const void *lookup(const char *name) {
  const Plugin &p = plugin();
#if !SFFT_HAVE_CUDA
  (void)name;
  fail(SFFT_ERROR_UNSUPPORTED, p.reason);
#else
  if (p.lookup == nullptr) fail(SFFT_ERROR_NO_DEVICE, p.reason);
  const void *function = p.lookup(name);
  if (function == nullptr) fail(SFFT_ERROR_INTERNAL, "the CUDA backend plugin has no entry '", name, "'");
  return function;
#endif
}

}  // namespace sfft::cuda_plugin
