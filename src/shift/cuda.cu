// SPDX-License-Identifier: Apache-2.0
// CUDA backend of fftshift/ifftshift.
//  - out of place: one read and one write per word, in tiles of consecutive output words; 4- and 8-byte words
//    gathered into shared memory and stored as aligned 16-byte vectors, 16-byte words (and outputs not 16-byte
//    aligned) stored by the threads that load them.
//  - in place, involution (all shifts 0 or half the extent, e.g. every even extent): disjoint swaps.
//  - in place with the first axis unshifted or shifted by half over blocks that fit in shared memory: tiles of
//    whole blocks (and their partners) staged and written back shifted (4-byte words as 16-byte vectors).
//  - in place with one short odd extent (n words of A under 64 bytes) and every other shift 0 or half: orbits of
//    2 n words (orbits.hpp), each loaded whole by one thread and stored shifted; no scratch.
//  - in place otherwise (an odd extent is shifted): the pair order of pairs.hpp (docs/shift.md), one pass of
//    independent items after the batches' boundary slabs are saved: chains (a thread per chain) for inner
//    blocks of 32 words and more, a rotation staged in shared memory for a lone odd axis of 4- or 8-byte
//    words (and for one under rows that the outer shifts swap, or move among a few), tiles otherwise. It
//    replaced the cycle-wave and chunk orders, which it beat on every odd in-place row of the H100 suite but
//    two (c128 511^3 ax0 and ax0,2, within 5 %).
// Host pointers are staged through stream-ordered device buffers.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "common/backend.hpp"
#include "common/cuda_util.cuh"
#include "common/env.hpp"
#include "shift/orbits.hpp"
#include "shift/pairs.hpp"
#include "shift/shift.hpp"

