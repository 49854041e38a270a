// SPDX-License-Identifier: Apache-2.0
// In-place shift of a layout that is not an involution (some shifted extent is odd) in one pass: every word
// is read once and written once, in chunks that CPU threads or GPU blocks process concurrently.
//
// Steps. Along one dim of extent e shifted by s (a = e - s), step j moves up to two words:
//   lane 0: out[j] = in[j + a]  (j < s)        lane 1: out[j + s] = in[j]  (j < a)
// which together give out[(i + s) % e] = in[i]. An even extent (s == a) reads and writes each word in the
// same step. An odd one (|s - a| == unit: 1, or the row block for the row dim) reads every word in the
// step that writes it or `unit` steps earlier, once its steps run backwards where s > a; the exception is
// the `unit` words at min(s, a) ("the wrap"), written at the first step and read at the last. An unshifted
// dim has one lane, out[j] = in[j]. The N-d step space is the product of the dims' steps.
//
// Chunks. The step space is cut into boxes (chunks) numbered in C order. A chunk reads all its source words
// into a buffer, publishes "read", waits until every earlier chunk whose reads it would overwrite has
// published, then writes. Chunks are taken in increasing order (a ticket counter), so the oldest
// unfinished chunk never waits: no deadlock, with any number of workers. A word whose reading chunk comes
// after its writing chunk is saved to scratch before the pass and read from there: in C order that is a
// word whose first dim (most significant first) with different read and write boxes is a wrap. Dims that
// fit in one box (the row, small outer extents) keep their wraps inside the chunk and save nothing.
//
// Rows. The last step dim is the row: the layout's last shifted dim times the trailing word-splitting dim
// (contiguous, `row_words` long, unit = the split extent). A chunk's work is a table of row moves (outer
// dims) times at most two column segments (row dim), so index arithmetic is per row, not per word.
#pragma once

#include <cstddef>
#include <cstdint>

#include "shift/layout.hpp"

