// SPDX-License-Identifier: Apache-2.0
// In-place shift of a layout that is not an involution (some shifted extent is odd) in one pass of pairs:
// every word is read once and written once, and the work falls into independent items (no ordering between
// CPU threads or GPU blocks, no flags). The derivation is in docs/shift.md; in short:
//
// Split. A is the outermost odd shifted dim of the layout (extent n = 2 lo + 1). The dims before it are
// unshifted or shifted by half (an involution σ on the outer index o), the dims after it (inner index i,
// S words) have any shifts (a permutation π). The shift is out[σ o][(v + s_A) mod n][π i] = in[o][v][i].
// Along A we count in virtual coordinates v (v = the physical index, or n - 1 - it when s_A = lo + 1,
// ifftshift), where the shift along A is always lo.
//
// Pairs. Step t (0 <= t <= lo) of element x = (o, i) moves, in virtual coordinates,
//   lane 1: out[σ o][t + lo][π i]     = in[o][t][i]                     (every t; t = lo: the middle)
//   lane 0: out[o][t][i]              = in[σ^-1 o][t + lo + 1][π^-1 i]  (t < lo)
// Lane 0 overwrites in[o][t][i], which lane 1 of the same step reads; lane 1 overwrites in[σ o][t + lo][π i],
// which lane 0 of step t - 1 reads for element (σ² o, π² i). So a chain that visits element
// x_t = (σ^-2t o, π^-2t i) at step t, steps in increasing order, reading each step before writing it, never
// overwrites a word another chain still has to read, except across the ends of its run of steps. With A the
// outermost odd axis σ is an involution and o stays fixed along a chain; A may also be a later odd axis
// when the outer elements are few (a short first axis would make the saved middle slab a large part of the
// array): then σ is any shift and items take every o at once.
//
// Batches. Steps are cut into batches [kT, min(kT + T, lo + 1)); a chain runs one batch. The only words read
// across batches are the boundary slabs v = kT + lo (written by step kT, read by step kT - 1, or for k = 0 the
// middle slab read by step lo): a pre-pass saves them to scratch (batches x O x S words) and the readers take
// them from there. Items (batch, chains) are then independent.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "common/host_device.hpp"
#include "shift/layout.hpp"

