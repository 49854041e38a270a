// SPDX-License-Identifier: Apache-2.0
#include "shift/layout.hpp"

#include "common/checked.hpp"
#include "common/dtype.hpp"
#include "common/error.hpp"

namespace sfft::shift {

Layout make_layout(int ndim, const int64_t *shape, uint32_t axes_mask, const sfft_dtype &dtype, bool inverse,
                   std::size_t alignment_of) {
  require(ndim >= 1 && ndim <= 8, "ndim = ", ndim, " is outside 1..8");
  require(shape != nullptr, "shape is NULL");
  require(dtype_valid(dtype), "dtype = ", enum_value(dtype), " is not an sfft_dtype");
  require((axes_mask >> ndim) == 0, "axes_mask = 0x", std::hex, axes_mask, std::dec,
          " has bits set beyond ndim = ", ndim);
  Layout l;
  std::size_t elem = dtype_size(dtype);
  std::size_t count = 1;
  bool empty = false;
  for (int d = 0; d < ndim; ++d) {
    require(shape[d] >= 0, "shape[", d, "] = ", shape[d], " is negative");
    if (shape[d] == 0) empty = true;
  }
  if (empty) return l;  // zero-size array: valid no-op
  for (int d = 0; d < ndim; ++d) count = checked_mul(count, static_cast<std::size_t>(shape[d]), "element count");
  l.bytes = checked_mul(count, elem, "array size in bytes");
  require(l.bytes <= static_cast<std::size_t>(INT64_MAX), "array of ", l.bytes, " bytes is too large");

  // Normalise: (extent, shift) per dim, dropping extent-1 dims and merging neighbouring unshifted dims.
  int64_t ext[8], sh[8];
  int m = 0;
  for (int d = 0; d < ndim; ++d) {
    int64_t n = shape[d];
    if (n == 1) continue;
    bool shifted = axes_mask == 0 || ((axes_mask >> d) & 1u);
    int64_t s = shifted ? (inverse ? (n + 1) / 2 : n / 2) % n : 0;
    if (s == 0 && m > 0 && sh[m - 1] == 0) {
      ext[m - 1] *= n;
    } else {
      ext[m] = n;
      sh[m] = s;
      ++m;
    }
  }
  // Fold the trailing unshifted run into the element block.
  std::size_t block = elem;
  if (m > 0 && sh[m - 1] == 0) {
    block *= static_cast<std::size_t>(ext[m - 1]);
    --m;
  }
  if (m == 0) {  // nothing moves: out = in
    l.word_bytes = elem;
    l.words = count;
    return l;
  }
  // A shifted last dim whose extent and shift are both multiples of g moves aligned groups of g blocks
  // intact: move them as one wider word (up to 16 bytes) for fewer, wider memory accesses.
  if (block < 16) {
    for (std::size_t g = 16 / block; g > 1; g /= 2)
      if (ext[m - 1] % static_cast<int64_t>(g) == 0 && sh[m - 1] % static_cast<int64_t>(g) == 0 &&
          alignment_of % (block * g) == 0) {
        ext[m - 1] /= static_cast<int64_t>(g);
        sh[m - 1] /= static_cast<int64_t>(g);
        block *= g;
        break;
      }
  }
  std::size_t word = 16;
  while (word > 4 && (block % word != 0 || alignment_of % word != 0)) word /= 2;
  for (int d = 0; d < m; ++d) {
    l.extent[d] = ext[d];
    l.shift[d] = sh[d];
  }
  l.ndim = m;
  if (block != word) {
    l.extent[m] = static_cast<int64_t>(block / word);
    l.shift[m] = 0;
    l.ndim = m + 1;
  }
  l.word_bytes = word;
  l.words = l.bytes / word;
  return l;
}

Layout join_unshifted_last(Layout l) {
  const int d = l.ndim - 1;
  if (d >= 1 && l.shift[d] == 0) {
    l.shift[d - 1] *= l.extent[d];
    l.extent[d - 1] *= l.extent[d];
    l.ndim = d;
  }
  return l;
}

Layout narrow_words(Layout l, std::size_t r) {
  l.extent[l.ndim - 1] *= static_cast<int64_t>(r);
  l.shift[l.ndim - 1] *= static_cast<int64_t>(r);
  l.word_bytes /= r;
  l.words *= r;
  return l;
}

bool is_involution(const Layout &l) {
  for (int d = 0; d < l.ndim; ++d)
    if (moves_oddly(l, d)) return false;
  return true;
}

}  // namespace sfft::shift