namespace sfft::shift {

constexpr int kMaxRowMoves = 256;  // row moves of one chunk (outer lanes <= 2^7 = 128 per outer step)
// A chunk's source runs are staged in pieces of `piece` words (a power of two), each run padded to whole
// pieces, so that the GPU maps a staged word to its run by a shift. The plan keeps the pieces of a chunk
// within chunk_words / piece <= kMaxPieces.
constexpr int kMaxPieces = 512;

struct StepDim {
  int64_t e = 1, s = 0, a = 1;  // extent, shift, e - s (in words for the row dim)
  int64_t steps = 1;            // max(s, a); e when unshifted
  int64_t lag = 0;              // odd: steps between a word's read and its write (unit); else 0
  int64_t wrap = -1;            // odd and cut into several boxes: first wrap position min(s, a); else -1
  int64_t box = 1, boxes = 1;   // steps per chunk, chunks along this dim
  int lanes = 1;                // 2 when shifted
  bool rev = false;             // steps run backwards (s > a)
};

struct InPlacePlan {
  int dims = 0;  // step dims; dims - 1 is the row
  StepDim dim[kMaxDims];
  std::size_t row_words = 0, rows = 0;
  std::size_t row_stride[kMaxDims] = {};  // outer dims: stride in rows
  std::size_t box_stride[kMaxDims] = {};  // chunk index stride of each dim's box coordinate
  std::size_t chunks = 0;
  std::size_t chunk_words = 0;  // staging capacity of one chunk
  std::size_t piece = 1;        // staging granule (words); runs are padded to whole pieces
  // Scratch for saved words: outer dim d with a wrap has room for its wrap plane (rows / e_d whole rows) at
  // scratch_at[d]; a row dim with a wrap has room for the `lag` wrap words of every row at
  // scratch_at[dims - 1]. Only the words that need it are saved. Total scratch_words.
  std::size_t scratch_at[kMaxDims] = {};
  std::size_t scratch_words = 0;
  std::size_t save_pieces = 0;  // rows of the outer planes, then one piece per row for the row dim
};

// Builds the plan for a non-involution layout with chunks staging at most `chunk_words` words (a power of
// two >= 256), runs padded to pieces of at most `max_piece` words (a power of two: 1 on the CPU).
InPlacePlan make_inplace_plan(const Layout &l, std::size_t chunk_words, std::size_t max_piece);

// Move `lane` of step t along `d`: destination and source positions; false if that lane is empty there.
SFFT_HD bool lane_move(const StepDim &d, int64_t t, int lane, int64_t *dst, int64_t *src) {
  int64_t j = d.rev ? d.steps - 1 - t : t;
  if (d.s == 0) {
    *dst = *src = j;
    return true;
  }
  if (lane == 0) {
    *dst = j;
    *src = j + d.a;
    return j < d.s;
  }
  *dst = j + d.s;
  *src = j;
  return j < d.a;
}

// Box coordinates of chunk c.
SFFT_HD void chunk_box(const InPlacePlan &p, std::size_t c, int64_t *box) {
  for (int d = 0; d < p.dims; ++d) {
    box[d] = static_cast<int64_t>(c / p.box_stride[d]);
    c -= static_cast<std::size_t>(box[d]) * p.box_stride[d];
  }
}

SFFT_HD int64_t box_steps(const StepDim &d, int64_t b) {
  int64_t t0 = b * d.box;
  return (t0 + d.box < d.steps ? d.box : d.steps - t0) * d.lanes;
}

// Upper bound of row moves in a chunk (the table's size): product of the outer box sizes times lanes.
SFFT_HD int row_move_slots(const InPlacePlan &p, const int64_t *box) {
  int64_t n = 1;
  for (int d = 0; d + 1 < p.dims; ++d) n *= box_steps(p.dim[d], box[d]);
  return static_cast<int>(n);
}

struct RowMove {
  std::size_t dst;       // word offset of the destination row in the data
  std::size_t src;       // word offset of the source row: in the data, or in scratch if `saved`
  std::size_t src_row;   // source row index (for the row dim's saved wrap words)
  bool saved;            // the whole source row comes from an outer dim's wrap plane
  bool row_wraps_saved;  // the row dim's wrap words of the source row come from scratch
};

// Box of the step that reads / writes position i along d.
SFFT_HD int64_t step_box(const StepDim &d, int64_t j) {
  const int64_t t = d.rev ? d.steps - 1 - j : j;
  return d.box == 1 ? t : t / d.box;  // most outer dims: one step per box, no division
}
SFFT_HD int64_t read_box(const StepDim &d, int64_t i) { return step_box(d, d.s == 0 || i < d.a ? i : i - d.a); }
SFFT_HD int64_t write_box(const StepDim &d, int64_t i) { return step_box(d, d.s == 0 || i < d.s ? i : i - d.s); }

// The first outer dim (most significant first) along which source row `index` is read and written in
// different boxes: -1 if none, else d; *saved says the read comes after the write (a wrap: scratch).
SFFT_HD int first_split(const InPlacePlan &p, const int64_t *index, bool *saved) {
  for (int d = 0; d + 1 < p.dims; ++d) {
    int64_t r = read_box(p.dim[d], index[d]), w = write_box(p.dim[d], index[d]);
    if (r != w) {
      *saved = r > w;
      return d;
    }
  }
  *saved = false;
  return -1;
}

// Row move `slot` (< row_move_slots) of the chunk at `box`; false if one of its lanes is empty.
SFFT_HD bool row_move(const InPlacePlan &p, const int64_t *box, int slot, RowMove *m) {
  std::size_t dst = 0, src = 0;
  int64_t src_index[kMaxDims];
  for (int d = p.dims - 2; d >= 0; --d) {
    const StepDim &sd = p.dim[d];
    const auto n = static_cast<int>(box_steps(sd, box[d]));  // <= kMaxRowMoves: 32-bit division
    const int digit = slot % n;
    slot /= n;
    const int step = sd.lanes == 2 ? digit >> 1 : digit, lane = sd.lanes == 2 ? digit & 1 : 0;
    int64_t di, si;
    if (!lane_move(sd, box[d] * sd.box + step, lane, &di, &si)) return false;
    src_index[d] = si;
    dst += static_cast<std::size_t>(di) * p.row_stride[d];
    src += static_cast<std::size_t>(si) * p.row_stride[d];
  }
  bool saved;
  const int split = first_split(p, src_index, &saved);
  m->dst = dst * p.row_words;
  m->src_row = src;
  m->saved = saved;
  m->row_wraps_saved = split < 0 && p.dim[p.dims - 1].wrap >= 0;
  if (!saved) {
    m->src = src * p.row_words;
    return true;
  }
  // Row index on the plane of `split` (that dim removed), then its offset in scratch.
  std::size_t plane_row = 0;
  for (int d = 0; d + 1 < p.dims; ++d) {
    if (d == split) continue;
    std::size_t stride = d > split ? p.row_stride[d] : p.row_stride[d] / static_cast<std::size_t>(p.dim[split].e);
    plane_row += static_cast<std::size_t>(src_index[d]) * stride;
  }
  m->src = p.scratch_at[split] + plane_row * p.row_words;
  return true;
}

// The chunk's column segments along the row dim: destination and source column of each, and its length
// (0 when that lane is empty in this box).
struct Segments {
  int64_t dst[2], src[2], len[2];
};

SFFT_HD Segments row_segments(const InPlacePlan &p, const int64_t *box) {
  const StepDim &d = p.dim[p.dims - 1];
  int64_t t0 = box[p.dims - 1] * d.box, t1 = t0 + d.box < d.steps ? t0 + d.box : d.steps;
  int64_t j0 = d.rev ? d.steps - t1 : t0, j1 = d.rev ? d.steps - t0 : t1;
  Segments g;
  g.dst[0] = j0;
  g.src[0] = j0 + d.a;
  g.len[0] = (j1 < d.s ? j1 : d.s) - j0;
  g.dst[1] = j0 + d.s;
  g.src[1] = j0;
  g.len[1] = (j1 < d.a ? j1 : d.a) - j0;
  for (int k = 0; k < 2; ++k)
    if (g.len[k] < 0) g.len[k] = 0;
  return g;
}

// Chunks that may read what chunk `box` writes, dim by dim: its own box; the boxes of the steps `lag`
// earlier (words read one lag before they are written); where wraps are saved, the boxes of the last
// `lag` steps, which read the wrap words this box writes in its first `lag` steps. Dependency k <
// dependency_count of their product; only those before the chunk itself are real (a later one reads
// a saved word instead).
struct DependencyBoxes {
  int64_t first[3], count[3];
};

SFFT_HD DependencyBoxes dependency_boxes(const StepDim &d, int64_t b) {
  const int64_t t0 = b * d.box, t1 = t0 + d.box < d.steps ? t0 + d.box : d.steps;
  DependencyBoxes r{{b, 0, 0}, {1, 0, 0}};
  if (d.lag > 0 && t1 - 1 >= d.lag) {
    r.first[1] = ((t0 > d.lag ? t0 : d.lag) - d.lag) / d.box;
    r.count[1] = (t1 - 1 - d.lag) / d.box - r.first[1] + 1;
  }
  if (d.wrap >= 0 && t0 < d.lag) {
    const int64_t later = d.steps - d.lag;
    r.first[2] = (t0 + later) / d.box;
    r.count[2] = ((t1 < d.lag ? t1 : d.lag) - 1 + later) / d.box - r.first[2] + 1;
  }
  return r;
}

SFFT_HD std::size_t dependency_count(const InPlacePlan &p, const int64_t *box) {
  std::size_t n = 1;
  for (int d = 0; d < p.dims; ++d) {
    const DependencyBoxes r = dependency_boxes(p.dim[d], box[d]);
    n *= static_cast<std::size_t>(r.count[0] + r.count[1] + r.count[2]);
  }
  return n;
}

SFFT_HD std::size_t dependency(const InPlacePlan &p, const int64_t *box, std::size_t k) {
  std::size_t c = 0;
  for (int d = p.dims - 1; d >= 0; --d) {
    const DependencyBoxes r = dependency_boxes(p.dim[d], box[d]);
    const auto n = static_cast<std::size_t>(r.count[0] + r.count[1] + r.count[2]);
    auto digit = static_cast<int64_t>(k % n);
    k /= n;
    int range = 0;
    while (digit >= r.count[range]) digit -= r.count[range++];
    c += static_cast<std::size_t>(r.first[range] + digit) * p.box_stride[d];
  }
  return c;
}

struct SavePiece {
  std::size_t from, to, len;  // len 0: this word range needs no saving
};

// Save piece i (< save_pieces): plane rows of each outer dim with a wrap, then the row dim's wrap words
// of every row. A word is saved only if the reader would take it from scratch (see first_split).
SFFT_HD SavePiece save_piece(const InPlacePlan &p, std::size_t i) {
  SavePiece s{0, 0, 0};
  int64_t index[kMaxDims];
  bool saved;
  for (int w = 0; w + 1 < p.dims; ++w) {
    const StepDim &sd = p.dim[w];
    if (sd.wrap < 0) continue;
    std::size_t plane_rows = p.rows / static_cast<std::size_t>(sd.e);
    if (i >= plane_rows) {
      i -= plane_rows;
      continue;
    }
    // Plane row i: C-order over the outer dims without w; dim w at its wrap position.
    std::size_t row = 0, rem = i;
    for (int d = p.dims - 2; d >= 0; --d) {
      std::size_t e = static_cast<std::size_t>(p.dim[d].e);
      index[d] = d == w ? sd.wrap : static_cast<int64_t>(rem % e);
      if (d != w) rem /= e;
      row += static_cast<std::size_t>(index[d]) * p.row_stride[d];
    }
    if (first_split(p, index, &saved) != w) return s;
    s.from = row * p.row_words;
    s.to = p.scratch_at[w] + i * p.row_words;
    s.len = p.row_words;
    return s;
  }
  // The row dim's wrap words of row i, saved where no outer dim splits its read from its write.
  std::size_t rem = i;
  for (int d = p.dims - 2; d >= 0; --d) {
    std::size_t e = static_cast<std::size_t>(p.dim[d].e);
    index[d] = static_cast<int64_t>(rem % e);
    rem /= e;
  }
  if (first_split(p, index, &saved) >= 0) return s;
  const StepDim &r = p.dim[p.dims - 1];
  s.from = i * p.row_words + static_cast<std::size_t>(r.wrap);
  s.to = p.scratch_at[p.dims - 1] + i * static_cast<std::size_t>(r.lag);
  s.len = static_cast<std::size_t>(r.lag);
  return s;
}

// Where source column `col` of row move m is read: data (true, *at = word offset) or scratch (false).
SFFT_HD bool source_word(const InPlacePlan &p, const RowMove &m, int64_t col, std::size_t *at) {
  if (m.saved) {
    *at = m.src + static_cast<std::size_t>(col);
    return false;
  }
  const StepDim &r = p.dim[p.dims - 1];
  if (m.row_wraps_saved && static_cast<uint64_t>(col - r.wrap) < static_cast<uint64_t>(r.lag)) {
    *at =
        p.scratch_at[p.dims - 1] + m.src_row * static_cast<std::size_t>(r.lag) + static_cast<std::size_t>(col - r.wrap);
    return false;
  }
  *at = m.src + static_cast<std::size_t>(col);
  return true;
}

// Columns [col, col + len) of row move m's source as at most three runs, each read from one place (the
// row dim's saved wrap words split a run): *at, the source of its first word, in the data if in_data.
struct Run {
  std::size_t at;
  int64_t col, len;
  bool in_data;
};

SFFT_HD int source_runs(const InPlacePlan &p, const RowMove &m, int64_t col, int64_t len, Run *runs) {
  const StepDim &r = p.dim[p.dims - 1];
  int n = 0;
  while (len > 0) {
    int64_t end = col + len;
    if (m.row_wraps_saved) {
      if (col < r.wrap)
        end = end < r.wrap ? end : r.wrap;
      else if (col < r.wrap + r.lag)
        end = end < r.wrap + r.lag ? end : r.wrap + r.lag;
    }
    runs[n].in_data = source_word(p, m, col, &runs[n].at);
    runs[n].col = col;
    runs[n].len = end - col;
    ++n;
    len -= end - col;
    col = end;
  }
  return n;
}

}  // namespace sfft::shift
