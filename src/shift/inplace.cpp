// SPDX-License-Identifier: Apache-2.0
#include "shift/inplace.hpp"

#include <algorithm>

#include "common/error.hpp"

namespace sfft::shift {

InPlacePlan make_inplace_plan(const Layout &l, std::size_t chunk_words, std::size_t max_piece) {
  InPlacePlan p;
  // Normalised layouts end in a shifted dim, or in a shifted dim and the unshifted word-splitting dim.
  const bool split = l.shift[l.ndim - 1] == 0;
  const int64_t unit = split ? l.extent[l.ndim - 1] : 1;
  p.dims = l.ndim - (split ? 1 : 0);
  if (p.dims < 1 || l.shift[p.dims - 1] == 0) fail(SFFT_ERROR_INTERNAL, "shift: layout without a shifted row dim");
  for (int d = 0; d < p.dims; ++d) {
    StepDim &sd = p.dim[d];
    const int64_t u = d == p.dims - 1 ? unit : 1;
    sd.e = l.extent[d] * u;
    sd.s = l.shift[d] * u;
    sd.a = sd.e - sd.s;
    if (sd.s == 0) {
      sd.steps = sd.e;
      continue;
    }
    sd.lanes = 2;
    sd.steps = std::max(sd.s, sd.a);
    if (sd.s != sd.a) {
      sd.lag = u;
      sd.rev = sd.s > sd.a;
    }
  }
  StepDim &row = p.dim[p.dims - 1];
  p.row_words = static_cast<std::size_t>(row.e);
  p.rows = l.words / p.row_words;
  std::size_t slots = 1;  // row moves per chunk
  for (int d = p.dims - 2; d >= 0; --d) {
    p.row_stride[d] = d == p.dims - 2 ? 1 : p.row_stride[d + 1] * static_cast<std::size_t>(p.dim[d + 1].e);
    slots *= static_cast<std::size_t>(p.dim[d].lanes);
  }
  // Stage words one row move takes with `box` row steps: two segments, each padded to whole pieces, and
  // two more pieces where the saved wrap words split a segment in three (rows cut into several boxes).
  const auto steps_r = static_cast<std::size_t>(row.steps);
  const auto row_cost = [&](std::size_t box, std::size_t piece) {
    const auto up = [&](int64_t n) { return (static_cast<std::size_t>(n) + piece - 1) / piece * piece; };
    const auto b = static_cast<int64_t>(box);
    std::size_t c = up(std::min(b, row.s)) + up(std::min(b, row.a));
    return box < steps_r && row.lag > 0 ? c + 2 * piece : c;
  };
  // Pieces: about an eighth of the shorter segment (little padding), but few enough for kMaxPieces; then
  // small enough that every row move fits with one step.
  const std::size_t shorter = std::min(static_cast<std::size_t>(std::min(row.s, row.a)), chunk_words / (2 * slots));
  p.piece = 1;
  while (p.piece * 2 <= max_piece && p.piece * 2 <= std::max<std::size_t>(shorter / 8, chunk_words / kMaxPieces))
    p.piece *= 2;
  while (p.piece > 1 && slots * row_cost(1, p.piece) > chunk_words) p.piece /= 2;
  // Boxes. Odd outer dims, smallest first, take all their steps while the row moves and a row piece of
  // up to 64 steps still fit: their wraps then stay inside the chunk (a small extent has a large plane).
  const std::size_t min_box = std::min<std::size_t>(steps_r, 64);
  for (;;) {
    int best = -1;
    for (int d = 0; d + 1 < p.dims; ++d)
      if (p.dim[d].lag > 0 && p.dim[d].box < p.dim[d].steps && (best < 0 || p.dim[d].e < p.dim[best].e)) best = d;
    if (best < 0) break;
    const auto n = slots * static_cast<std::size_t>(p.dim[best].steps);
    if (n > kMaxRowMoves || n * row_cost(min_box, p.piece) > chunk_words) break;
    p.dim[best].box = p.dim[best].steps;
    slots = n;
  }
  // The row takes as many steps as fit; whole rows leave room for more steps of the innermost outer dim.
  std::size_t box = steps_r;
  if (slots * row_cost(box, p.piece) > chunk_words) {  // partial rows: whole pieces where they fit
    box = std::min(steps_r - 1, chunk_words / slots / 2) / p.piece * p.piece;
    while (box > p.piece && slots * row_cost(box, p.piece) > chunk_words) box -= p.piece;
    if (box <= p.piece) box = std::min(p.piece, steps_r - 1);
    while (box > 1 && slots * row_cost(box, p.piece) > chunk_words) --box;
  }
  row.box = static_cast<int64_t>(box);
  if (p.dims >= 2 && box == steps_r && p.dim[p.dims - 2].box == 1) {
    StepDim &inner = p.dim[p.dims - 2];
    std::size_t fit = std::min(chunk_words / (slots * row_cost(box, p.piece)), kMaxRowMoves / slots);
    inner.box = static_cast<int64_t>(std::clamp<std::size_t>(fit, 1, static_cast<std::size_t>(inner.steps)));
  }
  p.chunks = 1;
  for (int d = p.dims - 1; d >= 0; --d) {
    StepDim &sd = p.dim[d];
    sd.boxes = (sd.steps + sd.box - 1) / sd.box;
    if (sd.lag > 0 && sd.boxes > 1) sd.wrap = std::min(sd.s, sd.a);
    p.box_stride[d] = p.chunks;
    p.chunks *= static_cast<std::size_t>(sd.boxes);
  }
  p.chunk_words = chunk_words;
  for (int d = 0; d + 1 < p.dims; ++d) {
    if (p.dim[d].wrap < 0) continue;
    std::size_t plane_rows = p.rows / static_cast<std::size_t>(p.dim[d].e);
    p.scratch_at[d] = p.scratch_words;
    p.scratch_words += plane_rows * p.row_words;
    p.save_pieces += plane_rows;
  }
  if (row.wrap >= 0) {
    p.scratch_at[p.dims - 1] = p.scratch_words;
    p.scratch_words += p.rows * static_cast<std::size_t>(row.lag);
    p.save_pieces += p.rows;
  }
  return p;
}

}  // namespace sfft::shift
