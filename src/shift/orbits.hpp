// SPDX-License-Identifier: Apache-2.0
// In-place shift of a layout whose only odd shifted dim A is short (n words along it) and whose other dims are
// unshifted or shifted by half, in orbits held whole by one worker: every word is read once and written once, with
// no scratch and no ordering between workers.
//
// With A removed, the other dims' shift is an involution p on the element x (the index over every dim but A), so
// the shift is out[p x][(v + s) mod n] = in[x][v]. The words {(x, v), (p x, v) : 0 <= v < n} map onto themselves:
// a worker loads those 2 n words (n where no other dim is shifted, p x = x) and stores them shifted. Where some
// dim D is shifted by half its extent E, x and p x differ in D, one of them with D's index below E / 2: the
// workers take the elements with D's index in the lower half (the first shifted dim's, so that consecutive
// workers take consecutive elements of a row), every orbit exactly once.
//
// The pair order (pairs.hpp) saves a boundary slab first, a third of the array for n = 3 (3 x 8192 x 8192 in place:
// 31 % of a device copy on the H200, the scratch alone 256 MiB to 1 GiB per call); here scratch is none, but a
// worker holds 2 n words, so A must be short (cuda.cu bounds n by the word size).
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/host_device.hpp"
#include "shift/layout.hpp"

namespace sfft::shift {

struct OrbitPlan {
  // The dims other than A, right-aligned: dims [kMaxDims - ndim, kMaxDims) in C order, so that kernels unroll over
  // kMaxDims with compile-time indices.
  int ndim = 0;
  uint64_t extent[kMaxDims] = {}, shift[kMaxDims] = {};
  uint64_t count[kMaxDims] = {};      // digits enumerated: D's lower half, the extent elsewhere
  FastDiv32 by_count[kMaxDims] = {};  // valid when orbits fit 32 bits (fast32)
  std::size_t stride[kMaxDims] = {};  // word strides in the data
  std::size_t orbits = 0;             // product of count: the workers' items
  std::size_t run = 1;                // elements of consecutive offsets that consecutive workers take
  bool paired = false;                // a dim other than A is shifted: orbits of 2 n words
  bool fast32 = false;
  int64_t n = 1, s = 0;  // A's extent and forward shift
  std::size_t a_stride = 1;
};

// The plan when `l` (not an involution) has exactly one odd shifted dim, of extent at most `max_n` and not the last,
// and consecutive workers take runs of at least `min_run` consecutive elements; false otherwise.
inline bool make_orbit_plan(const Layout &l, int64_t max_n, std::size_t min_run, OrbitPlan &p) {
  p = OrbitPlan{};
  int a = -1;
  for (int d = 0; d < l.ndim; ++d) {
    if (!moves_oddly(l, d)) continue;
    if (a >= 0) return false;  // a second odd shifted dim: π or σ would be no involution
    a = d;
  }
  if (a < 0 || l.extent[a] > max_n || a + 1 == l.ndim) return false;
  p.n = l.extent[a];
  p.s = l.shift[a];
  p.ndim = l.ndim - 1;
  std::size_t stride = 1;
  int first_shifted = -1;
  for (int d = l.ndim - 1; d >= 0; --d) {
    if (d == a) {
      p.a_stride = stride;
    } else {
      const int at = kMaxDims - l.ndim + d + (d < a ? 1 : 0);
      p.extent[at] = static_cast<uint64_t>(l.extent[d]);
      p.shift[at] = static_cast<uint64_t>(l.shift[d]);
      p.count[at] = p.extent[at];
      p.stride[at] = stride;
      if (l.shift[d] != 0) first_shifted = at;
    }
    stride *= static_cast<std::size_t>(l.extent[d]);
  }
  if (first_shifted >= 0) {
    p.paired = true;
    p.count[first_shifted] /= 2;
  }
  // Consecutive workers take consecutive elements up to the first dim from the end that they do not take whole.
  for (int d = kMaxDims - 1; d >= kMaxDims - (l.ndim - 1 - a); --d) {
    p.run *= static_cast<std::size_t>(p.count[d]);
    if (p.count[d] != p.extent[d]) break;
  }
  if (p.run < min_run) return false;
  p.orbits = 1;
  for (int d = kMaxDims - p.ndim; d < kMaxDims; ++d) p.orbits *= static_cast<std::size_t>(p.count[d]);
  p.fast32 = p.orbits <= UINT32_MAX;
  for (int d = kMaxDims - p.ndim; p.fast32 && d < kMaxDims; ++d)
    p.by_count[d] = FastDiv32(static_cast<uint32_t>(p.count[d]));
  return true;
}

// Orbit q's element and its partner p x as word offsets (of v = 0 along A); partner == own where not paired.
template <bool kFast32>
SFFT_HD void orbit_at(const OrbitPlan &p, std::size_t q, std::size_t &own, std::size_t &partner) {
  own = 0;
  partner = 0;
  uint32_t q32 = static_cast<uint32_t>(q);
#if defined(__CUDA_ARCH__)
#pragma unroll  // compile-time dim indices: the plan's arrays stay kernel parameters, not local copies
#endif
  for (int k = 0; k < kMaxDims; ++k) {
    const int d = kMaxDims - 1 - k;  // last dim first
    if (k >= p.ndim) break;
    uint64_t j;
    if constexpr (kFast32) {
      const uint32_t next = p.by_count[d].div(q32);
      j = q32 - next * static_cast<uint32_t>(p.count[d]);
      q32 = next;
    } else {
      j = q % p.count[d];
      q /= p.count[d];
    }
    const uint64_t e = p.extent[d], to = j + p.shift[d];
    own += j * p.stride[d];
    partner += (to >= e ? to - e : to) * p.stride[d];
  }
}

}  // namespace sfft::shift