namespace sfft::shift {
namespace {

constexpr unsigned kBlock = 256;

// (j - s) mod L for j, s < L, in the caller's integer width.
template <class Index>
__device__ __forceinline__ Index wrap_sub(Index j, Index s, Index L) {
  return j >= s ? j - s : j + L - s;
}

// source_row (shift.hpp) with multiply-high divisions while row indices fit 32 bits: a tile of short rows
// computes hundreds of them before its first load, and 64-bit divisions made that a visible latency.
struct RowSource {
  FastDiv32 extent[kMaxDims];
  bool fast = false;
  explicit RowSource(const Layout &l) {
    fast = l.words / static_cast<std::size_t>(l.extent[l.ndim - 1]) <= UINT32_MAX;
    for (int d = 0; fast && d + 1 < l.ndim; ++d) extent[d] = FastDiv32(static_cast<uint32_t>(l.extent[d]));
  }
  __device__ std::size_t operator()(const Layout &l, std::size_t row) const {
    if (!fast) return source_row(l, row);
    auto r = static_cast<uint32_t>(row);
    std::size_t src = 0, stride = static_cast<std::size_t>(l.extent[l.ndim - 1]);
    for (int d = l.ndim - 2; d >= 0; --d) {
      const auto e = static_cast<uint32_t>(l.extent[d]), s = static_cast<uint32_t>(l.shift[d]);
      const uint32_t q = extent[d].div(r), i = r - q * e;
      r = q;
      src += (i >= s ? i - s : i + e - s) * stride;
      stride *= e;
    }
    return src;
  }
};

// The layout and row divisors are indexed by run-time dims: kernel parameters indexed so are copied to
// per-thread local memory, a traffic of its own; one shared copy per block instead.
struct SharedRows {
  Layout l;
  RowSource rows;
};

__device__ __forceinline__ const SharedRows &share_rows(unsigned char *bytes, const Layout &l, const RowSource &rows) {
  if (threadIdx.x == 0) {
    memcpy(bytes, &l, sizeof l);
    memcpy(bytes + offsetof(SharedRows, rows), &rows, sizeof rows);
  }
  return *reinterpret_cast<const SharedRows *>(bytes);  // read after the tile loop's first barrier
}

// Out of place. A tile is kCopyPerThread<Word> x kBlock consecutive output words (16 KiB): consecutive threads
// gather consecutive words (runs of source rows, coalesced loads, all of a thread's in flight at once). kStaged
// (4- and 8-byte words into a 16-byte aligned output): the words go to a shared stage in output order, and after
// one barrier the tile leaves as aligned 16-byte stores; otherwise (16-byte words, unaligned outputs) each thread
// stores its own words, consecutive threads consecutive words. A thread's words are kBlock apart: one
// multiply-high division places its first, then each next one steps its row, column and source column in 32
// bits; a block steps from tile to tile the same way. With a division and 64-bit index arithmetic per word
// (and two 64-bit divisions per tile) the kernel was issue-bound (H200 ncu, 511^3 float32: 59 % of DRAM
// bandwidth, about 48 instructions a word). Same-call A/B against that kernel (H200, bench_shift, 2026-11-29):
// float32 511^3 80 -> 91-92 %, 5-D 79-80 -> 91-92 %, (2^24+1)x5 72 -> 87 % of a device copy; float32 rows longer
// than a tile, which took a kernel of aligned 16-byte source vectors funnelled across lanes, 8192x8191 86 -> 91-92
// %; 16-byte words, which took a word-by-word kernel, 90-91 -> 91-93 %; 8-byte words unchanged.
template <class Word>
constexpr unsigned kCopyPerThread = 64 / sizeof(Word);
template <class Word>
constexpr unsigned kCopyTileWords = kBlock *kCopyPerThread<Word>;

struct CopyTiles {
  std::size_t words, L, shift, tiles;
  FastDiv32 by_L;                 // valid when L <= the tile (longer rows: a tile's word is in its first or second row)
  uint32_t step_rows, step_cols;  // kBlock words on: kBlock / L rows and kBlock % L columns
  std::size_t tile_step_rows, tile_step_cols;  // the same for the grid's stride of gridDim.x tiles
  FastDiv32 by_E;                              // RowSources::kPlanes: the extent E of the dim above the rows
};

// Where each output row's source row comes from:
//  - kTable: a table of the tile's rows in shared memory (source_row of each: a division per dim above the rows);
//  - kOneDim (one dim above the rows): the row's index shifted along that dim, worked out per word;
//  - kPlanes (several dims above rows of a few words): a table of the tile's planes (E rows each, the dim E above
//    the rows), and within a plane the row's index shifted along E, stepped per word with the word's row.
enum class RowSources { kTable, kOneDim, kPlanes };

// A thread's kPer words of a copy tile, kBlock apart from its first (in-tile row `row`, column `col`): each
// next one steps the row, the column and the source column (col - shift mod L), without a division.
template <class Index, class Word, unsigned kPer, class RowOffset>
__device__ __forceinline__ void gather_words(Word (&v)[kPer], const Word *__restrict__ in, const RowOffset &src_row,
                                             Index row, Index col, Index L, Index shift, Index step_rows,
                                             Index step_cols, unsigned count) {
  Index source = wrap_sub(col, shift, L);
#pragma unroll
  for (unsigned j = 0; j < kPer; ++j) {
    if (threadIdx.x + j * kBlock >= count) break;
    v[j] = __ldg(in + src_row(row) + source);
    row += step_rows;
    col += step_cols;
    if (col >= L) col -= L, ++row;
    source += step_cols;
    if (source >= L) source -= L;
  }
}

template <class Word, bool kStaged, RowSources kRows>
__global__ void __launch_bounds__(kBlock)
    copy_kernel(Word *__restrict__ out, const Word *__restrict__ in, Layout l_arg, CopyTiles g, RowSource rows_arg) {
  constexpr unsigned kPer = kCopyPerThread<Word>, kTile = kCopyTileWords<Word>;
  constexpr unsigned kWordsPerVector = 16 / sizeof(Word), kVectorsPerThread = kPer / kWordsPerVector;
  constexpr bool kOneOuterDim = kRows == RowSources::kOneDim, kPlanes = kRows == RowSources::kPlanes;
  static_assert(!kStaged || sizeof(Word) < 16, "16-byte words are stored as they are");
  __shared__ __align__(16) Word stage[kStaged ? kTile : 1];
  __shared__ std::size_t src_row[kOneOuterDim ? 1 : kTile / 2 + 2];  // rows (or planes) have >= 2 words
  __shared__ __align__(16) unsigned char shared_bytes[sizeof(SharedRows)];
  const SharedRows &sh = share_rows(shared_bytes, l_arg, rows_arg);
  const std::size_t L = g.L, shift = g.shift;
  const bool short_rows = L <= kTile;
  // The tile's first row and its column there: divided once, then stepped with the tile (64-bit divisions cost
  // a few hundred instructions a thread).
  std::size_t row0 = blockIdx.x * std::size_t{kTile} / L, first = blockIdx.x * std::size_t{kTile} - row0 * L;
  const auto next_tile = [&] {
    row0 += g.tile_step_rows;
    first += g.tile_step_cols;
    if (first >= L) first -= L, ++row0;
  };
  for (std::size_t tile = blockIdx.x; tile < g.tiles; tile += gridDim.x, next_tile()) {
    const std::size_t start = tile * kTile;
    const auto count = static_cast<unsigned>(min(g.words - start, std::size_t{kTile}));
    __syncthreads();  // the previous tile's stores have read the stage and src_row
    // kOneOuterDim (one dim above the rows, rows of a few words): a row's source is its index shifted along that
    // dim, worked out per word instead of a table of hundreds of rows, which took a pass and a barrier.
    const std::size_t outer = kOneOuterDim ? static_cast<std::size_t>(sh.l.extent[0]) : 0;
    const std::size_t base =
        kOneOuterDim ? wrap_sub<std::size_t>(row0, static_cast<std::size_t>(sh.l.shift[0]), outer) : 0;
    const auto row_offset = [&](std::size_t r) {
      if constexpr (kOneOuterDim) {
        std::size_t t = base + r;
        return (t >= outer ? t - outer : t) * L;
      } else {
        return src_row[r];
      }
    };
    // kPlanes: E rows a plane (rows fit 32 bits), the tile's first row at index row0_at of its plane.
    const uint32_t E = kPlanes ? g.by_E.d : 1, shift_E = kPlanes ? static_cast<uint32_t>(sh.l.shift[sh.l.ndim - 2]) : 0;
    uint32_t row0_at = 0;
    if constexpr (!kOneOuterDim) {
      const std::size_t last = first + count - 1;  // the tile's last word, from the start of row row0
      const std::size_t nrows = short_rows ? g.by_L.div(static_cast<uint32_t>(last)) + 1 : (last >= L ? 2 : 1);
      if constexpr (kPlanes) {
        const uint32_t plane0 = g.by_E.div(static_cast<uint32_t>(row0));
        row0_at = static_cast<uint32_t>(row0) - plane0 * E;
        const uint32_t planes = g.by_E.div(row0_at + static_cast<uint32_t>(nrows) - 1) + 1;
        // Row shift_E of a plane has index 0 along E in its source: the offset of the source plane.
        for (uint32_t q = threadIdx.x; q < planes; q += blockDim.x)
          src_row[q] = sh.rows(sh.l, static_cast<std::size_t>(plane0 + q) * E + shift_E);
      } else {
        for (std::size_t r = threadIdx.x; r < nrows; r += blockDim.x) src_row[r] = sh.rows(sh.l, row0 + r);
      }
      __syncthreads();
    }
    Word v[kPer];
    if (kPlanes || short_rows) {
      const auto o = static_cast<uint32_t>(first + threadIdx.x), L32 = static_cast<uint32_t>(L);  // o < 2 kTile
      const uint32_t row = g.by_L.div(o), col = o - row * L32;
      if constexpr (kPlanes) {
        // The word's plane (in the tile), its row's index along E and that index's source, stepped with the row
        // (a step of at most E rows: shift_on_device).
        uint32_t at = row, index = row0_at + row, plane = g.by_E.div(index);
        index -= plane * E;
        uint32_t source = wrap_sub(index, shift_E, E);
        const auto plane_row_offset = [&](uint32_t r) {
          const uint32_t step = r - at;
          at = r;
          index += step;
          if (index >= E) index -= E, ++plane;
          source += step;
          if (source >= E) source -= E;
          return src_row[plane] + static_cast<std::size_t>(source) * L32;
        };
        gather_words<uint32_t>(v, in, plane_row_offset, row, col, L32, static_cast<uint32_t>(shift), g.step_rows,
                               g.step_cols, count);
      } else {
        gather_words<uint32_t>(v, in, row_offset, row, col, L32, static_cast<uint32_t>(shift), g.step_rows, g.step_cols,
                               count);
      }
    } else {  // first < L, so the thread's first word is in the tile's first or second row
      const std::size_t o = first + threadIdx.x, row = o >= L ? 1 : 0;
      gather_words<std::size_t>(v, in, row_offset, row, o - row * L, L, shift, g.step_rows, g.step_cols, count);
    }
#pragma unroll
    for (unsigned j = 0; j < kPer; ++j) {
      const unsigned c = threadIdx.x + j * kBlock;
      if (c >= count) break;
      if constexpr (kStaged) {
        stage[c] = v[j];
      } else {
        out[start + c] = v[j];
      }
    }
    if constexpr (!kStaged) continue;
    __syncthreads();
#pragma unroll
    for (unsigned j = 0; j < kVectorsPerThread; ++j) {
      const unsigned c = kWordsPerVector * (threadIdx.x + j * kBlock);
      if (c + kWordsPerVector <= count)
        *reinterpret_cast<uint4 *>(out + start + c) = *reinterpret_cast<const uint4 *>(stage + c);
      else
        for (unsigned e = c; e < count; ++e) out[start + e] = stage[e];
    }
  }
}

// ---- in place, an involution (every shift 0 or half its extent): disjoint swaps

// Let A be the first shifted dim (the dims before it are unshifted) and S the words of one index of A. A word whose
// A index lies in the lower half swaps with its partner: A index E/2 higher, inner index shifted by the later dims.
// The lower words are one run of (E/2) S words per outer index; they are tiled like the copy kernel's output, as
// virtual rows of W words: whole rows of the last dim (W = L, a table of each row's offset and its partner's), or,
// when A is the last dim, the first half of every row (W = L / 2, the partner L / 2 further on). A thread loads
// its words and their partners (kBlock apart, stepped without division), then stores both: pairs are disjoint,
// so no barrier. The kernel before this tiled every row and left the upper half's tiles idle, with a 64-bit
// division a word: H200, in place, % of a device copy: 4096^2 float32 / float64 and 2^25 float32 74-77 (data of
// 64-128 MiB; 256 MiB and more 89-94).
struct SwapTiles {
  std::size_t words;                // lower words, half of all
  std::size_t W, L, shift;          // virtual row width; the last dim's extent and shift
  std::size_t run_rows;             // lower rows of an outer index; 0 when A is the last dim (no tables)
  std::size_t tiles, table_rows;    // table_rows: the rows a tile spans at most (0 without tables)
  FastDiv32 by_W;                   // valid when W <= the tile
  uint32_t step_rows, step_cols;    // kBlock words on: kBlock / W rows and kBlock % W columns
  std::size_t tile_step_rows, tile_step_cols;  // the same for the grid's stride of gridDim.x tiles
};

// A thread's words of a swap tile and their partners, from in-tile row `row`, column `col`. `offsets(r)` gives
// row r's offset and its partner row's.
template <class Index, class Word, unsigned kPer, class Offsets>
__device__ __forceinline__ void swap_words(Word *data, const Offsets &offsets, const SwapTiles &g, Index row,
                                           Index col, unsigned count) {
  const auto W = static_cast<Index>(g.W), L = static_cast<Index>(g.L), shift = static_cast<Index>(g.shift);
  const auto step_rows = static_cast<Index>(g.step_rows), step_cols = static_cast<Index>(g.step_cols);
  Word a[kPer], b[kPer];
  Index r = row, c = col;
#pragma unroll
  for (unsigned j = 0; j < kPer; ++j) {
    if (threadIdx.x + j * kBlock >= count) break;
    const auto rows = offsets(r);
    const Index partner_col = c + shift >= L ? c + shift - L : c + shift;
    a[j] = data[rows.x + c];
    b[j] = data[rows.y + partner_col];
    r += step_rows;
    c += step_cols;
    if (c >= W) c -= W, ++r;
  }
  r = row;
  c = col;
#pragma unroll
  for (unsigned j = 0; j < kPer; ++j) {
    if (threadIdx.x + j * kBlock >= count) break;
    const auto rows = offsets(r);
    const Index partner_col = c + shift >= L ? c + shift - L : c + shift;
    data[rows.x + c] = b[j];
    data[rows.y + partner_col] = a[j];
    r += step_rows;
    c += step_cols;
    if (c >= W) c -= W, ++r;
  }
}

template <class Word, bool kTables>
__global__ void __launch_bounds__(kBlock)
    swap_kernel(Word *__restrict__ data, Layout l_arg, SwapTiles g, RowSource rows_arg) {
  constexpr unsigned kPer = kCopyPerThread<Word>, kTile = kCopyTileWords<Word>;
  extern __shared__ std::size_t row_table[];  // kTables: the tile's row offsets, then their partners'
  __shared__ __align__(16) unsigned char shared_bytes[sizeof(SharedRows)];
  const SharedRows &sh = share_rows(shared_bytes, l_arg, rows_arg);
  std::size_t *const own_row = row_table, *const partner_row = row_table + g.table_rows;
  const std::size_t W = g.W, L = g.L;
  const bool short_rows = W <= kTile;
  std::size_t row0 = blockIdx.x * std::size_t{kTile} / W, first = blockIdx.x * std::size_t{kTile} - row0 * W;
  for (std::size_t tile = blockIdx.x; tile < g.tiles; tile += gridDim.x) {
    const auto count = static_cast<unsigned>(min(g.words - tile * kTile, std::size_t{kTile}));
    if constexpr (kTables) {
      const std::size_t last = first + count - 1;  // the tile's last word, from the start of row row0
      const std::size_t nrows = short_rows ? g.by_W.div(static_cast<uint32_t>(last)) + 1 : (last >= W ? 2 : 1);
      __syncthreads();  // the previous tile's words have read the tables
      for (std::size_t r = threadIdx.x; r < nrows; r += blockDim.x) {
        const std::size_t v = row0 + r, row = v + v / g.run_rows * g.run_rows;
        own_row[r] = row * L;
        partner_row[r] = sh.rows(sh.l, row);
      }
      __syncthreads();
    }
    const auto offsets = [&](auto r) {
      if constexpr (kTables) {
        return make_ulonglong2(own_row[r], partner_row[r]);
      } else {  // A is the last dim: the partner is in the same row
        const std::size_t own = (row0 + r) * L;
        return make_ulonglong2(own, own);
      }
    };
    if (short_rows) {
      const auto o = static_cast<uint32_t>(first + threadIdx.x);  // < 2 kTile
      const uint32_t row = g.by_W.div(o);
      swap_words<uint32_t, Word, kPer>(data, offsets, g, row, o - row * static_cast<uint32_t>(W), count);
    } else {  // first < W: the thread's first word is in the tile's first or second row
      const std::size_t o = first + threadIdx.x, row = o >= W ? 1 : 0;
      swap_words<std::size_t, Word, kPer>(data, offsets, g, row, o - row * W, count);
    }
    row0 += g.tile_step_rows;
    first += g.tile_step_cols;
    if (first >= W) first -= W, ++row0;
  }
}

template <class Word>
void swap_in_place(Word *data, const Layout &l, cudaStream_t stream) {
  constexpr std::size_t kTile = kCopyTileWords<Word>;
  int a = 0;
  while (l.shift[a] == 0) ++a;  // an involution that moves anything has a shifted dim
  std::size_t inner = 1;        // S: the words of one index of A
  for (int d = a + 1; d < l.ndim; ++d) inner *= static_cast<std::size_t>(l.extent[d]);
  const bool tables = a + 1 < l.ndim;
  SwapTiles g{};
  g.L = static_cast<std::size_t>(l.extent[l.ndim - 1]);
  g.shift = static_cast<std::size_t>(l.shift[l.ndim - 1]);
  g.W = tables ? g.L : g.L / 2;
  g.run_rows = tables ? static_cast<std::size_t>(l.extent[a]) / 2 * inner / g.L : 0;
  g.words = l.words / 2;
  g.tiles = (g.words + kTile - 1) / kTile;
  const bool short_rows = g.W <= kTile;
  g.table_rows = !tables ? 0 : short_rows ? kTile / g.W + 2 : 2;
  g.by_W = FastDiv32(short_rows ? static_cast<uint32_t>(g.W) : 1u);
  g.step_rows = short_rows ? static_cast<uint32_t>(kBlock / g.W) : 0u;
  g.step_cols = short_rows ? static_cast<uint32_t>(kBlock % g.W) : kBlock;
  const unsigned grid = cuda::grid_for(g.tiles * kBlock, kBlock);
  const std::size_t stride = std::size_t{grid} * kTile;
  g.tile_step_rows = stride / g.W;
  g.tile_step_cols = stride % g.W;
  const std::size_t table_bytes = 2 * g.table_rows * sizeof(std::size_t);  // at most 33 KiB (float32, L = 2)
  if (tables)
    swap_kernel<Word, true><<<grid, kBlock, table_bytes, stream>>>(data, l, g, RowSource(l));
  else
    swap_kernel<Word, false><<<grid, kBlock, 0, stream>>>(data, l, g, RowSource(l));
  SFFT_CUDA_CHECK_LAUNCH();
}

// ---- in place, one short odd dim, every other shift 0 or half: orbits (orbits.hpp)

// A thread takes kOrbitsPerThread orbits kBlock apart and loads all their words before it stores any: 2 n loads an
// orbit in flight, consecutive threads on consecutive words of every slab of A.
constexpr unsigned kOrbitsPerThread = 2;

// A is short enough for a thread to hold its orbits in registers while n words of A take less than 64 bytes:
// float32 n <= 15, 8-byte words n <= 7, 16-byte words n = 3 (at most 64 registers of words a thread).
template <class Word>
constexpr int kMaxOrbitExtent = static_cast<int>(64 / sizeof(Word)) - 1;

// Warps read runs of at least 128 bytes of a row (a shorter last dim takes the pair order).
constexpr std::size_t kOrbitMinRunBytes = 128;

template <class Word, int kMaxN, bool kPaired, bool kFast32>
__global__ void __launch_bounds__(kBlock) orbit_kernel(Word *__restrict__ data, const __grid_constant__ OrbitPlan p) {
  const auto n = static_cast<int>(p.n), s = static_cast<int>(p.s);
  const std::size_t a_stride = p.a_stride;
  for (std::size_t first = std::size_t{blockIdx.x} * kBlock * kOrbitsPerThread + threadIdx.x; first < p.orbits;
       first += std::size_t{gridDim.x} * kBlock * kOrbitsPerThread) {
    std::size_t own[kOrbitsPerThread], partner[kOrbitsPerThread];
    Word a[kOrbitsPerThread][kMaxN], b[kOrbitsPerThread][kPaired ? kMaxN : 1];
#pragma unroll
    for (unsigned j = 0; j < kOrbitsPerThread; ++j) {
      const std::size_t q = first + std::size_t{j} * kBlock;
      if (q >= p.orbits) break;
      orbit_at<kFast32>(p, q, own[j], partner[j]);
#pragma unroll
      for (int v = 0; v < kMaxN; ++v) {
        if (v >= n) break;
        a[j][v] = data[own[j] + v * a_stride];
        if constexpr (kPaired) b[j][v] = data[partner[j] + v * a_stride];
      }
    }
#pragma unroll
    for (unsigned j = 0; j < kOrbitsPerThread; ++j) {
      if (first + std::size_t{j} * kBlock >= p.orbits) break;
      int to = s;  // where v lands along A
#pragma unroll
      for (int v = 0; v < kMaxN; ++v) {
        if (v >= n) break;
        data[partner[j] + to * a_stride] = a[j][v];
        if constexpr (kPaired) data[own[j] + to * a_stride] = b[j][v];
        if (++to == n) to = 0;
      }
    }
  }
}

template <class Word, int kMaxN>
void launch_orbits(Word *data, const OrbitPlan &p, cudaStream_t stream) {
  const unsigned grid = cuda::grid_for((p.orbits + kOrbitsPerThread - 1) / kOrbitsPerThread, kBlock);
  if (p.paired && p.fast32) orbit_kernel<Word, kMaxN, true, true><<<grid, kBlock, 0, stream>>>(data, p);
  if (p.paired && !p.fast32) orbit_kernel<Word, kMaxN, true, false><<<grid, kBlock, 0, stream>>>(data, p);
  if (!p.paired && p.fast32) orbit_kernel<Word, kMaxN, false, true><<<grid, kBlock, 0, stream>>>(data, p);
  if (!p.paired && !p.fast32) orbit_kernel<Word, kMaxN, false, false><<<grid, kBlock, 0, stream>>>(data, p);
  SFFT_CUDA_CHECK_LAUNCH();
}

// True when the layout qualifies (make_orbit_plan) and the shift is launched. An A too long for the words' orbits
// may fit in narrower words (5 planes of 16-byte words as 8-byte ones).
template <class Word>
bool orbits_in_place(Word *data, const Layout &l, cudaStream_t stream) {
  OrbitPlan p;
  if (!make_orbit_plan(l, kMaxOrbitExtent<Word>, kOrbitMinRunBytes / sizeof(Word), p)) {
    if constexpr (sizeof(Word) == 16)
      return orbits_in_place(reinterpret_cast<uint2 *>(data), narrow_words(l, 2), stream);
    if constexpr (sizeof(Word) == 8)
      return orbits_in_place(reinterpret_cast<uint32_t *>(data), narrow_words(l, 2), stream);
    return false;
  }
  if (p.n <= 3)
    launch_orbits<Word, 3>(data, p, stream);
  else if constexpr (kMaxOrbitExtent<Word> >= 7) {
    if (p.n <= 7)
      launch_orbits<Word, 7>(data, p, stream);
    else if constexpr (kMaxOrbitExtent<Word> >= 15)
      launch_orbits<Word, 15>(data, p, stream);
  }
  return true;
}

// ---- in place, a leading unshifted or half-shifted dim over small blocks

// With dim 0 unshifted, each block out[o] (the words of one index o of dim 0) is a permutation of in[o] alone;
// with dim 0 shifted by half its (even) extent E, of in[o + E/2 mod E]: blocks o and o + E/2 trade places. Where
// a block (or such a pair) fits in shared memory a CTA takes a tile of whole blocks (and their partners, a second
// run of the same length E/2 blocks on): it reads the tile into a stage (coalesced, every word once), waits at a
// barrier, and writes the tile back shifted, gathering each output word from the stage (a multiply-high row
// division, a tile-local row table and the wrap). No scratch, no ordering between CTAs. E.g. shifting only the
// last axis of a batch of rows: 511^3 with axis 2 went through the pair order's tiles at 44-75 % of a device
// copy (H200).
constexpr std::size_t kBlockStageMaxBytes = 96 * 1024;   // stage and row table; 2 CTAs per SM at the most
constexpr std::size_t kBlockStageTileBytes = 32 * 1024;  // whole blocks up to this much per tile

// Threads per CTA: 512 where shared memory leaves room for at most four CTAs a SM, 256 otherwise. H200,
// `bench_shift --repeat 10 --mode inplace`, same-call A/B, two rounds, % of a device copy: 512 threads took
// rows of 8191 8-byte words (a 64 KiB stage, three CTAs a SM) from 82.5-83.6 to 89.9-90.6 and the float32 row
// pairs of 8192x8191 from 68.8-69.2 to 72.0-72.3, but float32 rows (32 KiB, six CTAs) from 78.4-79.5 to
// 68.5-71.9. Four and five CTAs were not measured; the bound sits between the two.
constexpr unsigned kStageWideThreads = 512;
constexpr std::size_t kStageWideMaxCtas = 4;

struct BlockStage {
  std::size_t run_words, partner, tile, tiles;  // words of the first runs' domain, the partner run's offset (0:
                                                // none), words per run and tile (whole blocks), tiles
  uint32_t L, shift, tile_rows;                 // last dim; rows per run and tile
  FastDiv32 by_L;
};

// A run's stage in the vector kernel: its words, the lead that keeps data vectors aligned in the stage (up to 12
// bytes) and the funnel's read past the run's end, in whole vectors.
constexpr std::size_t kStagePadBytes = 32;
__host__ __device__ constexpr std::size_t stage_pitch_bytes(std::size_t run_bytes) {
  return (run_bytes + kStagePadBytes + 15) & ~std::size_t{15};
}

// The launch beside the kernel's argument: kept out of BlockStage, whose size the kernel pays for (a larger
// argument made the 256-thread stage 3-5 points slower, H200).
struct BlockStageLaunch {
  BlockStage g;
  std::size_t stage_bytes;  // dynamic shared memory: the stage and its row table
  unsigned threads;         // per CTA
};

// The tile layout for words of `word_bytes` bytes, or g.tile == 0 when the layout does not qualify.
BlockStageLaunch block_stage(const Layout &l, std::size_t word_bytes) {
  BlockStageLaunch launch{};
  BlockStage &g = launch.g;
  if (l.ndim < 2 || moves_oddly(l, 0)) return launch;
  const std::size_t runs = l.shift[0] != 0 ? 2 : 1;
  const auto L = static_cast<std::size_t>(l.extent[l.ndim - 1]);
  const std::size_t block = l.words / static_cast<std::size_t>(l.extent[0]);
  const std::size_t block_bytes = runs * (block * word_bytes + kStagePadBytes + block / L * sizeof(uint32_t));
  int device = 0, optin = 0, per_sm = 0;
  SFFT_CUDA_CHECK(cudaGetDevice(&device));
  SFFT_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  SFFT_CUDA_CHECK(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device));
  const std::size_t most =
      std::min<std::size_t>(kBlockStageMaxBytes, static_cast<std::size_t>(optin) - sizeof(SharedRows));
  if (block_bytes > most) return launch;
  const std::size_t blocks = std::max<std::size_t>(1, kBlockStageTileBytes / block_bytes);
  g.run_words = l.words / runs;
  g.partner = runs == 2 ? g.run_words : 0;
  g.tile = blocks * block;
  g.tiles = (g.run_words + g.tile - 1) / g.tile;
  g.L = static_cast<uint32_t>(L);
  g.shift = static_cast<uint32_t>(l.shift[l.ndim - 1]);
  g.tile_rows = static_cast<uint32_t>(g.tile / L);
  g.by_L = FastDiv32(g.L);
  launch.stage_bytes = runs * (stage_pitch_bytes(g.tile * word_bytes) + g.tile_rows * sizeof(uint32_t));
  const auto ctas_per_sm = static_cast<std::size_t>(per_sm) / (launch.stage_bytes + sizeof(SharedRows));
  launch.threads = ctas_per_sm <= kStageWideMaxCtas ? kStageWideThreads : kBlock;
  return launch;
}

template <class Word, unsigned Threads>
__global__ void __launch_bounds__(Threads)
    block_stage_kernel(Word *data, Layout l_arg, BlockStage g, RowSource rows_arg) {
  const unsigned runs = g.partner != 0 ? 2 : 1;
  extern __shared__ __align__(16) unsigned char stage_bytes[];
  auto *stage = reinterpret_cast<Word *>(stage_bytes);                                       // runs x tile words
  auto *src_row = reinterpret_cast<uint32_t *>(stage_bytes + runs * g.tile * sizeof(Word));  // stage offsets
  __shared__ __align__(16) unsigned char shared_bytes[sizeof(SharedRows)];
  const SharedRows &sh = share_rows(shared_bytes, l_arg, rows_arg);
  constexpr unsigned kBatch = 64 / sizeof(Word) < 16 ? 64 / sizeof(Word) : 16;  // loads in flight per thread
  for (std::size_t tile = blockIdx.x; tile < g.tiles; tile += gridDim.x) {
    const std::size_t start = tile * g.tile, row0 = tile * g.tile_rows, partner_row0 = row0 + g.partner / g.L;
    const auto count = static_cast<uint32_t>(min(g.tile, g.run_words - start));  // words per run
    const uint32_t rows = count / g.L, staged = runs * count;
    // Stage cell c of run r (c < count) is data[start + r * partner + c].
    const auto at = [&](uint32_t c) { return start + (c < count ? c : g.partner + (c - count)); };
    __syncthreads();  // the previous tile's gather has read the stage and the row table
    for (uint32_t c0 = threadIdx.x; c0 < staged; c0 += kBatch * Threads) {
      Word v[kBatch];
#pragma unroll
      for (unsigned j = 0; j < kBatch; ++j)
        if (c0 + j * Threads < staged) v[j] = data[at(c0 + j * Threads)];
#pragma unroll
      for (unsigned j = 0; j < kBatch; ++j)
        if (c0 + j * Threads < staged) stage[c0 + j * Threads] = v[j];
    }
    for (uint32_t r = threadIdx.x; r < runs * rows; r += Threads) {
      const std::size_t src = sh.rows(sh.l, r < rows ? row0 + r : partner_row0 + (r - rows));
      src_row[r] = static_cast<uint32_t>(src < start + count ? src - start : src - start - g.partner + count);
    }
    __syncthreads();  // the whole tile is staged: the writes below may overwrite any of its words
    for (uint32_t c = threadIdx.x; c < staged; c += Threads) {
      const uint32_t r = g.by_L.div(c), col = c - r * g.L;  // runs hold whole rows: r counts on across them
      data[at(c)] = stage[src_row[r] + wrap_sub(col, g.shift, g.L)];
    }
  }
}

// The four words from word `sh` on of the eight in a then b.
__device__ __forceinline__ uint4 funnel(uint4 a, uint4 b, unsigned sh) {
  switch (sh) {
    case 0:
      return a;
    case 1:
      return make_uint4(a.y, a.z, a.w, b.x);
    case 2:
      return make_uint4(a.z, a.w, b.x, b.y);
    default:
      return make_uint4(a.w, b.x, b.y, b.z);
  }
}

// ---- the pair order (in place, not an involution): pairs.hpp

// Boundary slabs to scratch before the pass: saved[k][o][i] = in[o][kT + lo][i], a thread per word. (A warp
// per (k, o) block, tried, left a whole slab to one warp where there is one batch and no outer axis, e.g.
// 29x31x37x41x43: in place at 2.7-4.3 % of copy instead of 57-62 %, H100.)
template <class Word>
__global__ void save_boundaries_kernel(Word *__restrict__ saved, const Word *__restrict__ data, PairPlan p) {
  cuda::let_next_kernel_start();
  const std::size_t threads = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t j = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; j < p.scratch_words;
       j += threads) {
    const auto k = static_cast<int64_t>(j / p.slab);
    saved[j] = data[boundary_word(p, k, j - static_cast<std::size_t>(k) * p.slab)];
  }
}

