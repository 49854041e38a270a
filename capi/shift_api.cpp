// SPDX-License-Identifier: Apache-2.0
// C entry points of the shift family.
#include <cstdint>

#include "boundary.hpp"
#include "common/options.hpp"
#include "shift/shift.hpp"

namespace {

sfft_status shift_entry(const char *function, bool inverse, void *out, const void *in, int ndim, const int64_t *shape,
                        uint32_t axes_mask, const sfft_dtype &dtype, const sfft_options *opts) {
  return sfft::capi::guarded(function, [&] {
    sfft::shift::shift(function, inverse, out, in, ndim, shape, axes_mask, dtype, sfft::resolve_options(opts));
  });
}

}  // namespace

extern "C" {

SFFT_API sfft_status fftshift_nd(void *out, const void *in, int ndim, const int64_t *shape, uint32_t axes_mask,
                                 sfft_dtype dtype, const sfft_options *opts) {
  return shift_entry("fftshift_nd", false, out, in, ndim, shape, axes_mask, dtype, opts);
}

SFFT_API sfft_status ifftshift_nd(void *out, const void *in, int ndim, const int64_t *shape, uint32_t axes_mask,
                                  sfft_dtype dtype, const sfft_options *opts) {
  return shift_entry("ifftshift_nd", true, out, in, ndim, shape, axes_mask, dtype, opts);
}

}  // extern "C"
