// Common C entry points: options, status strings, last error, version, device count.
#include <cstdio>
#include <string>

#include "boundary.hpp"
#include "common/backend.hpp"
#include "common/dtype.hpp"
#include "common/options.hpp"
#include "sfft/sfft.h"

namespace sfft::capi {
namespace {
thread_local std::string last_error;
}

void clear_last_error() noexcept { last_error.clear(); }

void set_last_error(const char *function, const char *detail) noexcept {
  try {
    last_error = std::string(function) + ": " + detail;
  } catch (...) {
    last_error.clear();  // out of memory while reporting; the status code still tells what happened
  }
}

}  // namespace sfft::capi

extern "C" {

SFFT_API void sfft_options_init(sfft_options *opts) {
  if (opts != nullptr) sfft::default_options(opts);
}

SFFT_API const char *sfft_status_string(sfft_status s) {
  switch (sfft::enum_value(s)) {  // any int may arrive from C
    case SFFT_SUCCESS: return "SFFT_SUCCESS: no error";
    case SFFT_ERROR_INVALID_ARGUMENT: return "SFFT_ERROR_INVALID_ARGUMENT: an argument is invalid";
    case SFFT_ERROR_UNSUPPORTED: return "SFFT_ERROR_UNSUPPORTED: not supported by this build or backend";
    case SFFT_ERROR_OUT_OF_MEMORY: return "SFFT_ERROR_OUT_OF_MEMORY: a host or device allocation failed";
    case SFFT_ERROR_NO_DEVICE: return "SFFT_ERROR_NO_DEVICE: no usable CUDA device";
    case SFFT_ERROR_DEVICE: return "SFFT_ERROR_DEVICE: a CUDA or cuFFT call failed";
    case SFFT_ERROR_INTERNAL: return "SFFT_ERROR_INTERNAL: internal error in sfft";
    default: break;
  }
  return "SFFT_ERROR_(unknown): not an sfft_status value";
}

SFFT_API const char *sfft_last_error(void) { return sfft::capi::last_error.c_str(); }

SFFT_API const char *sfft_version_string(void) {
#define SFFT_STR2(x) #x
#define SFFT_STR(x) SFFT_STR2(x)
  return SFFT_STR(SFFT_VERSION_MAJOR) "." SFFT_STR(SFFT_VERSION_MINOR) "." SFFT_STR(SFFT_VERSION_PATCH);
#undef SFFT_STR
#undef SFFT_STR2
}

SFFT_API int sfft_version(void) { return SFFT_VERSION_NUMBER; }

SFFT_API int sfft_cuda_device_count(void) {
  sfft::capi::clear_last_error();
  return sfft::cuda_device_count();
}

}  // extern "C"