// Chains (inner blocks of at least kChainWords words, σ an involution): one thread per (batch, o, i), walking
// its chain through the batch (chain_walk, pairs.hpp). Consecutive threads take consecutive i, and every chain
// of a warp moves by the same offsets, so each lane's loads and stores are row runs. The thread's own
// program order is the only order the pass needs: no barrier, no flag. Its loads land in the thread's own
// ring of shared memory by asynchronous copies, kChainStageBytes of it, R - 1 of its R groups in flight, so
// bytes in flight are not bounded by registers. The kernel that kept its loads in registers (64 registers,
// 64 bytes in flight a thread) kept the DRAM half busy (H200 profile, 8191^2 float32: DRAM 50 %, 54 % of warp
// stalls on loads, 62 % of a device copy). The copies ask L2 for whole 256-byte fetches and a block takes 256
// chains (512 for 16-byte words), 1 KiB runs of a row for 4-byte words: the warps' 128-byte runs lie far apart,
// and DRAM did better on larger pieces (H200, 2026-12-03, same call, two rounds, % of a device copy: 64-thread
// blocks 2-14 points below 128; at 128 threads the 256-byte fetches gained 2-8 points, 256 threads 0-2 more;
// 512 threads lost 1-15 points for words up to 8 bytes but gained up to 8 for 16-byte words on 511^3).
constexpr std::size_t kChainWords = 32;
template <class Word>
constexpr unsigned chain_threads() {
  return sizeof(Word) == 16 ? 512 : 256;
}
// Where a GPU's opt-in shared memory a block is smaller (99 KiB on sm_86 / sm_89, 64 KiB on sm_75), the launch
// halves the block down to this, whose rings take at most 37 KiB.
constexpr unsigned kChainMinThreads = 128;
constexpr unsigned kChainStageBytes = 256;  // per thread: R groups of G steps of two words (and the last step)
constexpr int kChainRing = 4;               // R

