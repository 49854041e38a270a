// SPDX-License-Identifier: Apache-2.0
// Common C entry points: options, status strings, last error, version, device count, build information.
#include <fftw3.h>

#include <cstddef>
#include <cstdio>
#include <string>

#include "boundary.hpp"
#include "common/backend.hpp"
#include "common/cuda_plugin.hpp"
#include "common/dtype.hpp"
#include "common/options.hpp"
#include "common/versioned_struct.hpp"
#include "sfft/sfft.h"

extern "C" {

// sfft_options has kept its sfft 0.1 layout, so callers binding the unsized symbol get every field.
SFFT_API void(sfft_options_init)(sfft_options *opts) {
  sfft::init_versioned(opts, sizeof(sfft_options), sfft::default_options());
}

SFFT_API void sfft_options_init_sized(sfft_options *opts, size_t struct_size) {
  sfft::init_versioned(opts, struct_size, sfft::default_options());
}

SFFT_API const char *sfft_status_string(sfft_status s) {
  switch (sfft::enum_value(s)) {  // any int may arrive from C
    case SFFT_SUCCESS:
      return "SFFT_SUCCESS: no error";
    case SFFT_ERROR_INVALID_ARGUMENT:
      return "SFFT_ERROR_INVALID_ARGUMENT: an argument is invalid";
    case SFFT_ERROR_UNSUPPORTED:
      return "SFFT_ERROR_UNSUPPORTED: not supported by this build or backend";
    case SFFT_ERROR_OUT_OF_MEMORY:
      return "SFFT_ERROR_OUT_OF_MEMORY: a host or device allocation failed";
    case SFFT_ERROR_NO_DEVICE:
      return "SFFT_ERROR_NO_DEVICE: no usable CUDA device";
    case SFFT_ERROR_DEVICE:
      return "SFFT_ERROR_DEVICE: a CUDA or cuFFT call failed";
    case SFFT_ERROR_INTERNAL:
      return "SFFT_ERROR_INTERNAL: internal error in sfft";
    default:
      break;
  }
  return "SFFT_ERROR_(unknown): not an sfft_status value";
}

SFFT_API const char *sfft_last_error(void) { return sfft::capi::last_error_message(); }

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

SFFT_API sfft_status sfft_get_build_info(sfft_build_info *info, size_t struct_size) {
  return sfft::capi::guarded("sfft_get_build_info", [&] {
    sfft::require(info != nullptr, "info is NULL");
    sfft::require(struct_size >= offsetof(sfft_build_info, version) + sizeof info->version,
                  "struct_size = ", struct_size, " is too small for sfft_build_info");
    sfft_build_info b{};
    b.struct_size = sizeof b;
    b.version = SFFT_VERSION_NUMBER;
    b.families = SFFT_FAMILY_BITS;
    b.cuda_compiled = SFFT_HAVE_CUDA;
    b.cuda_loaded = sfft::cuda_plugin::available() ? 1 : 0;
    b.cuda_device_count = sfft::cuda_device_count();
    const sfft::CudaVersions v = sfft::cuda_versions();
    b.cuda_runtime_version = v.runtime;
    b.cuda_driver_version = v.driver;
    b.cufft_version = v.cufft;
    std::snprintf(b.cuda_architectures, sizeof b.cuda_architectures, "%s", SFFT_CUDA_ARCHITECTURES);
    std::snprintf(b.fft_library, sizeof b.fft_library, "%s", fftw_version);
    std::snprintf(b.cuda_unavailable, sizeof b.cuda_unavailable, "%s", sfft::cuda_plugin::unavailable_reason());
    sfft::init_versioned(info, struct_size, b);
  });
}

}  // extern "C"
