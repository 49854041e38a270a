// SPDX-License-Identifier: Apache-2.0
#include "shift/pairs.hpp"

#include <algorithm>

#include "common/error.hpp"

namespace sfft::shift {

PairPlan make_pair_plan(const Layout &l, std::size_t max_outer_block) {
  PairPlan p;
  int a = 0;
  while (a < l.ndim && !moves_oddly(l, a)) ++a;
  if (a == l.ndim) fail(SFFT_ERROR_INTERNAL, "shift: pair plan of an involution");
  if (l.extent[a] < 32) {  // the saved middle slab would be more than 1/32 of the array: a longer odd axis?
    for (int d = a + 1; d < l.ndim; ++d) {
      std::size_t block = 1;
      for (int q = 0; q < l.ndim; ++q)
        if (q != d) block *= static_cast<std::size_t>(l.extent[q]);
      if (moves_oddly(l, d) && l.extent[d] > l.extent[a] && block <= max_outer_block) a = d;
    }
  }
  for (int d = 0; d < a; ++d) {
    p.outer_e[p.outer_dims] = l.extent[d];
    p.outer_s[p.outer_dims++] = l.shift[d];
    p.O *= static_cast<std::size_t>(l.extent[d]);
    p.involution = p.involution && !moves_oddly(l, d);
  }
  for (int d = a + 1; d < l.ndim; ++d) {
    p.inner_e[p.inner_dims] = l.extent[d];
    p.inner_s[p.inner_dims++] = l.shift[d];
  }
  // An unshifted last inner dim (an element block split into words, e.g. the 3 float32 of a vector field) rotates
  // with the dim before it as one row: fewer, longer rows for the items and one digit less for every cursor.
  if (p.inner_dims >= 2 && p.inner_s[p.inner_dims - 1] == 0) {
    --p.inner_dims;
    p.inner_s[p.inner_dims - 1] *= p.inner_e[p.inner_dims];
    p.inner_e[p.inner_dims - 1] *= p.inner_e[p.inner_dims];
  }
  for (int d = p.inner_dims - 1; d >= 0; --d) {
    p.inner_stride[d] = p.S;
    p.S *= static_cast<std::size_t>(p.inner_e[d]);
    p.inner_step[d] = shift_digit(0, p.inner_e[d], p.inner_s[d], -2);
  }
  if (p.S <= UINT32_MAX)
    for (int d = 0; d < p.inner_dims; ++d) p.inner_div[d] = FastDiv32(static_cast<uint32_t>(p.inner_e[d]));
  p.n = l.extent[a];
  p.lo = p.n / 2;
  p.rev = l.shift[a] != p.lo;  // shift lo + 1 (ifftshift): mirrored, the shift along A becomes lo
  p.steps = p.lo + 1;
  p.slab = p.O * p.S;
  set_batch(p, p.steps);
  return p;
}

void set_batch(PairPlan &p, int64_t steps_per_batch) {
  p.batch = std::clamp<int64_t>(steps_per_batch, 1, p.steps);
  p.batches = (p.steps + p.batch - 1) / p.batch;
  p.scratch_words = static_cast<std::size_t>(p.batches) * p.slab;
}

}  // namespace sfft::shift