template <class Word>
constexpr int chain_group() {
  return static_cast<int>(kChainStageBytes / (kChainRing * 2 * sizeof(Word)));  // G
}

__device__ __forceinline__ void cp_async_commit() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

// An asynchronous copy of the 16-byte vector at src (global, aligned) to dst (shared, aligned), L2 fetching the
// whole 256-byte piece around it; it lands by cp_async_wait after cp_async_commit.
__device__ __forceinline__ void copy_vector_async(uint32_t *dst, const uint32_t *src) {
#if __CUDA_ARCH__ >= 800
  const auto to = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global.L2::256B [%0], [%1], 16;\n" ::"r"(to), "l"(src) : "memory");
#else
  *reinterpret_cast<uint4 *>(dst) = *reinterpret_cast<const uint4 *>(src);
#endif
}

// Returns once every group of this thread's asynchronous copies but the newest `pending` has landed.
template <int pending>
__device__ __forceinline__ void cp_async_wait() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(pending) : "memory");
#endif
}

// Stages r's source: cell src + j goes to stage[j + lead], lead = src mod 4, so that aligned data vectors
// are aligned stage vectors, copied asynchronously (the caller commits and waits) with 256-byte L2 fetches.
// With 16-byte register loads instead, H200 same-call A/B: 1-D 2^26+1 float32 80 -> 88 % of a device copy,
// float64 87 -> 91, (2^24+1)x5 (rows) float32 70 -> 77, float64 72 -> 86.
__device__ void stage_range(const uint32_t *__restrict__ data, const RotateRange &r, uint32_t *stage) {
  const int64_t lo = r.src + r.skip_low, hi = r.src + r.len - r.skip_high, base = r.src & ~int64_t{3};
  if (lo >= hi) return;
  const int64_t first = (lo + 3) / 4, last = hi / 4;  // whole vectors [first, last)
  const int64_t head_end = min(first * 4, hi), tail_begin = max(last * 4, head_end);
  for (int64_t c = lo + threadIdx.x; c < head_end; c += blockDim.x) stage[c - base] = data[c];
  for (int64_t c = tail_begin + threadIdx.x; c < hi; c += blockDim.x) stage[c - base] = data[c];
  for (int64_t q = first + threadIdx.x; q < last; q += blockDim.x)
    copy_vector_async(stage + (4 * q - base), data + 4 * q);
}

// block_stage_kernel's tiles for 4-byte words in 16-byte aligned data, moved as aligned 16-byte vectors: each
// run's whole vectors are copied asynchronously into a stage kept at the run's alignment (single words at its
// ends), and each output vector that lies in one row and whose source does not wrap there is funnelled from two
// aligned stage vectors; a vector across rows or across the wrap steps its four words' sources, and the run's
// ragged ends go word by word. Word by word, the float32 stage was issue-bound (H200 ncu: SM 71-74 %, DRAM
// 39-54 %). For 8- and 16-byte words the word-by-word kernel stayed faster (docs/shift.md).
template <unsigned Threads>
__global__ void __launch_bounds__(Threads)
    block_stage_vector_kernel(uint32_t *data, Layout l_arg, BlockStage g, RowSource rows_arg) {
  const unsigned runs = g.partner != 0 ? 2 : 1;
  const auto pitch = static_cast<uint32_t>(stage_pitch_bytes(g.tile * 4) / 4);
  extern __shared__ __align__(16) unsigned char stage_bytes[];
  auto *stage = reinterpret_cast<uint32_t *>(stage_bytes);  // run r's word x at r pitch + x - (a0 & ~3)
  uint32_t *src_row = stage + runs * pitch;                 // stage index of each output row's source row
  __shared__ __align__(16) unsigned char shared_bytes[sizeof(SharedRows)];
  const SharedRows &sh = share_rows(shared_bytes, l_arg, rows_arg);
  for (std::size_t tile = blockIdx.x; tile < g.tiles; tile += gridDim.x) {
    const std::size_t start = tile * g.tile, row0 = tile * g.tile_rows, partner_row0 = row0 + g.partner / g.L;
    const auto count = static_cast<uint32_t>(min(g.tile, g.run_words - start));  // words per run
    const uint32_t rows = count / g.L;
    const auto run_base = [&](unsigned r) { return (start + r * g.partner) & ~std::size_t{3}; };
    __syncthreads();  // the previous tile's writes have read the stage and the row table
    for (unsigned r = 0; r < runs; ++r)
      stage_range(data, RotateRange{static_cast<int64_t>(start + r * g.partner), count, 0, 0, 0}, stage + r * pitch);
    cp_async_commit();
    for (uint32_t r = threadIdx.x; r < runs * rows; r += Threads) {
      const std::size_t src = sh.rows(sh.l, r < rows ? row0 + r : partner_row0 + (r - rows));
      const unsigned from = src < start + count ? 0 : 1;
      src_row[r] = static_cast<uint32_t>(from * pitch + (src - run_base(from)));
    }
    cp_async_wait<0>();
    __syncthreads();  // the whole tile is staged: the writes below may overwrite any of its words
    for (unsigned r = 0; r < runs; ++r) {
      const std::size_t a0 = start + r * g.partner, a1 = a0 + count;
      const uint32_t *run_rows = src_row + r * rows;
      // Output word (row, col) of the run comes from stage[run_rows[row] + (col - shift) mod L].
      const auto word = [&](uint32_t row, uint32_t col) { return stage[run_rows[row] + wrap_sub(col, g.shift, g.L)]; };
      const auto single = [&](std::size_t x) {
        const auto c = static_cast<uint32_t>(x - a0), row = g.by_L.div(c);
        data[x] = word(row, c - row * g.L);
      };
      const std::size_t first = (a0 + 3) / 4, last = a1 / 4;
      const std::size_t head_end = min(4 * first, a1), tail_begin = max(4 * last, head_end);
      for (std::size_t x = a0 + threadIdx.x; x < head_end; x += Threads) single(x);
      for (std::size_t x = tail_begin + threadIdx.x; x < a1; x += Threads) single(x);
      for (std::size_t q = first + threadIdx.x; q < last; q += Threads) {
        const auto c = static_cast<uint32_t>(4 * q - a0), row = g.by_L.div(c), col = c - row * g.L;
        const uint32_t src_col = wrap_sub(col, g.shift, g.L);
        uint4 v;
        if (col + 4 <= g.L && src_col + 4 <= g.L) {
          const uint32_t from = run_rows[row] + src_col, at = from & ~3u;
          const uint4 lo = *reinterpret_cast<const uint4 *>(stage + at);
          v = (from & 3u) != 0 ? funnel(lo, *reinterpret_cast<const uint4 *>(stage + at + 4), from & 3u) : lo;
        } else {
          const uint32_t wrap = col + 1 < g.L ? 0 : 1;  // the rows of words 1..3: row or row + 1
          const uint32_t c1 = col + 1 - wrap * g.L, r1 = row + wrap;
          const uint32_t c2 = c1 + 1 < g.L ? c1 + 1 : 0, r2 = c1 + 1 < g.L ? r1 : r1 + 1;
          const uint32_t c3 = c2 + 1 < g.L ? c2 + 1 : 0, r3 = c2 + 1 < g.L ? r2 : r2 + 1;
          v = make_uint4(word(row, col), word(r1, c1), word(r2, c2), word(r3, c3));
        }
        *reinterpret_cast<uint4 *>(data + 4 * q) = v;
      }
    }
  }
}

