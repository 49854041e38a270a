// SPDX-License-Identifier: Apache-2.0
// Internal interface of the shift family: one entry per backend over a normalised Layout.
#pragma once

#include "common/backend.hpp"
#include "common/options.hpp"
#include "shift/layout.hpp"

namespace sfft::shift {

// fftshift_nd / ifftshift_nd (inverse) after the options are resolved: checks the arguments, picks the backend
// (common/backend.hpp) and runs it; `function` names the entry point in messages.
void shift(const char *function, bool inverse, void *out, const void *in, int ndim, const int64_t *shape,
           uint32_t axes_mask, const sfft_dtype &dtype, const Options &opts);

// out == in shifts in place. l.ndim > 0 and l.bytes > 0 (callers handle the trivial cases). run_cuda takes the
// arrays' memory kinds as resolve_backend found them (host arrays are staged through the device).
void run_cpu(const Layout &l, void *out, const void *in, int threads);
void run_cuda(const Layout &l, void *out, const void *in, const Options &opts, PointerKind out_kind,
              PointerKind in_kind);

// In place, a short odd first dim over rows (ndim 2 or 3: dims A x R x L, L = 1 for 2): where the pair order
// would save at least `min_scratch_bytes` (a 1/extent[0] share of the array), rotates cycles of row chunks
// instead, through a chunk of buffer a thread. Returns false (nothing moved) where it does not apply.
bool rotate_chunk_cycles(const Layout &l, unsigned char *data, int threads, std::size_t min_scratch_bytes);

// Offset (in words) of the first word of the row whose output row index is `row`, read by an
// out-of-place shift: rows are the layout without its last dim.
SFFT_HD std::size_t source_row(const Layout &l, std::size_t row) {
  std::size_t src = 0, stride = static_cast<std::size_t>(l.extent[l.ndim - 1]);
  for (int d = l.ndim - 2; d >= 0; --d) {
    std::size_t e = static_cast<std::size_t>(l.extent[d]);
    std::size_t i = row % e;
    row /= e;
    std::size_t s = static_cast<std::size_t>(l.shift[d]);
    src += (i >= s ? i - s : i + e - s) * stride;
    stride *= e;
  }
  return src;
}

}  // namespace sfft::shift
