// SPDX-License-Identifier: Apache-2.0
// C entry points of the shift family.
#include <cstdint>

#include "boundary.hpp"
#include "common/backend.hpp"
#include "shift/shift.hpp"

namespace {

// Largest power of two (<= 16) dividing both addresses: the widest word the CUDA kernels may move.
std::size_t common_alignment(const void *a, const void *b) {
  auto bits = reinterpret_cast<std::uintptr_t>(a) | reinterpret_cast<std::uintptr_t>(b) | 16u;
  return static_cast<std::size_t>(bits & (~bits + 1));
}

sfft_status shift_entry(const char *function, bool inverse, void *out, const void *in, int ndim, const int64_t *shape,
                        uint32_t axes_mask, const sfft_dtype &dtype, const sfft_options *opts) {
  return sfft::capi::guarded(function, [&] {
    using namespace sfft;
    Options o = resolve_options(opts);
    shift::Layout l = shift::make_layout(ndim, shape, axes_mask, dtype, inverse, common_alignment(in, out));
    if (l.bytes == 0) return;  // zero-size extent: valid no-op
    require(in != nullptr, "in is NULL");
    require(out != nullptr, "out is NULL");
    auto ib = reinterpret_cast<std::uintptr_t>(in), ob = reinterpret_cast<std::uintptr_t>(out);
    require(ib == ob || ib + l.bytes <= ob || ob + l.bytes <= ib,
            "in and out overlap without being equal (partial overlap is not supported; pass out == in for in place)");
    Backend backend = resolve_backend(o, {in, out}, function);
    if (backend == Backend::Cpu) {
      shift::run_cpu(l, out, in, o.threads);
      return;
    }
#if SFFT_HAVE_CUDA
    shift::run_cuda(l, out, in, o);
#else
    fail(SFFT_ERROR_UNSUPPORTED, "this sfft was built without CUDA support");
#endif
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