template <class Word>
void block_stage_in_place(Word *data, const Layout &l, const BlockStageLaunch &b, cudaStream_t stream) {
  // The default dynamic limit is 48 KiB less the kernel's static shared memory: a stage just under 48 KiB may
  // need it raised too (allow_dynamic_shared compares with the kernel's current limit).
  const auto launch = [&](auto kernel) {
    cuda::allow_dynamic_shared(reinterpret_cast<const void *>(kernel), b.stage_bytes);
    kernel<<<cuda::grid_for(b.g.tiles * b.threads, b.threads), b.threads, b.stage_bytes, stream>>>(data, l, b.g,
                                                                                                   RowSource(l));
  };
  const bool wide = b.threads == kStageWideThreads;
  if constexpr (sizeof(Word) == 4) {
    if ((reinterpret_cast<std::uintptr_t>(data) & 15) == 0) {
      wide ? launch(block_stage_vector_kernel<kStageWideThreads>) : launch(block_stage_vector_kernel<kBlock>);
      SFFT_CUDA_CHECK_LAUNCH();
      return;
    }
  }
  wide ? launch(block_stage_kernel<Word, kStageWideThreads>) : launch(block_stage_kernel<Word, kBlock>);
  SFFT_CUDA_CHECK_LAUNCH();
}

// The device side of chain_walk's stage: the thread's slots are a column of the block's shared array
// (slot j at row j), so a warp's copies fill consecutive words.
template <class Word, int R, unsigned Threads>
struct AsyncStage {
  Word *column;
  __device__ void fetch(int slot, const Word *src) const {
    Word *dst = column + slot * Threads;
#if __CUDA_ARCH__ >= 800
    const auto to = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    if constexpr (sizeof(Word) == 4)
      asm volatile("cp.async.ca.shared.global.L2::256B [%0], [%1], 4;\n" ::"r"(to), "l"(src) : "memory");
    else if constexpr (sizeof(Word) == 8)
      asm volatile("cp.async.ca.shared.global.L2::256B [%0], [%1], 8;\n" ::"r"(to), "l"(src) : "memory");
    else
      asm volatile("cp.async.cg.shared.global.L2::256B [%0], [%1], 16;\n" ::"r"(to), "l"(src) : "memory");
#else
    *dst = *src;
#endif
  }
  __device__ void commit() const { cp_async_commit(); }
  __device__ void wait() const { cp_async_wait<R - 1>(); }
  __device__ void drain() const { cp_async_wait<0>(); }
  __device__ Word get(int slot) const { return column[slot * Threads]; }
  // Evict-first stores for 4- and 8-byte words: the chain never reads what it wrote. H100, same call, two rounds,
  // % of a device copy: 511^3 float32 79.5 -> 81.5, 4-D 63x65x67x69 float32 70 -> 72-73; for 16-byte words 0.5-1.5
  // points lower, so they store plainly.
  __device__ void store(Word *dst, Word v) const {
    if constexpr (sizeof(Word) < 16)
      __stcs(dst, v);
    else
      *dst = v;
  }
};

template <class Word, int D, class Inner, unsigned Threads>
__global__ void __launch_bounds__(Threads)
    chain_kernel(Word *data, const Word *__restrict__ saved, const __grid_constant__ PairPlan p, ChainLanes lanes) {
  constexpr int G = chain_group<Word>();
  // (2 G R + 2) x Threads words: dynamic, being more than the static 48 KiB
  extern __shared__ __align__(16) unsigned char ring_bytes[];
  auto *ring = reinterpret_cast<Word *>(ring_bytes);
  std::size_t g = 0;
  cuda::wait_for_previous_kernel();  // the boundary slabs are saved
  AsyncStage<Word, kChainRing, Threads> stage{ring + threadIdx.x};
  if (chain_of_thread(lanes, blockIdx.x * static_cast<std::size_t>(Threads) + threadIdx.x, g))
    chain_walk<Word, D, Inner, G, kChainRing>(data, saved, p, g, stage);
}

// Tiles (short inner blocks, or every outer element when σ is no involution): a block takes `tile_outer`
// outer elements x one batch of steps x all inner words, loads both lanes of every element
// (tile_element_load, pairs.hpp), waits at a barrier (a step's lane 1 overwrites what the previous step's
// lane 0 reads, in another thread), then stores. Consecutive threads take consecutive (step, i), so
// accesses are runs of the (o, v) blocks. Offsets: per outer element, the three blocks at the batch's first
// step (shared), plus the step's distance and the inner offset.
constexpr unsigned kTilePerThread = 8;  // measured: 16 was slower for 4-byte words (H100, issue 23)
constexpr unsigned kTileElements = kBlock * kTilePerThread;
constexpr unsigned kMaxTileOuter = 256;

struct PairTiles {
  std::size_t outer_tiles;  // tiles along o per batch
  unsigned tile_outer;      // outer elements per tile
  unsigned group_log2;      // grouped_batch_row's groups of tiles
};

template <class Word>
__global__ void __launch_bounds__(kBlock)
    tile_kernel(Word *data, const Word *__restrict__ saved, PairPlan plan, PairTiles tiles) {
  cuda::wait_for_previous_kernel();  // the boundary slabs are saved
  __shared__ __align__(16) unsigned char plan_bytes[sizeof(PairPlan)];
  __shared__ std::size_t outer_back[kMaxTileOuter];  // σ^-1 o
  __shared__ int64_t own[kMaxTileOuter], to1[kMaxTileOuter], from0[kMaxTileOuter];
  __shared__ uint32_t fwd[kMaxOuterBlock], back[kMaxOuterBlock];
  if (threadIdx.x == 0) memcpy(plan_bytes, &plan, sizeof plan);
  __syncthreads();
  const PairPlan &p = *reinterpret_cast<const PairPlan *>(plan_bytes);
  const BatchRow at = grouped_batch_row(blockIdx.x, static_cast<unsigned>(p.batches), tiles.group_log2);
  const int64_t k = at.batch;
  const std::size_t o0 = static_cast<std::size_t>(at.row) * tiles.tile_outer;
  const auto outer = static_cast<unsigned>(min(static_cast<std::size_t>(tiles.tile_outer), p.O - o0));
  const int64_t b = batch_begin(p, k), end = batch_end(p, k);
  for (unsigned r = threadIdx.x; r < outer; r += blockDim.x) {
    const TileBases t = tile_bases(p, k, o0 + r);
    outer_back[r] = t.back_o;
    own[r] = t.own;
    to1[r] = t.to1;
    from0[r] = t.from0;
  }
  const auto S = static_cast<uint32_t>(p.S);
  for (uint32_t i = threadIdx.x; i < S; i += blockDim.x) {
    fwd[i] = static_cast<uint32_t>(inner_image(p, i, 1));
    back[i] = static_cast<uint32_t>(inner_image(p, i, -1));
  }
  __syncthreads();
  const auto steps = static_cast<uint32_t>(end - b);
  const uint32_t per_outer = steps * S, count = outer * per_outer;
  // The thread's first element (outer element ol, step tl of the batch, inner word i), then kBlock elements on
  // by stepping those digits by kBlock's (step_o, step_t, step_i), offsets in 32 bits: no division per element.
  // With two divisions and 64-bit offsets per element the kernel was issue-bound (H200 ncu, 3x(2^25+1) float32:
  // about 86 instructions an element, DRAM 31 %); same-call A/B, % of a device copy: 3x(2^25+1) float32 47 -> 53,
  // 8-byte words 68 -> 76; 8192x8191 8-byte words 66 -> 74.
  const FastDiv32 by_S(S), by_outer(per_outer);
  uint32_t ol = by_outer.div(threadIdx.x), tl = by_S.div(threadIdx.x - ol * per_outer), i;
  i = threadIdx.x - ol * per_outer - tl * S;
  const uint32_t step_o = by_outer.div(kBlock), step_t = by_S.div(kBlock - step_o * per_outer);
  const uint32_t step_i = kBlock - step_o * per_outer - step_t * S;
  const int32_t sign = p.rev ? -1 : 1;
  // Kept across the barrier: the values, the destinations relative to their outer element's blocks (within
  // a tile, so 32 bits), that element, and which lanes exist: few registers per word, for occupancy.
  Word v1[kTilePerThread], v0[kTilePerThread];
  int32_t r1[kTilePerThread], r0[kTilePerThread];
  uint32_t outer_of[kTilePerThread];
  unsigned live = 0, has0 = 0;
#pragma unroll
  for (unsigned j = 0; j < kTilePerThread; ++j) {
    if (threadIdx.x + j * kBlock >= count) break;
    const TileBases t{own[ol], to1[ol], from0[ol], outer_back[ol]};
    const int32_t dist = sign * static_cast<int32_t>(tl * S);
    live |= 1u << j;
    if (tile_element_load(p, k, t, o0 + ol, b + tl, end, dist, i, back[i], data, saved, &v1[j], &v0[j]))
      has0 |= 1u << j;
    r1[j] = dist + static_cast<int32_t>(fwd[i]);
    r0[j] = dist + static_cast<int32_t>(i);
    outer_of[j] = ol;
    i += step_i;
    if (i >= S) i -= S, ++tl;
    tl += step_t;
    if (tl >= steps) tl -= steps, ++ol;
    ol += step_o;
  }
  __syncthreads();  // every word this tile overwrites has been read
#pragma unroll
  for (unsigned j = 0; j < kTilePerThread; ++j) {
    if (!((live >> j) & 1u)) break;
    data[to1[outer_of[j]] + r1[j]] = v1[j];
    if ((has0 >> j) & 1u) data[own[outer_of[j]] + r0[j]] = v0[j];
  }
}

