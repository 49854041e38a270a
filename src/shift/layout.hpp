// The shift as a normalised layout shared by the CPU and CUDA backends: extent-1 axes dropped, runs of
// unshifted axes merged, the trailing unshifted block folded into the moved "word", so every backend only
// sees `ndim` dims of extents `extent` with forward shifts `shift` over words of `word_bytes` bytes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "sfft/sfft.h"

#include "common/host_device.hpp"

namespace sfft::shift {

constexpr int kMaxDims = 9;  // 8 user dims + the word-splitting dim

struct Layout {
  int ndim = 0;                  // normalised dims; 0 = nothing moves (pure copy / no-op)
  int64_t extent[kMaxDims] = {};  // C-order extents in words
  int64_t shift[kMaxDims] = {};   // out[(i + shift) % extent] = in[i] along each dim; 0 = unshifted
  std::size_t word_bytes = 0;     // 4, 8 or 16: the unit moved
  std::size_t words = 0;          // total words (product of extents)
  std::size_t bytes = 0;          // total bytes of the array
};

// Validates the public arguments (throws sfft::Error) and builds the layout. `alignment_of` is the
// byte alignment both buffers share (the word never exceeds it). inverse = ifftshift.
Layout make_layout(int ndim, const int64_t *shape, uint32_t axes_mask, const sfft_dtype &dtype, bool inverse,
                   std::size_t alignment_of);

// True when the permutation is its own inverse (every shift is 0 or half its extent): in place is then
// a set of disjoint swaps.
bool is_involution(const Layout &l);

// For in-place shifts that are not involutions: the dim whose rotation is one single cycle
// (gcd(extent, shift) == 1) with the largest extent, i.e. the smallest slab of scratch. -1 if none.
int cycle_axis(const Layout &l);

// Offset (in words) of the element whose output index is `out_index` (flat, C-order over the layout)
// when read from the input of an out-of-place shift: in[source] -> out[out_index].
SFFT_HD std::size_t source_of(const Layout &l, std::size_t out_index) {
  std::size_t src = 0, stride = 1;
  for (int d = l.ndim - 1; d >= 0; --d) {
    std::size_t e = static_cast<std::size_t>(l.extent[d]);
    std::size_t i = out_index % e;
    out_index /= e;
    std::size_t s = static_cast<std::size_t>(l.shift[d]);
    std::size_t j = i >= s ? i - s : i + e - s;
    src += j * stride;
    stride *= e;
  }
  return src;
}

// Exact division by a run-time constant through a multiply-high (Granlund–Montgomery round-up method),
// valid for every 32-bit numerator: GPU integer division is a long instruction sequence, this is three.
struct FastDiv32 {
  uint32_t d = 1, m = 0, s = 0;
  FastDiv32() = default;
  explicit FastDiv32(uint32_t divisor) : d(divisor) {
    while ((uint64_t{1} << s) < d) ++s;  // s = ceil(log2 d)
    m = d == 1 ? 0u : static_cast<uint32_t>(((uint64_t{1} << 32) * ((uint64_t{1} << s) - d)) / d + 1);
  }
  SFFT_HD uint32_t div(uint32_t n) const {
    if (s == 0) return n;
#if defined(__CUDA_ARCH__)
    uint32_t t = __umulhi(n, m);
#else
    uint32_t t = static_cast<uint32_t>((static_cast<uint64_t>(n) * m) >> 32);
#endif
    return (t + ((n - t) >> 1)) >> (s - 1);
  }
};

// Divisors of the cycle-wave order: plain division (any size) or FastDiv32 (arrays under 2^31 words).
struct PlainDivisors {
  std::size_t slab;
  std::size_t extent[kMaxDims];
  PlainDivisors(const Layout &l, std::size_t slab_words) : slab(slab_words), extent{} {
    for (int d = 0; d < l.ndim; ++d) extent[d] = static_cast<std::size_t>(l.extent[d]);
  }
  SFFT_HD std::size_t by_slab(std::size_t n) const { return n / slab; }
  SFFT_HD std::size_t by_extent(int d, std::size_t n) const { return n / extent[d]; }
};

struct FastDivisors32 {
  FastDiv32 slab;
  FastDiv32 extent[kMaxDims];
  FastDivisors32(const Layout &l, std::size_t slab_words) : slab(static_cast<uint32_t>(slab_words)) {
    for (int d = 0; d < l.ndim; ++d) extent[d] = FastDiv32(static_cast<uint32_t>(l.extent[d]));
  }
  SFFT_HD uint32_t by_slab(uint32_t n) const { return slab.div(n); }
  SFFT_HD uint32_t by_extent(int d, uint32_t n) const { return extent[d].div(n); }
};

// Cycle-wave order for in-place non-involution shifts along `axis` (see cuda.cu / cpu.cpp): position t
// = k * slab + r writes output slab D_k = (-k * shift) mod extent at in-slab index r, reading the input
// slab D_{k+1} at the in-slab source of r. Returns the write offset; *read gets the read offset, and
// *from_scratch says the read comes from the saved copy of slab 0 (k + 1 == extent), where *read is then
// an offset into the scratch slab. Index is the arithmetic type (uint32_t with FastDivisors32).
template <class Index, class Divisors>
SFFT_HD Index wave_step(const Layout &l, const Divisors &div, int axis, Index slab, Index t, Index *read,
                        bool *from_scratch) {
  Index k = div.by_slab(t), r = t - k * slab;
  Index e = static_cast<Index>(l.extent[axis]);
  Index back = e - static_cast<Index>(l.shift[axis]);  // -shift mod e
  // k, back < e: k * back fits 64 bits, and 32 bits when e < 2^16.
  Index dest_slab, src_slab;
  if (sizeof(Index) >= 8 || e < 65536u) {
    Index a = k * back, b = a + back;
    dest_slab = a - div.by_extent(axis, a) * e;
    src_slab = b - div.by_extent(axis, b) * e;
  } else {
    dest_slab = static_cast<Index>((static_cast<uint64_t>(k) * back) % e);
    src_slab = static_cast<Index>((static_cast<uint64_t>(k + 1) * back) % e);
  }
  // Decompose r over the other dims, mapping each index to its source index.
  Index w_off = 0, r_off = 0, r_in_slab = 0, stride = 1, slab_stride = 1;
  for (int d = l.ndim - 1; d >= 0; --d) {
    Index ed = static_cast<Index>(l.extent[d]);
    if (d == axis) {
      w_off += dest_slab * stride;
      r_off += src_slab * stride;
      stride *= ed;
      continue;
    }
    Index q = div.by_extent(d, r), i = r - q * ed;
    r = q;
    Index s = static_cast<Index>(l.shift[d]);
    Index j = i >= s ? i - s : i + ed - s;
    w_off += i * stride;
    r_off += j * stride;
    r_in_slab += j * slab_stride;
    stride *= ed;
    slab_stride *= ed;
  }
  *from_scratch = k + 1 == e;
  *read = *from_scratch ? r_in_slab : r_off;
  return w_off;
}

// Offset of the element of slab `index` along `axis` at in-slab position r (C-order over the other dims).
SFFT_HD std::size_t slab_offset(const Layout &l, int axis, std::size_t index, std::size_t r) {
  std::size_t off = 0, stride = 1;
  for (int d = l.ndim - 1; d >= 0; --d) {
    std::size_t ed = static_cast<std::size_t>(l.extent[d]);
    std::size_t i = d == axis ? index : r % ed;
    if (d != axis) r /= ed;
    off += i * stride;
    stride *= ed;
  }
  return off;
}

}  // namespace sfft::shift
