// SPDX-License-Identifier: Apache-2.0
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
  int ndim = 0;                   // normalised dims; 0 = nothing moves (pure copy / no-op)
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

// True when dim d's shift is neither 0 nor half its extent (an odd extent shifted): the dims that keep a shift
// from being an involution.
inline bool moves_oddly(const Layout &l, int d) { return l.shift[d] != 0 && 2 * l.shift[d] != l.extent[d]; }

// True when the permutation is its own inverse (every shift is 0 or half its extent): in place is then
// a set of disjoint swaps.
bool is_involution(const Layout &l);

// The same shift with an unshifted last dim (an element block split into words, e.g. the 3 float32 of an
// N x M x 3 field shifted along its grid axes) joined to the shifted dim before it: rows `extent` times as long,
// for the paths that move whole rows (out of place, and in place where the shift is an involution). Rows of 3
// words ran at half the speed of the same bytes as long rows (CPU 300^3 x 3 float32 out of place, in place 1/8;
// H200 out of place 66 % of a device copy). The pair order keeps the split: its odd dims' shifts must stay
// (n -/+ 1) / 2 (it joins the block to an inner dim itself, make_pair_plan).
Layout join_unshifted_last(Layout l);

// The same shift over words `r` times narrower (r divides word_bytes, words stay >= 4 bytes): the last dim's extent
// and shift times r (sub-word q of word j of a dim shifted by s lands at sub-word q of word j + s: r j + q + r s).
Layout narrow_words(Layout l, std::size_t r);

// Exact division by a run-time constant through a multiply-high (Granlund–Montgomery round-up method),
// valid for every 32-bit numerator: GPU integer division is a long instruction sequence, this is three.
// The GPU kernels divide in-tile word offsets by the row length or a chunk's row width with it.
struct FastDiv32 {
  uint32_t d = 1, m = 0, s = 0;
  FastDiv32() = default;
  SFFT_HD explicit FastDiv32(uint32_t divisor) : d(divisor) {
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

}  // namespace sfft::shift