// The staged rotation: an odd axis over single words (S = 1), 4- and 8-byte words, 16-byte aligned data. In
// physical coordinates a batch's lane-1 words move by +lo (ifftshift: -lo) and its lane-0 words by -(lo + 1)
// (+(lo + 1)), each a contiguous range: a block stages its source ranges in shared memory with aligned 16-byte
// loads, waits at one barrier (the tile kernel's), and writes the destination ranges with aligned 16-byte
// stores, each assembled from two staged vectors (funnel); only the ragged ends of a range go word by word. It
// reads and writes exactly the tile kernel's words of the batch. The tile kernel is instruction-bound on such
// arrays (H200 profile, 1-D f32: SM 73 %, DRAM 36 %).
constexpr unsigned kRotateBatchBytes = 16384;  // steps of a batch, in bytes of one lane

// 32-bit cells of one staged range of `range_bytes` (+ edges), a whole number of vectors.
__host__ __device__ constexpr unsigned rotate_stage_cells(std::size_t range_bytes) {
  return static_cast<unsigned>((range_bytes / 4 + 8 + 3) & ~std::size_t{3});
}

// Writes r's destination from its stage (stage_range's layout).
__device__ void write_range(uint32_t *__restrict__ data, const RotateRange &r, const uint32_t *stage) {
  const int64_t lo = r.src + r.delta, hi = lo + r.len, base = r.src & ~int64_t{3};
  const int64_t first = (lo + 3) / 4, last = hi / 4;
  const int64_t head_end = min(first * 4, hi), tail_begin = max(last * 4, head_end);
  for (int64_t c = lo + threadIdx.x; c < head_end; c += blockDim.x) data[c] = stage[c - r.delta - base];
  for (int64_t c = tail_begin + threadIdx.x; c < hi; c += blockDim.x) data[c] = stage[c - r.delta - base];
  const int64_t from = 4 * first - r.delta - base;  // stage cell of the first whole vector's first cell
  const auto sh = static_cast<unsigned>(from & 3);
#pragma unroll 4
  for (int64_t q = first + threadIdx.x; q < last; q += blockDim.x) {
    const int64_t at = from + 4 * (q - first) - sh;  // aligned
    const uint4 a = *reinterpret_cast<const uint4 *>(stage + at);
    const uint4 b = sh != 0 ? *reinterpret_cast<const uint4 *>(stage + at + 4) : a;
    *reinterpret_cast<uint4 *>(data + 4 * q) = funnel(a, b, sh);
  }
}

// The stage cell of r's last virtual word (`cells` cells: a word, or a row), read from scratch instead
// (rotate_ranges' skip): physically the range's top cells, or, mirrored, its bottom ones.
__device__ __forceinline__ int64_t saved_word_cell(const RotateRange &r, bool rev, int64_t cells) {
  return (rev ? r.src : r.src + r.len - cells) - (r.src & ~int64_t{3});
}

template <class Word>
__device__ void place_saved_word(uint32_t *stage, const RotateRange &r, bool rev, const Word *from) {
  const Word w = load_saved(from);
  memcpy(stage + saved_word_cell(r, rev, sizeof(Word) / 4), &w, sizeof w);
}

// rotate_kernel: the staged rotation over each of O rows (O = 1: a 1-D array, or an axis whose neighbours the
// layout merged away; O > 1: e.g. 8192x8191, or 3x(2^25+1) where the long axis is the one split). Element o's
// lane-1 range moves into row σ o and its lane-0 range comes from row σ^-1 o, each still one contiguous range.
// Where σ is an involution (always where O = 1) a block takes one (batch, o): its ranges are read and written by
// no other block (RotateRows::one). Otherwise lane 1 of (k, o) overwrites words that lane 0 of (k, σ^2 o) reads,
// so the batch's reads of every row must precede its writes, and only 4-byte words take it: on sm_90 a cluster
// of O blocks takes the batch, a block a row, and they meet at the cluster's barrier (RotateRows::cluster,
// O <= kRotateClusterMaxRows); before sm_90 one block takes the batch for every o (RotateRows::all,
// O <= kRotateOuterMaxRows), its 2 O ranges staged before one barrier. H200, same call against the tiles, two
// rounds, % of a device copy: 8192x8191 float64 / complex64 74.6-75.6 / 72.7-74.1 -> 81.1-81.6 / 80.5-80.7;
// 3x(2^25+1) float32 52.8-53.3 -> 64.6-64.9 with one block for the 3 rows (RotateRows::all), but float64 /
// complex64 75-77 -> 71-71.5 (4 KiB ranges for its 3 rows: 54-55 / 58-59). H100, clusters against the form
// without, two rounds: 3x(2^25+1) float32 74.4-75.5 -> 85.2-86.1, 7x(2^23+1) float32 (tiles) 77.3-78.0 ->
// 80.2-80.7; but the 8-byte words there lose to the tiles (float64 92.4-92.7 -> 85.5-86.7 and 85.5-86.1 ->
// 79.3-79.6), so they keep them. Where one block takes several rows their ranges are worked out once a block, in shared
// memory (with σ's images then taking 64-bit divisions, repeated by every thread at every use the kernel ran 65 %
// on 8192x8191 float64); a block of one row works its ranges out in every thread, in registers, which keeps the
// 1-D arrays at 88-92 % (a barrier first cost them 1-4 points).
constexpr std::size_t kRotateOuterMaxRows = 3;
constexpr std::size_t kRotateClusterMaxRows = 8;  // the portable cluster size
constexpr std::size_t kRotateOuterMinRangeBytes = 2048;  // shorter rows (O > 1) take the tiles

enum class RotateRows { one, all, cluster };

// Every thread of the cluster arrives, then waits for all others; global and shared accesses before it (the
// stage's landed copies included) are ordered before those after it in every block of the cluster.
__device__ __forceinline__ void cluster_barrier() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
#else
  __trap();  // launched as clusters only where the device supports them (sm_90 on)
#endif
}

template <class Word, RotateRows Rows>
__global__ void __launch_bounds__(kBlock)
    rotate_kernel(Word *words, const Word *__restrict__ saved, PairPlan p, unsigned rows, unsigned group_log2,
                  unsigned stage_cells) {
  static_assert(sizeof(Word) == 4 || sizeof(Word) == 8, "16-byte words move whole vectors in the tile kernel");
  cuda::wait_for_previous_kernel();  // the boundary slabs are saved
  constexpr int64_t m = sizeof(Word) / 4;
  constexpr bool kOneRowABlock = Rows != RotateRows::all;
  extern __shared__ __align__(16) uint32_t stage[];  // ranges 1 and 0 of each of the block's rows
  auto *data = reinterpret_cast<uint32_t *>(words);
  BatchRow at{blockIdx.x, 0};  // RotateRows::all: a block per batch, taking every row
  if constexpr (Rows == RotateRows::one) {
    at = grouped_batch_row(blockIdx.x, static_cast<unsigned>(p.batches), group_log2);
  } else if constexpr (Rows == RotateRows::cluster) {  // a cluster per batch, block rank = row
    at.batch = blockIdx.x / rows;
    at.row = blockIdx.x - static_cast<unsigned>(at.batch) * rows;
  }
  const int64_t k = at.batch;
  const unsigned o0 = at.row;
  // One row: every thread works its ranges out in registers. Several: once a block, in shared memory.
  __shared__ RotateRanges shared_ranges[kOneRowABlock ? 1 : kRotateOuterMaxRows];
  RotateRanges one{};
  if constexpr (kOneRowABlock) {
    one = rotate_ranges(p, k, o0, m);
  } else {
    if (threadIdx.x < rows) shared_ranges[threadIdx.x] = rotate_ranges(p, k, o0 + threadIdx.x, m);
    __syncthreads();
  }
  const auto ranges = [&](unsigned j) -> const RotateRanges & {
    if constexpr (kOneRowABlock) return one;
    return shared_ranges[j];
  };
  const unsigned count = kOneRowABlock ? 1 : rows;
  for (unsigned j = 0; j < count; ++j) {
    stage_range(data, ranges(j).r1, stage + 2 * j * stage_cells);
    stage_range(data, ranges(j).r0, stage + (2 * j + 1) * stage_cells);
  }
  cp_async_commit();
  cp_async_wait<0>();
  if (threadIdx.x < count) {
    const unsigned j = threadIdx.x;
    const RotateRanges &r = ranges(j);
    if (r.saved1_at >= 0) place_saved_word(stage + 2 * j * stage_cells, r.r1, p.rev, saved + r.saved1_at);
    if (r.saved0_at >= 0) place_saved_word(stage + (2 * j + 1) * stage_cells, r.r0, p.rev, saved + r.saved0_at);
  }
  // Every word the block (the cluster) overwrites has been read, and the stages are complete.
  if constexpr (Rows == RotateRows::cluster)
    cluster_barrier();
  else
    __syncthreads();
  for (unsigned j = 0; j < count; ++j) {
    write_range(data, ranges(j).r1, stage + 2 * j * stage_cells);
    write_range(data, ranges(j).r0, stage + (2 * j + 1) * stage_cells);
  }
}

