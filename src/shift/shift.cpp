// SPDX-License-Identifier: Apache-2.0
// The shift family's entry: argument checks, the backend rule, dispatch.
#include "shift/shift.hpp"

#include <cstdint>

#include "common/backend.hpp"
#include "common/error.hpp"

namespace sfft::shift {

namespace {

// Largest power of two (<= 16) dividing both addresses: the widest word the CUDA kernels may move.
std::size_t common_alignment(const void *a, const void *b) {
  auto bits = reinterpret_cast<std::uintptr_t>(a) | reinterpret_cast<std::uintptr_t>(b) | 16u;
  return static_cast<std::size_t>(bits & (~bits + 1));
}

}  // namespace

void shift(const char *function, bool inverse, void *out, const void *in, int ndim, const int64_t *shape,
           uint32_t axes_mask, const sfft_dtype &dtype, const Options &opts) {
  Layout l = make_layout(ndim, shape, axes_mask, dtype, inverse, common_alignment(in, out));
  if (l.bytes == 0) return;  // zero-size extent: valid no-op
  require(in != nullptr, "in is NULL");
  require(out != nullptr, "out is NULL");
  auto ib = reinterpret_cast<std::uintptr_t>(in), ob = reinterpret_cast<std::uintptr_t>(out);
  require(ib == ob || ib + l.bytes <= ob || ob + l.bytes <= ib,
          "in and out overlap without being equal (partial overlap is not supported; pass out == in for in place)");
  PointerKind kinds[2];
  if (resolve_backend(opts, {out, in}, function, kinds) == Backend::Cpu)
    run_cpu(l, out, in, opts.threads);
  else
    run_cuda(l, out, in, opts, kinds[0], kinds[1]);
}

}  // namespace sfft::shift
