// CPU backend of fftshift/ifftshift: rows of the last dim copied (or swapped) as two contiguous runs,
// rows and long-row pieces spread over OpenMP threads.
#include <algorithm>
#include <cstring>

#include "common/host_buffer.hpp"
#include "common/process.hpp"
#include "shift/shift.hpp"

namespace sfft::shift {
namespace {

constexpr std::size_t kPieceWords = std::size_t{1} << 15;  // long rows are split into pieces of this many words

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

// in place, not an involution: the cycle-wave order of layout.hpp with a bounded wave buffer; the
// scratch holds slab 0 of the cycle axis (1/extent of the array).
template <std::size_t W>
void cycle_in_place(const Layout &l, unsigned char *bytes, int threads) {
  using T = Word<W>;
  T *data = reinterpret_cast<T *>(bytes);
  const int axis = cycle_axis(l);
  if (axis < 0) fail(SFFT_ERROR_INTERNAL, "shift: no single-cycle axis for an in-place rotation");
  const std::size_t N = l.words;
  const std::size_t slab = N / static_cast<std::size_t>(l.extent[axis]);
  HostBuffer<T> scratch(slab);
  const std::size_t wave = std::min<std::size_t>(N, std::size_t{1} << 20);
  HostBuffer<T> buffer(wave);
  HostBuffer<std::size_t> target(wave);
  const PlainDivisors divisors(l, slab);
  const auto S = static_cast<std::ptrdiff_t>(slab);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::ptrdiff_t r = 0; r < S; ++r) scratch[r] = data[slab_offset(l, axis, 0, r)];
  for (std::size_t t0 = 0; t0 < N; t0 += wave) {
    const auto n = static_cast<std::ptrdiff_t>(std::min(wave, N - t0));
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::ptrdiff_t i = 0; i < n; ++i) {
      std::size_t read;
      bool from_scratch;
      target[i] = wave_step<std::size_t>(l, divisors, axis, slab, t0 + i, &read, &from_scratch);
      buffer[i] = from_scratch ? scratch[read] : data[read];
    }
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::ptrdiff_t i = 0; i < n; ++i) data[target[i]] = buffer[i];
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
      case 4: cycle_in_place<4>(l, dst, threads); break;
      case 8: cycle_in_place<8>(l, dst, threads); break;
      case 16: cycle_in_place<16>(l, dst, threads); break;
      default: fail(SFFT_ERROR_INTERNAL, "shift: unexpected word size ", l.word_bytes);
    }
  }
}

}  // namespace sfft::shift