// Short rows (1 < S < kChainWords words, O = 1: an odd axis with a few inner words each, e.g. (2^24+1)x5),
// 4- and 8-byte words, 16-byte aligned data: the rotation above (O = 1) over whole rows. A batch's lane-1 rows and
// lane-0 rows are still contiguous ranges, moved by lo (lo + 1) rows; only within a row the cells move (π), so
// each destination cell of an aligned 16-byte store is gathered from the stage through a table of the row's
// source cells instead of funnelled. H200, (2^24+1)x5 in place: 76-78 % of a device copy in float32, 85-87 %
// for 8-byte words, where the tile kernel ran 43-49 % and 64-65 % (docs/shift.md).
template <class Word>
__global__ void __launch_bounds__(kBlock)
    rotate_rows_kernel(Word *words, const Word *__restrict__ saved, PairPlan p, FastDiv32 by_row) {
  static_assert(sizeof(Word) == 4 || sizeof(Word) == 8, "16-byte words move whole vectors in the tile kernel");
  cuda::wait_for_previous_kernel();  // the boundary slabs are saved
  constexpr int64_t m = sizeof(Word) / 4;  // 32-bit cells per word
  __shared__ __align__(16) uint32_t stage1[rotate_stage_cells(kRotateBatchBytes)],
      stage0[rotate_stage_cells(kRotateBatchBytes)];
  __shared__ uint32_t source_cell[kChainWords * m];  // destination cell of a row -> source cell of its row
  auto *data = reinterpret_cast<uint32_t *>(words);
  const auto row = static_cast<int64_t>(by_row.d);  // cells of a row, S m
  for (int64_t j = threadIdx.x; j < row; j += blockDim.x)
    source_cell[j] = static_cast<uint32_t>(inner_image(p, static_cast<std::size_t>(j / m), -1) * m + j % m);
  // rotate_kernel's ranges with rows for words (cells of a row for m): the middle row and boundary row k + 1
  // come from scratch.
  const RotateRanges ranges = rotate_ranges(p, static_cast<int64_t>(blockIdx.x), 0, row);
  stage_range(data, ranges.r1, stage1);
  stage_range(data, ranges.r0, stage0);
  cp_async_commit();
  cp_async_wait<0>();
  const auto *saved_cells = reinterpret_cast<const uint32_t *>(saved);
  const auto place_saved_row = [&](const RotateRange &range, int64_t saved_word, uint32_t *stage) {
    uint32_t *to = stage + saved_word_cell(range, p.rev, row);
    for (int64_t j = threadIdx.x; j < row; j += blockDim.x) to[j] = __ldg(saved_cells + saved_word * m + j);
  };
  if (ranges.saved1_at >= 0) place_saved_row(ranges.r1, ranges.saved1_at, stage1);
  if (ranges.saved0_at >= 0) place_saved_row(ranges.r0, ranges.saved0_at, stage0);
  __syncthreads();  // every word this batch overwrites has been read, the stages and the table are complete
  const auto write = [&](const RotateRange &r, const uint32_t *stage) {
    const int64_t first_cell = r.src + r.delta, end_cell = first_cell + r.len;
    const int64_t src0 = r.src - (r.src & ~int64_t{3});  // stage cell of the range's first source cell
    const auto staged = [&](int64_t c) {
      const auto q = static_cast<uint32_t>(c - first_cell), rq = by_row.div(q);
      return stage[src0 + static_cast<int64_t>(rq) * row + source_cell[q - rq * static_cast<uint32_t>(row)]];
    };
    const int64_t first = (first_cell + 3) / 4, last = end_cell / 4;  // whole vectors [first, last)
    const int64_t head_end = min(first * 4, end_cell), tail_begin = max(last * 4, head_end);
    for (int64_t c = first_cell + threadIdx.x; c < head_end; c += blockDim.x) data[c] = staged(c);
    for (int64_t c = tail_begin + threadIdx.x; c < end_cell; c += blockDim.x) data[c] = staged(c);
    const auto row_cells = static_cast<uint32_t>(row);
    for (int64_t q = first + threadIdx.x; q < last; q += blockDim.x) {
      // The vector's first cell's row and place in it once, then step (a row holds at least 2 cells).
      const auto c0 = static_cast<uint32_t>(4 * q - first_cell), rq = by_row.div(c0);
      uint32_t in_row = c0 - rq * row_cells;
      const uint32_t *from = stage + src0 + static_cast<int64_t>(rq) * row;
      uint32_t cell[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        cell[i] = from[source_cell[in_row]];
        if (++in_row == row_cells) {
          in_row = 0;
          from += row;
        }
      }
      *reinterpret_cast<uint4 *>(data + 4 * q) = make_uint4(cell[0], cell[1], cell[2], cell[3]);
    }
  };
  write(ranges.r1, stage1);
  write(ranges.r0, stage0);
}

template <class Word, int D, class Inner, unsigned Threads = chain_threads<Word>()>
void launch_chains(Word *data, const Word *saved, const PairPlan &p, const ChainLanes &lanes, cudaStream_t stream) {
  const std::size_t ring_bytes = (2 * chain_group<Word>() * kChainRing + 2) * Threads * sizeof(Word);
  if constexpr (Threads > kChainMinThreads) {
    int device = 0, optin = 0;
    SFFT_CUDA_CHECK(cudaGetDevice(&device));
    SFFT_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    if (ring_bytes > static_cast<std::size_t>(optin))
      return launch_chains<Word, D, Inner, Threads / 2>(data, saved, p, lanes, stream);
  }
  const auto kernel = chain_kernel<Word, D, Inner, Threads>;
  // The rings need the largest shared-memory carveout for enough blocks per SM (the L1 cache matters less).
  cuda::prefer_max_shared_carveout(reinterpret_cast<const void *>(kernel));
  cuda::allow_dynamic_shared(reinterpret_cast<const void *>(kernel), ring_bytes);
  const auto blocks = static_cast<unsigned>((lanes.threads + Threads - 1) / Threads);
  cuda::launch_overlapped_shared(kernel, blocks, Threads, ring_bytes, stream, data, saved, p, lanes);
}

// Batches until about 2^20 chains run (a few per resident thread slot), at most n / 32 of them: scratch stays
// within one slab or 1/32 of the array.
void set_chain_batches(PairPlan &p) {
  const std::size_t want = (std::size_t{1} << 20) / p.slab + 1;
  const auto most = std::max<int64_t>(1, p.n / 32);
  const auto batches = std::min<int64_t>(static_cast<int64_t>(std::min<std::size_t>(want, INT64_MAX)), most);
  set_batch(p, (p.steps + batches - 1) / batches);
}

template <class Word>
void pair_in_place(Word *data, const Layout &l, cudaStream_t stream) {
  PairPlan p = make_pair_plan(l, kMaxOuterBlock);
  // An odd axis of 4- or 8-byte words in 16-byte aligned data: alone, over single words or rows of fewer than
  // kChainWords words, the staged rotation (of words, of rows); under rows that σ swaps or, for 4-byte words,
  // moves among at most kRotateClusterMaxRows (in clusters; without them among at most kRotateOuterMaxRows), over
  // single words, the rotation over rows; else chains or tiles.
  const bool aligned = (reinterpret_cast<std::uintptr_t>(data) & 15) == 0;
  const bool rotation_rows = sizeof(Word) <= 8 && p.O == 1 && p.S > 1 && p.S < kChainWords && aligned;
  // SFFT_SHIFT_NO_CLUSTERS=1 (diagnostics: tests, A/B runs) takes the form without clusters on any device.
  bool clusters = false;
  if constexpr (sizeof(Word) == 4)
    if (!p.involution && p.S == 1 && p.O <= kRotateClusterMaxRows)
      clusters =
          cuda::cluster_launch_supported(reinterpret_cast<const void *>(rotate_kernel<Word, RotateRows::cluster>)) &&
          !env_flag("SFFT_SHIFT_NO_CLUSTERS");
  const RotateRows rotate_rows = p.involution                                ? RotateRows::one
                                 : p.O <= kRotateClusterMaxRows && clusters ? RotateRows::cluster
                                                                            : RotateRows::all;
  const bool rotation =
      sizeof(Word) <= 8 && p.S == 1 && aligned &&
      (p.O == 1 ||
       ((rotate_rows != RotateRows::all || (sizeof(Word) == 4 && p.O <= kRotateOuterMaxRows)) &&
        static_cast<std::size_t>(p.lo) * sizeof(Word) >= kRotateOuterMinRangeBytes));
  // Each of rotate_kernel's ranges: 16 KiB, 8 KiB where a block takes several rows.
  const std::size_t rotate_rows_per_block = rotate_rows == RotateRows::all ? p.O : 1;
  const std::size_t rotate_range_bytes = rotate_rows_per_block == 1 ? kRotateBatchBytes : kRotateBatchBytes / 2;
  const bool chains = !rotation && p.involution && p.S >= kChainWords;
  const std::size_t tile_elements = kTileElements;
  PairTiles tiles{1, 1, 0};
  if (rotation) {
    set_batch(p, static_cast<int64_t>(rotate_range_bytes / sizeof(Word)));
  } else if (rotation_rows) {
    set_batch(p, static_cast<int64_t>(kRotateBatchBytes / (p.S * sizeof(Word))));
  } else if (chains) {
    set_chain_batches(p);
  } else if (!p.involution) {  // σ moves o along a chain: a tile takes every o (O * S <= kMaxOuterBlock)
    tiles.tile_outer = static_cast<unsigned>(p.O);
    set_batch(p, static_cast<int64_t>(std::max<std::size_t>(1, tile_elements / p.slab)));
  } else if (static_cast<std::size_t>(p.steps) * p.S >= tile_elements) {
    set_batch(p, static_cast<int64_t>(tile_elements / p.S));
  } else {
    tiles.tile_outer = static_cast<unsigned>(
        std::min<std::size_t>(tile_elements / (static_cast<std::size_t>(p.steps) * p.S), kMaxTileOuter));
  }
  tiles.outer_tiles = (p.O + tiles.tile_outer - 1) / tiles.tile_outer;
  tiles.group_log2 = row_group_log2(tiles.outer_tiles);
  cuda::StreamBuffer scratch(p.scratch_words * sizeof(Word), stream);
  auto *saved = static_cast<Word *>(scratch.get());
  save_boundaries_kernel<Word><<<cuda::grid_for(p.scratch_words, kBlock), kBlock, 0, stream>>>(saved, data, p);
  SFFT_CUDA_CHECK_LAUNCH();
  if (rotation) {
    if constexpr (sizeof(Word) <= 8) {
      const std::size_t blocks = static_cast<std::size_t>(p.batches) * (p.O / rotate_rows_per_block);
      if (blocks > INT32_MAX) fail(SFFT_ERROR_UNSUPPORTED, "shift: array too large for the in-place batch grid");
      const unsigned stage_cells = rotate_stage_cells(rotate_range_bytes);
      const std::size_t stage_bytes = 2 * rotate_rows_per_block * stage_cells * sizeof(uint32_t);
      const auto rows = static_cast<unsigned>(rotate_rows_per_block);
      if constexpr (sizeof(Word) == 4) {
        if (rotate_rows == RotateRows::cluster) {
          const auto kernel = rotate_kernel<Word, RotateRows::cluster>;
          cuda::allow_dynamic_shared(reinterpret_cast<const void *>(kernel), stage_bytes);
          cuda::launch_clusters(kernel, static_cast<unsigned>(blocks), kBlock, static_cast<unsigned>(p.O),
                                stage_bytes, stream, data, saved, p, static_cast<unsigned>(p.O), 0u, stage_cells);
          return;
        }
      }
      const auto kernel = rotate_rows == RotateRows::one ? rotate_kernel<Word, RotateRows::one>
                                                         : rotate_kernel<Word, RotateRows::all>;
      cuda::allow_dynamic_shared(reinterpret_cast<const void *>(kernel), stage_bytes);
      cuda::launch_overlapped_shared(kernel, static_cast<unsigned>(blocks), kBlock, stage_bytes, stream, data, saved, p,
                                     rows, row_group_log2(p.O), stage_cells);
    }
    return;
  }
  if (rotation_rows) {
    if constexpr (sizeof(Word) <= 8) {
      if (p.batches > INT32_MAX) fail(SFFT_ERROR_UNSUPPORTED, "shift: array too large for the in-place batch grid");
      const FastDiv32 by_row(static_cast<uint32_t>(p.S * (sizeof(Word) / 4)));
      cuda::launch_overlapped(rotate_rows_kernel<Word>, static_cast<unsigned>(p.batches), kBlock, stream, data, saved,
                              p, by_row);
    }
    return;
  }
  if (!chains) {
    const std::size_t blocks = static_cast<std::size_t>(p.batches) * tiles.outer_tiles;
    if (blocks > INT32_MAX) fail(SFFT_ERROR_UNSUPPORTED, "shift: array too large for the in-place tile grid");
    cuda::launch_overlapped(tile_kernel<Word>, static_cast<unsigned>(blocks), kBlock, stream, data, saved, p, tiles);
    return;
  }
  const ChainLanes lanes = make_chain_lanes(p);
  if ((lanes.threads + kChainMinThreads - 1) / kChainMinThreads > INT32_MAX)
    fail(SFFT_ERROR_UNSUPPORTED, "shift: array too large for the in-place chain grid");
  // 32-bit inner offsets and up to 4 inner dims cover every practical shape; the rest runs the general form.
  if (p.S > UINT32_MAX || p.inner_dims > 4)
    launch_chains<Word, kMaxDims, uint64_t>(data, saved, p, lanes, stream);
  else if (p.inner_dims <= 1)
    launch_chains<Word, 1, uint32_t>(data, saved, p, lanes, stream);
  else if (p.inner_dims == 2)
    launch_chains<Word, 2, uint32_t>(data, saved, p, lanes, stream);
  else if (p.inner_dims == 3)
    launch_chains<Word, 3, uint32_t>(data, saved, p, lanes, stream);
  else
    launch_chains<Word, 4, uint32_t>(data, saved, p, lanes, stream);
}

