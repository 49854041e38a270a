// SPDX-License-Identifier: Apache-2.0
// CPU backend of fftshift/ifftshift: rows of the last dim copied (or swapped) as two contiguous runs,
// rows and long-row pieces spread over OpenMP threads; in place with an odd shifted extent, the one-pass
// chunk order of inplace.hpp.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <thread>

#include "common/host_buffer.hpp"
#include "common/process.hpp"
#include "shift/inplace.hpp"
#include "shift/shift.hpp"

namespace sfft::shift {
namespace {

constexpr std::size_t kPieceWords = std::size_t{1} << 15;  // long rows are split into pieces of this many words
constexpr std::size_t kChunkBytes = std::size_t{1} << 16;  // in-place chunk staging: fits L2 with room to spare

// Swaps n bytes between two non-overlapping ranges through a small stack buffer.
void swap_bytes(unsigned char *a, unsigned char *b, std::size_t n) {
  unsigned char tmp[4096];
  while (n > 0) {
    std::size_t m = std::min(n, sizeof tmp);
    std::memcpy(tmp, a, m);
    std::memcpy(a, b, m);
    std::memcpy(b, tmp, m);
    a += m;
    b += m;
    n -= m;
  }
}

struct Rows {
  std::size_t L, shift, rows, pieces, piece;
  explicit Rows(const Layout &l)
      : L(static_cast<std::size_t>(l.extent[l.ndim - 1])),
        shift(static_cast<std::size_t>(l.shift[l.ndim - 1])),
        rows(l.words / L),
        pieces((L + kPieceWords - 1) / kPieceWords),
        piece(kPieceWords) {}
};

// out-of-place: out[row][j] = in[src_row][(j - shift) mod L] for j in [c0, c1).
void copy_piece(const Layout &l, const Rows &g, unsigned char *out, const unsigned char *in, std::size_t row,
                std::size_t c0, std::size_t c1) {
  const std::size_t w = l.word_bytes;
  unsigned char *dst = out + (row * g.L) * w;
  const unsigned char *src = in + source_row(l, row) * w;
  std::size_t split = std::clamp(g.shift, c0, c1);
  if (c0 < split) std::memcpy(dst + c0 * w, src + (c0 + g.L - g.shift) * w, (split - c0) * w);
  if (split < c1) std::memcpy(dst + split * w, src + (split - g.shift) * w, (c1 - split) * w);
}

// in place, involution: swap (row, j) with (partner, (j - shift) mod L), each pair once.
void swap_piece(const Layout &l, const Rows &g, unsigned char *data, std::size_t row, std::size_t c0, std::size_t c1) {
  const std::size_t w = l.word_bytes;
  std::size_t partner = source_row(l, row) / g.L;
  if (partner < row) return;  // the partner row's task does it
  if (partner == row) {
    if (g.shift == 0) return;
    c1 = std::min(c1, g.L / 2);  // shift == L/2: swap the halves
    if (c0 >= c1) return;
  }
  unsigned char *a = data + row * g.L * w;
  unsigned char *b = data + partner * g.L * w;
  std::size_t split = std::clamp(g.shift, c0, c1);
  if (c0 < split) swap_bytes(a + c0 * w, b + (c0 + g.L - g.shift) * w, (split - c0) * w);
  if (split < c1) swap_bytes(a + split * w, b + (split - g.shift) * w, (c1 - split) * w);
}

template <std::size_t W>
struct Word {
  unsigned char b[W];
};

// Runs of a chunk are often a few dozen words (short rows): an inlined loop, not a memcpy call each.
template <class T>
void copy_words(T *to, const T *from, int64_t n) {
  for (int64_t i = 0; i < n; ++i) to[i] = from[i];
}

// in place, not an involution: the chunked one-pass order of inplace.hpp; the threads take chunks in
// order and wait on the flags of the chunks whose reads they would overwrite.
template <std::size_t W>
void chunked_in_place(const Layout &l, unsigned char *bytes, int threads) {
  using T = Word<W>;
  T *data = reinterpret_cast<T *>(bytes);
  const InPlacePlan p = make_inplace_plan(l, kChunkBytes / W, 1);
  HostBuffer<T> saved(p.scratch_words);
  const auto pieces = static_cast<std::ptrdiff_t>(p.save_pieces);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::ptrdiff_t i = 0; i < pieces; ++i) {
    SavePiece s = save_piece(p, static_cast<std::size_t>(i));
    std::memcpy(saved.get() + s.to, data + s.from, s.len * W);
  }
  std::unique_ptr<std::atomic<int>[]> read_done(new std::atomic<int>[p.chunks]());
  std::atomic<std::size_t> ticket{0};
#pragma omp parallel num_threads(threads)
  {
    HostBuffer<T> stage(p.chunk_words);
    RowMove moves[kMaxRowMoves];
    int64_t box[kMaxDims];
    for (std::size_t c; (c = ticket.fetch_add(1, std::memory_order_relaxed)) < p.chunks;) {
      chunk_box(p, c, box);
      const Segments g = row_segments(p, box);
      int n = 0;
      for (int s = 0, slots = row_move_slots(p, box); s < slots; ++s) n += row_move(p, box, s, &moves[n]);
      T *to = stage.get();
      for (int m = 0; m < n; ++m)
        for (int k = 0; k < 2; ++k) {
          Run runs[3];
          for (int r = 0, nr = source_runs(p, moves[m], g.src[k], g.len[k], runs); r < nr; ++r) {
            copy_words(to, (runs[r].in_data ? data : saved.get()) + runs[r].at, runs[r].len);
            to += runs[r].len;
          }
        }
      read_done[c].store(1, std::memory_order_release);
      for (std::size_t k = 0, deps = dependency_count(p, box); k < deps; ++k) {
        const std::size_t d = dependency(p, box, k);
        while (d < c && read_done[d].load(std::memory_order_acquire) == 0) std::this_thread::yield();
      }
      const T *from = stage.get();
      for (int m = 0; m < n; ++m)
        for (int k = 0; k < 2; ++k) {
          copy_words(data + moves[m].dst + g.dst[k], from, g.len[k]);
          from += g.len[k];
        }
    }
  }
}

}  // namespace