namespace sfft::shift {

// Largest O * S (words) for which a later odd axis replaces a short outermost one (make_pair_plan).
constexpr std::size_t kMaxOuterBlock = 64;

struct PairPlan {
  int outer_dims = 0, inner_dims = 0;
  int64_t outer_e[kMaxDims] = {}, outer_s[kMaxDims] = {};
  bool involution = true;  // σ = σ^-1 (every outer shift 0 or half the extent): o is fixed along a chain
  int64_t inner_e[kMaxDims] = {}, inner_s[kMaxDims] = {};  // C order; the last one is contiguous
  std::size_t inner_stride[kMaxDims] = {};
  int64_t inner_step[kMaxDims] = {};  // a chain step (π^-2) of each inner digit: -2 s mod e
  FastDiv32 inner_div[kMaxDims];      // by each inner extent, where S fits in 32 bits
  std::size_t O = 1, S = 1;  // outer elements, inner words (words of one (o, v) block)
  int64_t n = 1, lo = 0;     // extent of A, n / 2
  bool rev = false;          // virtual v is physical n - 1 - v
  int64_t steps = 1;         // lo + 1
  int64_t batch = 1;         // steps per batch (T)
  int64_t batches = 1;       // K
  std::size_t slab = 1;      // O * S: words of one boundary slab
  std::size_t scratch_words = 0;
};

// Splits a non-involution layout at an odd shifted dim; one batch. Throws on an involution. The outermost
// odd dim, unless its extent is under 32 and a later odd dim has a larger extent with at most
// `max_outer_block` (<= kMaxOuterBlock) words in O * S: then that one (σ is no involution if an odd dim
// precedes it).
PairPlan make_pair_plan(const Layout &l, std::size_t max_outer_block);

// Cuts the steps into batches of at most `steps_per_batch` (>= 1) and sizes the scratch.
void set_batch(PairPlan &p, int64_t steps_per_batch);

SFFT_HD int64_t phys(const PairPlan &p, int64_t v) { return p.rev ? p.n - 1 - v : v; }

// Word offset of (o, virtual v, i) in the data.
SFFT_HD std::size_t word_at(const PairPlan &p, std::size_t o, int64_t v, std::size_t i) {
  return (o * static_cast<std::size_t>(p.n) + static_cast<std::size_t>(phys(p, v))) * p.S + i;
}

// Word offset of (o, i) in boundary slab k of the scratch.
SFFT_HD std::size_t saved_at(const PairPlan &p, int64_t k, std::size_t o, std::size_t i) {
  return (static_cast<std::size_t>(k) * p.O + o) * p.S + i;
}

// A digit shifted by `times` x the dim's shift s (0 <= s < e): times = 1 is π (or σ), -1 the inverse, -2 one
// chain step. Inlined with times = 1 or -1 it takes no division (e - s = e for s = 0 is still right).
SFFT_HD int64_t shift_digit(int64_t j, int64_t e, int64_t s, int times) {
  int64_t by = times == 1 ? s : times == -1 ? e - s : (times * s) % e;
  if (by < 0) by += e;
  j += by;
  return j >= e ? j - e : j;
}

// σ^times o.
SFFT_HD std::size_t outer_image(const PairPlan &p, std::size_t o, int times = 1) {
  std::size_t r = 0, stride = 1;
  for (int d = p.outer_dims - 1; d >= 0; --d) {
    const auto e = static_cast<std::size_t>(p.outer_e[d]);
    // What is left of o (< O) at the outermost dim is its digit: no division there.
    const auto j = static_cast<int64_t>(d == 0 ? o : o % e);
    if (d > 0) o /= e;
    r += static_cast<std::size_t>(shift_digit(j, p.outer_e[d], p.outer_s[d], times)) * stride;
    stride *= e;
  }
  return r;
}

// Flat inner offset of π^times applied to flat inner index i (any number of inner dims).
SFFT_HD std::size_t inner_image(const PairPlan &p, std::size_t i, int times) {
  std::size_t r = 0;
  for (int d = p.inner_dims - 1; d >= 0; --d) {
    const auto e = static_cast<std::size_t>(p.inner_e[d]);
    const auto j = static_cast<int64_t>(i % e);
    i /= e;
    r += static_cast<std::size_t>(shift_digit(j, p.inner_e[d], p.inner_s[d], times)) * p.inner_stride[d];
  }
  return r;
}

SFFT_HD int64_t batch_begin(const PairPlan &p, int64_t k) { return k * p.batch; }
SFFT_HD int64_t batch_end(const PairPlan &p, int64_t k) {
  return (k + 1) * p.batch < p.steps ? (k + 1) * p.batch : p.steps;
}

// Boundary slab k: read in[o][k T + lo][i] into saved_at(k, o, i) for j = o * S + i < slab.
SFFT_HD std::size_t boundary_word(const PairPlan &p, int64_t k, std::size_t j) {
  return word_at(p, j / p.S, batch_begin(p, k) + p.lo, j % p.S);
}

// The two moves of step t of batch k for element (o, i), given σ o, σ^-1 o and the inner offsets i, π i,
// π^-1 i: where each lane reads (in the data, or in scratch when saved) and writes. No lane 0 at t = lo.
struct StepMoves {
  std::size_t src1, dst1, src0, dst0;
  bool saved1, saved0, has0;
};

SFFT_HD StepMoves step_moves(const PairPlan &p, int64_t k, int64_t t, std::size_t o, std::size_t fwd_o,
                             std::size_t back_o, std::size_t i, std::size_t pi_i, std::size_t inv_i) {
  StepMoves m;
  m.saved1 = t == p.lo;
  m.src1 = m.saved1 ? saved_at(p, 0, o, i) : word_at(p, o, t, i);
  m.dst1 = word_at(p, fwd_o, t + p.lo, pi_i);
  m.has0 = t < p.lo;
  m.saved0 = t + 1 == batch_end(p, k) && m.has0;
  m.src0 = m.saved0 ? saved_at(p, k + 1, back_o, inv_i) : word_at(p, back_o, t + p.lo + 1, inv_i);
  m.dst0 = word_at(p, o, t, i);
  return m;
}

// ---- The CUDA kernels' per-thread work, shared with the host so that tests can run it in any order.

// Scratch is read-only during the pass: the read-only cache path on the device.
template <class Word>
SFFT_HD Word load_saved(const Word *at) {
#if defined(__CUDA_ARCH__)
  return __ldg(at);
#else
  return *at;
#endif
}

// A contiguous physical range of `len` 32-bit cells from `src` (in the data) moving to src + delta (the block
// stage only stages its runs: delta 0).
struct RotateRange {
  int64_t src, len, delta;
  int64_t skip_low, skip_high;  // cells at either end read from scratch instead (put in place by the caller)
};

struct RotateRanges {
  RotateRange r1, r0;
  int64_t saved1_at, saved0_at;  // where the range's last virtual word is saved, or -1
};

// Block order of the CUDA kernels whose block takes one batch of one row (or tile of rows) of many (the
// rotation over rows, the tiles): groups of 2^group_log2 rows (at most 4, a power of two dividing their number),
// each group's blocks batch by batch, its rows side by side. So the blocks in flight cover a few rows' long
// ranges: in batch order over all rows, hundreds of rows' ranges at the same columns ran slower (H200, same call,
// two rounds, % of a device copy, the rotation over rows: 4096x16385 float64 76-78 -> 85-86, float32 73 -> 79-80,
// 1024x65537 float64 80 -> 85); by rows alone (groups of one row), 2x(2^25+1) and 4x(2^24+1) float32 lost 3-5
// points. 32 bits: the tiles' 64-bit division here had cost registers (8-byte words 100, now 80: 3 blocks a SM,
// not 2; 3x(2^25+1) float64 77 -> 87-88). Block b of batches x rows blocks (< 2^32) gives (batch, row).
struct BatchRow {
  int64_t batch;
  unsigned row;
};

SFFT_HD BatchRow grouped_batch_row(unsigned block, unsigned batches, unsigned group_log2) {
  const unsigned at = block >> group_log2, group = at / batches;
  return {static_cast<int64_t>(at - group * batches), (group << group_log2) + (block & ((1u << group_log2) - 1))};
}

inline unsigned row_group_log2(std::size_t rows) {
  return static_cast<unsigned>(std::min(2, __builtin_ctzll(rows)));
}

// The staged rotations' moves (CUDA, S = 1): element o's words of batch k as two contiguous ranges in 32-bit
// cells (m a word), lane 1's moving into row σ o and lane 0's coming from row σ^-1 o; the ranges' last virtual
// words (the middle, read by step lo; boundary word k + 1) are read from scratch instead.
SFFT_HD RotateRanges rotate_ranges(const PairPlan &p, int64_t k, std::size_t o, int64_t m) {
  const int64_t b = batch_begin(p, k), end = batch_end(p, k), n = p.n, lo = p.lo;
  const int64_t c1 = end - b, c0 = (end < lo ? end : lo) - b;
  const auto own = static_cast<int64_t>(o), fwd = static_cast<int64_t>(outer_image(p, o)),
             back = static_cast<int64_t>(outer_image(p, o, -1));
  const int64_t saved1 = end == lo + 1 ? 1 : 0, saved0 = end <= lo && c0 > 0 ? 1 : 0;
  RotateRanges r{{m * (own * n + (p.rev ? n - b - c1 : b)), m * c1, m * ((fwd - own) * n + (p.rev ? -lo : lo)), 0, 0},
                 {m * (back * n + (p.rev ? n - b - lo - 1 - c0 : b + lo + 1)), m * c0,
                  m * ((own - back) * n + (p.rev ? lo + 1 : -(lo + 1))), 0, 0},
                 saved1 != 0 ? static_cast<int64_t>(saved_at(p, 0, o, 0)) : -1,
                 saved0 != 0 ? static_cast<int64_t>(saved_at(p, k + 1, static_cast<std::size_t>(back), 0)) : -1};
  (p.rev ? r.r1.skip_low : r.r1.skip_high) = m * saved1;
  (p.rev ? r.r0.skip_low : r.r0.skip_high) = m * saved0;
  return r;
}

// Chain g (< scratch_words: batch k = g / slab, element x = g % slab) through its batch; σ an involution.
// Digits of the inner index are Inner (unsigned, 32 bits unless S needs more), D inner dims rounded up
// (padding dims of extent 1 first, so the last digit has stride 1). Per step the blocks (o, t), (σ o, t + lo),
// (σ o, t + lo + 1) move by one block.
//
// Loads go through `stage`: a ring of R groups of G steps (two words a step, slot 2u + lane of a group) and
// two slots after it. stage.fetch(slot, src) starts a load into the slot, commit() closes a group, wait()
// returns once every group but the newest R - 1 has landed, drain() once all have, get(slot) reads it, and
// store(dst, v) writes a word of the data (the device's with a cache hint). The chain's
// loads run R - 1 groups ahead of its stores. That is safe because every word a chain overwrites it has read itself at
// the same or an earlier step (pairs above): a load may happen any time before the group's wait, a store only after it.
// On the device the stage is shared memory filled by asynchronous copies, so the loads in flight are not bounded by
// registers; the two cursors (loads and stores) recompute the inner offsets instead of keeping them.
// The batch's last step, the only one that reads scratch (the saved boundary, or the middle at t = lo) or
// has no lane 0 (t = lo), has the two slots after the ring, so the ring's steps have no special cases.
template <class Word, int D, class Inner, int G, int R, class Stage>
SFFT_HD void chain_walk(Word *data, const Word *saved, const PairPlan &p, std::size_t g, Stage &stage) {
  // One batch or one outer element (4-D, 5-D arrays) takes no 64-bit division: a chain of a few steps pays for
  // every instruction of its setup.
  const auto k = static_cast<int64_t>(p.batches == 1 ? 0 : g / p.slab);
  const std::size_t x = g - static_cast<std::size_t>(k) * p.slab, o = p.O == 1 ? 0 : x / p.S, so = outer_image(p, o);
  const int64_t b = batch_begin(p, k), last = batch_end(p, k) - 1;
  // Inner digits (one cursor for loads, one for stores) and the per-dim additions of π, π^-1 and one chain
  // step (π^-2), modulo the extent.
  Inner load_dg[D], store_dg[D], e[D], add1[D], addm1[D], addm2[D], stride[D];
  auto rem = static_cast<Inner>(x - o * p.S);
  SFFT_UNROLL
  for (int d = D - 1; d >= 0; --d) {
    const int real = d - (D - p.inner_dims);  // the inner dim of walk dim d, < 0 for padding
    const int64_t ext = real >= 0 ? p.inner_e[real] : 1, s = real >= 0 ? p.inner_s[real] : 0;
    e[d] = static_cast<Inner>(ext);
    stride[d] = d == D - 1 ? 1 : real >= 0 ? static_cast<Inner>(p.inner_stride[real]) : 0;
    Inner quotient = 0;
    if constexpr (sizeof(Inner) == 4)
      quotient = real >= 0 ? p.inner_div[real].div(rem) : rem;
    else
      quotient = rem / e[d];
    load_dg[d] = store_dg[d] = rem - quotient * e[d];
    rem = quotient;
    add1[d] = static_cast<Inner>(s);
    addm1[d] = static_cast<Inner>(s == 0 ? 0 : ext - s);
    addm2[d] = static_cast<Inner>(real >= 0 ? p.inner_step[real] : 0);
  }
  const auto wrap = [](Inner v, Inner ext) { return v >= ext ? v - ext : v; };
  // Offsets (words) of the three blocks of a step, at step b, and the distance of one step.
  const int64_t block = p.rev ? -static_cast<int64_t>(p.S) : static_cast<int64_t>(p.S);
  const auto own = static_cast<int64_t>(word_at(p, o, b, 0));
  const int64_t to1 = static_cast<int64_t>(word_at(p, so, b + p.lo, 0)) - own;
  const int64_t from0 = to1 + block;  // (σ o, t + lo + 1); past the axis at t = lo, never read there
  // The ring: steps b .. last - 1, lane 1 and lane 0 both in the data.
  const int64_t steps = last - b, groups = (steps + G - 1) / G;
  int64_t load_own = own, store_own = own;
  // The load cursor's offsets of (o, t) and of (σ o, t + lo + 1) from its block; `advance` steps the cursor.
  struct LoadOffsets {
    Inner at, back;
  };
  const auto load_offsets = [&](bool advance) {
    LoadOffsets off{0, 0};
    SFFT_UNROLL
    for (int d = 0; d < D; ++d) {
      off.at += load_dg[d] * stride[d];
      off.back += wrap(load_dg[d] + addm1[d], e[d]) * stride[d];
      if (advance) load_dg[d] = wrap(load_dg[d] + addm2[d], e[d]);
    }
    return off;
  };
  // The last step's two words, into the two slots after the ring, with the ring's last group (the load
  // cursor is there then): nothing overwrites them before the last step's own stores.
  const auto fetch_last = [&] {
    const auto [at, back] = load_offsets(false);
    stage.fetch(2 * G * R + 1, last == p.lo ? saved + saved_at(p, 0, o, 0) + at : data + load_own + at);
    if (last < p.lo) stage.fetch(2 * G * R, saved + saved_at(p, k + 1, so, 0) + back);
  };
  const auto fetch_group = [&](int64_t j) {
    const int slot = static_cast<int>(static_cast<uint64_t>(j) % R) * 2 * G;
    SFFT_UNROLL
    for (int u = 0; u < G; ++u) {
      if (j * G + u >= steps) break;
      const auto [at, back] = load_offsets(true);
      stage.fetch(slot + 2 * u + 1, data + load_own + at);
      stage.fetch(slot + 2 * u, data + load_own + from0 + back);
      load_own += block;
    }
    if (j + 1 == groups) fetch_last();
  };
  if (groups == 0) fetch_last();
  for (int64_t j = 0; j + 1 < R; ++j) {
    if (j < groups) fetch_group(j);
    stage.commit();
  }
  const auto store_step = [&](Word v1, Word v0, bool has0) {
    Inner at = 0, fwd = 0;
    SFFT_UNROLL
    for (int d = 0; d < D; ++d) {
      at += store_dg[d] * stride[d];
      fwd += wrap(store_dg[d] + add1[d], e[d]) * stride[d];
      store_dg[d] = wrap(store_dg[d] + addm2[d], e[d]);
    }
    stage.store(data + store_own + to1 + fwd, v1);
    if (has0) stage.store(data + store_own + at, v0);
    store_own += block;
  };
  for (int64_t j = 0; j < groups; ++j) {
    if (j + R - 1 < groups) fetch_group(j + R - 1);
    stage.commit();
    stage.wait();  // group j has landed
    const int slot = static_cast<int>(static_cast<uint64_t>(j) % R) * 2 * G;
    SFFT_UNROLL
    for (int u = 0; u < G; ++u) {
      if (j * G + u >= steps) break;
      store_step(stage.get(slot + 2 * u + 1), stage.get(slot + 2 * u), true);
    }
  }
  stage.drain();
  store_step(stage.get(2 * G * R + 1), stage.get(2 * G * R), last < p.lo);
}

// Which chain each CUDA thread walks. In thread order the 32 chains of a warp straddle rows (the last inner dim, L
// words) where there are several inner dims, and each row's piece moves to a row of its own and wraps on its own
// there: a warp's access falls into up to four runs. Where rows are at least a warp long and their padding to
// whole warps idles at most one lane in 32 (a chain costs its instructions whether its warp is full or not), each
// row is padded instead, so that every warp walks consecutive columns of one row and each of its accesses is one
// run (split at most where the row wraps). H100, same call, two rounds, % of a device copy: 511^3 float32 81 -> 83,
// float64 83 -> 84.5 (rows of 511: one idle lane). Rows further from whole warps lost more to idle lanes than they
// gained (5-D 29x31x37x41x43, rows of 43: float32 70 -> 50.5 padded, 63 with the rows' tails packed into shared
// warps; 4-D 63x65x67x69 float32 72 -> 67.5 packed). One inner dim (a row is a whole region of chains) or other
// rows: thread j walks chain j.
constexpr uint32_t kChainWarp = 32;

struct ChainLanes {
  uint32_t L = 0;            // row length; 0: thread j walks chain j
  uint32_t row_threads = 0;  // L rounded up to whole warps
  std::size_t threads = 0;   // threads to launch
};

inline ChainLanes make_chain_lanes(const PairPlan &p) {
  ChainLanes c;
  c.threads = p.scratch_words;
  if (p.inner_dims < 2) return c;
  const auto L = static_cast<std::size_t>(p.inner_e[p.inner_dims - 1]);
  const std::size_t row_threads = (L + kChainWarp - 1) / kChainWarp * kChainWarp;
  if (L < kChainWarp || (row_threads - L) * kChainWarp > L || row_threads > UINT32_MAX) return c;
  c.L = static_cast<uint32_t>(L);
  c.row_threads = static_cast<uint32_t>(row_threads);
  c.threads = p.scratch_words / L * row_threads;  // every row of every (batch, outer element), padded
  return c;
}

// The chain g (< p.scratch_words) of thread j, or false for a thread without one (past c.threads, the grid's
// last block, or an idle lane past a row's end).
SFFT_HD bool chain_of_thread(const ChainLanes &c, std::size_t j, std::size_t &g) {
  if (j >= c.threads) return false;
  if (c.L == 0) {
    g = j;
    return true;
  }
  const std::size_t row = j / c.row_threads;
  const auto column = static_cast<uint32_t>(j - row * c.row_threads);
  g = row * c.L + column;
  return column < c.L;
}

// Tiles: per outer element o of batch k, the offsets of (o, b), (σ o, b + lo), (σ^-1 o, b + lo + 1) (the last
// unread when b = lo) and σ^-1 o.
struct TileBases {
  int64_t own, to1, from0;
  std::size_t back_o;
};

SFFT_HD TileBases tile_bases(const PairPlan &p, int64_t k, std::size_t o) {
  const int64_t b = batch_begin(p, k);
  const std::size_t back_o = outer_image(p, o, -1);
  return {static_cast<int64_t>(word_at(p, o, b, 0)),
          static_cast<int64_t>(word_at(p, outer_image(p, o, 1), b + p.lo, 0)),
          static_cast<int64_t>(word_at(p, back_o, b + p.lo + 1, 0)), back_o};
}

// Loads of element (o, i) at step t of batch k, `dist` words from the batch's first step (negative when p.rev)
// and end = batch_end(p, k) (tile bases tb of o; back_i = π^-1 i): lane 1's value, and lane 0's if it has one
// (the return value). Lane 1 stores at tb.to1 + dist + π i, lane 0 at tb.own + dist + i.
template <class Word>
SFFT_HD bool tile_element_load(const PairPlan &p, int64_t k, const TileBases &tb, std::size_t o, int64_t t, int64_t end,
                               int64_t dist, std::size_t i, std::size_t back_i, const Word *data, const Word *saved,
                               Word *v1, Word *v0) {
  *v1 = t == p.lo ? load_saved(saved + saved_at(p, 0, o, i)) : data[tb.own + dist + static_cast<int64_t>(i)];
  if (t >= p.lo) return false;
  *v0 = t + 1 == end ? load_saved(saved + saved_at(p, k + 1, tb.back_o, back_i))
                     : data[tb.from0 + dist + static_cast<int64_t>(back_i)];
  return true;
}

}  // namespace sfft::shift