// ---- dispatch

// Chains of 16-byte words run 512 threads a block and one block a SM (their rings take 144 KiB). Where the pair
// order leaves fewer such blocks than kWideChainWaves a SM (a short odd first axis over rows of a few thousand
// 16-byte words, e.g. 4097x4096 float32: 242 blocks on 132 SMs; ncu: 25 % occupancy, DRAM 59 %), the chains move
// 4-byte words instead: four times as many chains, 256 threads a block, three blocks a SM. H200, same call, two
// rounds, % of a device copy: 4097x4096 float32 68.7 / 70.4 -> 71.0 / 73.0, complex64 75.5 / 76.9 -> 78.7 / 77.5,
// 2047x4096 complex64 70.0 / 73.1 -> 77.3 / 71.9, 255x256x256 float32 67.1 / 70.2 -> 69.4 / 72.2, 1023x2048
// complex128 unchanged; 8-byte words instead: within a point or two of these, complex128 1023x2048 3 points lower.
constexpr std::size_t kWideChainWaves = 4;

bool few_wide_chains(const Layout &l) {
  PairPlan p = make_pair_plan(l, kMaxOuterBlock);
  if (!p.involution || p.S < kChainWords) return false;
  set_chain_batches(p);
  int device = 0, sms = 0;
  SFFT_CUDA_CHECK(cudaGetDevice(&device));
  SFFT_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const std::size_t blocks = (p.scratch_words + chain_threads<uint4>() - 1) / chain_threads<uint4>();
  return blocks < kWideChainWaves * static_cast<std::size_t>(sms);
}

template <class Word>
void shift_on_device(const Layout &layout, Word *out, const Word *in, cudaStream_t stream) {
  const Layout rows = join_unshifted_last(layout);
  if (out != in) {
    const Layout &l = rows;
    constexpr std::size_t kTile = kCopyTileWords<Word>;
    const auto L = static_cast<std::size_t>(l.extent[l.ndim - 1]);
    const bool short_rows = L <= kTile;
    const std::size_t tiles = (l.words + kTile - 1) / kTile;
    const unsigned grid = cuda::grid_for(tiles * kBlock, kBlock);
    const std::size_t stride = std::size_t{grid} * kTile;  // words from a block's tile to its next
    const bool staged = sizeof(Word) < 16 && (reinterpret_cast<std::uintptr_t>(out) & 15) == 0;
    // Rows shorter than a thread's words put more rows in a tile than it has threads: with one dim above them,
    // the kernel works out each word's source row instead of building a table (H200, (2^24+1)x5 float32: 87 ->
    // 94-95 % of a device copy), with more a table of planes (H100, same call, 255^3 x 3 shifted on every axis,
    // rows of 3 words under three dims: float32 87 -> 97-98 %, complex64 92.5-95 -> 96-96.5). With longer rows,
    // whose tables take one or two entries, the per-word arithmetic cost float32 4-5 points (8191^2 93 -> 89 %).
    const bool few_words = L < kCopyPerThread<Word>;
    const auto E = static_cast<std::size_t>(l.ndim >= 2 ? l.extent[l.ndim - 2] : 1);
    // kPlanes steps a word's row along E by at most kBlock / L + 1 rows, one plane at a time, in 32 bits.
    const bool planes = few_words && l.ndim >= 3 && kBlock / L + 1 <= E && l.words / L <= UINT32_MAX;
    const RowSources sources = few_words && l.ndim == 2 ? RowSources::kOneDim
                               : planes                 ? RowSources::kPlanes
                                                        : RowSources::kTable;
    const CopyTiles c{l.words,
                      L,
                      static_cast<std::size_t>(l.shift[l.ndim - 1]),
                      tiles,
                      FastDiv32(short_rows ? static_cast<uint32_t>(L) : 1u),
                      short_rows ? static_cast<uint32_t>(kBlock / L) : 0u,
                      short_rows ? static_cast<uint32_t>(kBlock % L) : kBlock,
                      stride / L,
                      stride % L,
                      FastDiv32(planes ? static_cast<uint32_t>(E) : 1u)};
    const auto launch = [&](auto kernel) { kernel<<<grid, kBlock, 0, stream>>>(out, in, l, c, RowSource(l)); };
    const auto launch_rows = [&](auto staged_tag) {
      constexpr bool kStaged = decltype(staged_tag)::value;
      switch (sources) {
        case RowSources::kOneDim:
          launch(copy_kernel<Word, kStaged, RowSources::kOneDim>);
          break;
        case RowSources::kPlanes:
          launch(copy_kernel<Word, kStaged, RowSources::kPlanes>);
          break;
        default:
          launch(copy_kernel<Word, kStaged, RowSources::kTable>);
      }
    };
    if constexpr (sizeof(Word) < 16) {
      if (staged) launch_rows(std::true_type{});
    }
    if (!staged) launch_rows(std::false_type{});
    SFFT_CUDA_CHECK_LAUNCH();
    return;
  }
  if (is_involution(rows)) {
    swap_in_place(out, rows, stream);
    return;
  }
  const Layout &l = layout;
  const BlockStageLaunch blocks = block_stage(l, sizeof(Word));
  if (blocks.g.tile != 0) {
    block_stage_in_place(out, l, blocks, stream);
    return;
  }
  if (orbits_in_place(out, l, stream)) return;
  if constexpr (sizeof(Word) == 16) {
    if (few_wide_chains(l)) {
      pair_in_place(reinterpret_cast<uint32_t *>(out), narrow_words(l, 4), stream);
      return;
    }
  }
  pair_in_place(out, l, stream);
}

void dispatch(const Layout &l, void *out, const void *in, cudaStream_t stream) {
  switch (l.word_bytes) {
    case 4:
      shift_on_device(l, static_cast<uint32_t *>(out), static_cast<const uint32_t *>(in), stream);
      break;
    case 8:
      shift_on_device(l, static_cast<uint2 *>(out), static_cast<const uint2 *>(in), stream);
      break;
    case 16:
      shift_on_device(l, static_cast<uint4 *>(out), static_cast<const uint4 *>(in), stream);
      break;
    default:
      fail(SFFT_ERROR_INTERNAL, "shift: unexpected word size ", l.word_bytes);
  }
}

}  // namespace

void run_cuda(const Layout &l, void *out, const void *in, const Options &opts, PointerKind out_kind,
              PointerKind in_kind) {
  cuda::DeviceScope scope(opts.device);
  cudaStream_t stream = cuda::as_stream(opts.stream);
  const bool in_host = in_kind == PointerKind::Host;
  const bool out_host = out_kind == PointerKind::Host;
  if (!in_host && !out_host) {
    if (l.ndim == 0) {
      if (out != in) SFFT_CUDA_CHECK(cudaMemcpyAsync(out, in, l.bytes, cudaMemcpyDeviceToDevice, stream));
      return;
    }
    dispatch(l, out, in, stream);
    return;
  }
  // Staged: host data goes through device buffers; the call returns when `out` is written.
  const bool in_place = out == in;
  cuda::StreamBuffer d_in(in_host ? l.bytes : 0, stream);
  cuda::StreamBuffer d_out(out_host && !in_place ? l.bytes : 0, stream);
  const void *src = in_host ? d_in.get() : in;
  void *dst = in_place ? d_in.get() : (out_host ? d_out.get() : out);
  if (in_host) SFFT_CUDA_CHECK(cudaMemcpyAsync(d_in.get(), in, l.bytes, cudaMemcpyHostToDevice, stream));
  if (l.ndim == 0) {
    if (dst != src) SFFT_CUDA_CHECK(cudaMemcpyAsync(dst, src, l.bytes, cudaMemcpyDeviceToDevice, stream));
  } else {
    dispatch(l, dst, src, stream);
  }
  if (out_host) SFFT_CUDA_CHECK(cudaMemcpyAsync(out, dst, l.bytes, cudaMemcpyDeviceToHost, stream));
  SFFT_CUDA_CHECK(cudaStreamSynchronize(stream));
}

}  // namespace sfft::shift