void run_cpu(const Layout &l, void *out, const void *in, int threads) {
  threads = usable_threads(threads);
  auto *dst = static_cast<unsigned char *>(out);
  const auto *src = static_cast<const unsigned char *>(in);
  if (l.ndim == 0) {  // nothing moves
    if (out != in) std::memcpy(dst, src, l.bytes);
    return;
  }
  const Rows g(l);
  const auto tasks = static_cast<std::ptrdiff_t>(g.rows * g.pieces);
  if (out != in) {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::ptrdiff_t t = 0; t < tasks; ++t) {
      std::size_t row = static_cast<std::size_t>(t) / g.pieces, p = static_cast<std::size_t>(t) % g.pieces;
      copy_piece(l, g, dst, src, row, p * g.piece, std::min(g.L, (p + 1) * g.piece));
    }
  } else if (is_involution(l)) {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::ptrdiff_t t = 0; t < tasks; ++t) {
      std::size_t row = static_cast<std::size_t>(t) / g.pieces, p = static_cast<std::size_t>(t) % g.pieces;
      swap_piece(l, g, dst, row, p * g.piece, std::min(g.L, (p + 1) * g.piece));
    }
  } else {
    switch (l.word_bytes) {
      case 4:
        chunked_in_place<4>(l, dst, threads);
        break;
      case 8:
        chunked_in_place<8>(l, dst, threads);
        break;
      case 16:
        chunked_in_place<16>(l, dst, threads);
        break;
      default:
        fail(SFFT_ERROR_INTERNAL, "shift: unexpected word size ", l.word_bytes);
    }
  }
}

}  // namespace sfft::shift
