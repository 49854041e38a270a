// SPDX-License-Identifier: Apache-2.0
// CPU backend of fftshift/ifftshift: rows of the last dim copied (or swapped) as two contiguous runs,
// rows and long-row pieces spread over OpenMP threads, large outputs of short rows written with non-temporal
// stores; in place with an odd shifted extent, the one-pass pair order of pairs.hpp.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <utility>
#include <vector>

#include <omp.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "common/copy.hpp"
#include "common/host_buffer.hpp"
#include "common/kept_scratch.hpp"
#include "common/process.hpp"
#include "shift/pairs.hpp"
#include "shift/shift.hpp"

namespace sfft::shift {
namespace {

constexpr std::size_t kPieceWords = std::size_t{1} << 15;  // long rows are split into pieces of this many words

// Copies n bytes (a multiple of 4) between non-overlapping ranges. The runs of short rows are tens of bytes,
// where a memcpy call costs as much as the copy: fixed-size moves inline instead, the last one overlapping
// its predecessor when n is not a multiple of its size. Longer runs go to copy_bytes (common/copy.hpp).
inline void copy_run(unsigned char *dst, const unsigned char *src, std::size_t n) {
  if (n > 64) {
    copy_bytes(dst, src, n);
  } else if (n >= 32) {
    for (std::size_t i = 0; i + 32 < n; i += 32) std::memcpy(dst + i, src + i, 32);
    std::memcpy(dst + n - 32, src + n - 32, 32);
  } else if (n >= 16) {
    std::memcpy(dst, src, 16);
    std::memcpy(dst + n - 16, src + n - 16, 16);
  } else if (n >= 8) {
    std::memcpy(dst, src, 8);
    std::memcpy(dst + n - 8, src + n - 8, 8);
  } else if (n >= 4) {
    std::memcpy(dst, src, 4);
    std::memcpy(dst + n - 4, src + n - 4, 4);
  }
}

// copy_run for word arrays (n bytes, a multiple of 4).
inline void copy_words(void *dst, const void *src, std::size_t n) {
  copy_run(static_cast<unsigned char *>(dst), static_cast<const unsigned char *>(src), n);
}

// Swaps n bytes between two non-overlapping ranges through a small stack buffer.
void swap_bytes(unsigned char *a, unsigned char *b, std::size_t n) {
  unsigned char tmp[4096];
  while (n > 0) {
    std::size_t m = std::min(n, sizeof tmp);
    copy_run(tmp, a, m);
    copy_run(a, b, m);
    copy_run(b, tmp, m);
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
  if (c0 < split) copy_run(dst + c0 * w, src + (c0 + g.L - g.shift) * w, (split - c0) * w);
  if (split < c1) copy_run(dst + split * w, src + (split - g.shift) * w, (c1 - split) * w);
}

// The source row (its first word) of an output row, advanced row by row as an odometer over the outer dims (an
// addition per row), where source_row would divide once per dim and row, which costs more than copying a short
// row.
class SourceRows {
 public:
  SourceRows(const Layout &l, std::size_t L, std::size_t row) : l_(l) {
    std::size_t st = L;
    for (int d = l.ndim - 2; d >= 0; --d) {
      const int64_t e = l.extent[d];
      j_[d] = static_cast<int64_t>(row % static_cast<std::size_t>(e));
      row /= static_cast<std::size_t>(e);
      js_[d] = (j_[d] + e - l.shift[d]) % e;
      stride_[d] = st;
      src_ += static_cast<std::size_t>(js_[d]) * st;
      st *= static_cast<std::size_t>(e);
    }
  }
  std::size_t src() const { return src_; }
  // Rows from this one on whose sources follow each other (L words apart), up to the next wrap of the innermost
  // outer dim's output or source index.
  std::size_t run() const {
    const int d = l_.ndim - 2;
    if (d < 0) return SIZE_MAX;
    return static_cast<std::size_t>(std::min(l_.extent[d] - j_[d], l_.extent[d] - js_[d]));
  }
  // Moves k rows on, 0 < k <= run().
  void advance(std::size_t k) {
    const int d = l_.ndim - 2;
    if (d < 0) return;
    j_[d] += static_cast<int64_t>(k - 1);
    js_[d] += static_cast<int64_t>(k - 1);
    src_ += (k - 1) * stride_[d];
    next();
  }
  void next() {  // both indices advance by one (mod e), with carry
    for (int d = l_.ndim - 2; d >= 0; --d) {
      const int64_t e = l_.extent[d];
      if (js_[d] + 1 == e) {
        js_[d] = 0;
        src_ -= static_cast<std::size_t>(e - 1) * stride_[d];
      } else {
        ++js_[d];
        src_ += stride_[d];
      }
      if (++j_[d] < e) break;
      j_[d] = 0;
    }
  }

 private:
  const Layout &l_;
  int64_t j_[kMaxDims], js_[kMaxDims];  // output and source index along each outer dim
  std::size_t stride_[kMaxDims], src_ = 0;
};

// Calls emit(row, from) for the output rows [r0, r1) in order, `from` the row's source, and prefetches the
// source row `ahead` rows on (none when 0).
template <class Emit>
void for_each_source_row(const Layout &l, const Rows &g, const unsigned char *in, std::size_t r0, std::size_t r1,
                         std::size_t ahead, Emit emit) {
  if (r0 >= r1) return;
  const std::size_t row_bytes = g.L * l.word_bytes;
  SourceRows at(l, g.L, r0), next(l, g.L, std::min(r0 + ahead, r1));
  for (std::size_t row = r0; row < r1; ++row) {
    if (ahead > 0 && row + ahead < r1) {
      const unsigned char *p = in + next.src() * l.word_bytes;
      for (std::size_t b = 0; b < row_bytes; b += 64) __builtin_prefetch(p + b);
      __builtin_prefetch(p + row_bytes - 1);
      next.next();
    }
    emit(row, in + at.src() * l.word_bytes);
    at.next();
  }
}

// out-of-place, whole rows [r0, r1).
void copy_rows(const Layout &l, const Rows &g, unsigned char *out, const unsigned char *in, std::size_t r0,
               std::size_t r1) {
  const std::size_t w = l.word_bytes, L = g.L, s = g.shift;
  for_each_source_row(l, g, in, r0, r1, 0, [&](std::size_t row, const unsigned char *from) {
    unsigned char *to = out + row * L * w;
    copy_run(to, from + (L - s) * w, s * w);
    copy_run(to + s * w, from, (L - s) * w);
  });
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

// Out of place, rows up to kShortRowBytes long and a thread's output range of kStreamBytes or more take
// stream_rows. Ordinary stores read every output line before writing it (3 bytes of traffic per byte copied,
// 2 streamed), which only pays off while the output stays in cache. Consecutive output rows read runs of a few
// source rows here and there, where the hardware prefetchers start cold on each run: the source rows are
// prefetched kShortRowBytes ahead. (Rows longer than that, streamed, measured no faster; on the AMD EPYC VM,
// 2026-12-04, with copy_bytes 0-10 % slower.)
constexpr std::size_t kShortRowBytes = 4096;
#if defined(__x86_64__)
constexpr std::size_t kStreamBytes = std::size_t{8} << 20;

// Appends byte runs to a contiguous output range through a 64-byte aligned stage in L1, flushed whole lines
// at a time with non-temporal stores. The stage mirrors the output's line alignment; the partial lines at
// either end of the range may share their line with another thread's range and are stored normally.
class StreamingWriter {
 public:
  explicit StreamingWriter(unsigned char *dst)
      : line_(dst - reinterpret_cast<std::uintptr_t>(dst) % 64),
        fill_(static_cast<std::size_t>(dst - line_)),
        first_(fill_) {}

  void append(const unsigned char *src, std::size_t n) {
    while (n > 0) {
      const std::size_t m = std::min(n, kStageBytes - fill_);
      stage(stage_ + fill_, src, m);
      fill_ += m;
      src += m;
      n -= m;
      if (fill_ == kStageBytes) flush();
    }
  }

  // The stage's free bytes, contiguous, for a caller that builds its output in place (commit(n) then counts n of
  // them as appended; n <= room_bytes()).
  unsigned char *room() { return stage_ + fill_; }
  std::size_t room_bytes() const { return kStageBytes - fill_; }
  void commit(std::size_t n) {
    fill_ += n;
    if (fill_ == kStageBytes) flush();
  }

  // Stores what is staged and orders the non-temporal stores before whatever the thread does next.
  void finish() {
    flush();
    _mm_sfence();
  }

 private:
  static constexpr std::size_t kStageBytes = 4096;

  // Copies n bytes (a multiple of 4) into the stage 16 at a time, the last 16 overlapping their predecessor
  // when n is not a multiple of 16: inline, where a memcpy call would cost as much as a short row.
  static void stage(unsigned char *dst, const unsigned char *src, std::size_t n) {
    if (n < 16) {
      copy_run(dst, src, n);
      return;
    }
    for (std::size_t i = 0; i + 16 < n; i += 16)
      _mm_storeu_si128(reinterpret_cast<__m128i *>(dst + i),
                       _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + i)));
    _mm_storeu_si128(reinterpret_cast<__m128i *>(dst + n - 16),
                     _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + n - 16)));
  }

  void flush() {
    std::size_t at = first_;
    if (at % 64 != 0) {
      const std::size_t end = std::min(fill_, (at / 64 + 1) * 64);
      std::memcpy(line_ + at, stage_ + at, end - at);
      at = end;
    }
    for (; at + 64 <= fill_; at += 64) {
      const auto *from = reinterpret_cast<const __m128i *>(stage_ + at);
      auto *to = reinterpret_cast<__m128i *>(line_ + at);
      _mm_stream_si128(to, _mm_load_si128(from));
      _mm_stream_si128(to + 1, _mm_load_si128(from + 1));
      _mm_stream_si128(to + 2, _mm_load_si128(from + 2));
      _mm_stream_si128(to + 3, _mm_load_si128(from + 3));
    }
    if (at < fill_) std::memcpy(line_ + at, stage_ + at, fill_ - at);
    line_ += kStageBytes;
    fill_ = first_ = 0;
  }

  unsigned char *line_;  // output address of stage_[0], line-aligned
  std::size_t fill_;     // stage bytes [0, fill_) are staged
  std::size_t first_;    // stage bytes before first_ lie before the range
  alignas(64) unsigned char stage_[kStageBytes];
};

// copy_rows through a StreamingWriter, the source rows prefetched.
void stream_rows(const Layout &l, const Rows &g, unsigned char *out, const unsigned char *in, std::size_t r0,
                 std::size_t r1) {
  const std::size_t w = l.word_bytes, L = g.L, s = g.shift;
  StreamingWriter writer(out + r0 * L * w);
  for_each_source_row(l, g, in, r0, r1, kShortRowBytes / (L * w), [&](std::size_t, const unsigned char *from) {
    writer.append(from + (L - s) * w, s * w);
    writer.append(from, (L - s) * w);
  });
  writer.finish();
}
#endif

// Out of place, rows of at most kTinyRowWords words (e.g. N x 2 or N x 3 coordinates, 9^8 arrays): two runs a row
// through copy_run or the streaming stage cost several times the row's bytes (8388609x2 float32 ran at 9 % of a memcpy,
// NumPy's fftshift 4 times faster). The rows are gathered word by word, through a table of their source columns,
// straight into the output, or where stream_rows would stream into the StreamingWriter's stage (a row that
// would straddle the stage's end goes through a row buffer).
constexpr std::size_t kTinyRowWords = 16;

// Where gathered rows go: the output itself (room without end).
// (append, for a row straddling a sink's end, is never reached here: this room has no end.)
struct DirectRows {
  unsigned char *to;
  unsigned char *room() const { return to; }
  static std::size_t room_bytes() { return SIZE_MAX; }
  void commit(std::size_t n) { to += n; }
  void append(const unsigned char *b, std::size_t n) {
    copy_run(to, b, n);
    to += n;
  }
};

// Copies `rows` rows of L words, consecutive on both sides, each destination word j from source word
// source_col[j] (bytes) of its row: L and W compile-time, so a row is a few unrolled moves.
using TinyRowsMove = void (*)(unsigned char *, const unsigned char *, std::size_t, const std::size_t *);

template <std::size_t W, std::size_t L>
void move_tiny_rows(unsigned char *dst, const unsigned char *src, std::size_t rows, const std::size_t *source_col) {
  for (std::size_t r = 0; r < rows; ++r, dst += L * W, src += L * W)
    for (std::size_t j = 0; j < L; ++j) std::memcpy(dst + j * W, src + source_col[j], W);
}

template <std::size_t W, std::size_t... L>
TinyRowsMove tiny_rows_move(std::size_t row_words, std::index_sequence<L...>) {
  TinyRowsMove f = nullptr;
  ((f = row_words == L + 1 ? &move_tiny_rows<W, L + 1> : f), ...);
  return f;
}

template <std::size_t W, std::size_t L, class Sink>
void gather_tiny_rows(const Layout &l, const Rows &g, const unsigned char *in, std::size_t r0, std::size_t r1,
                      Sink &sink) {
  constexpr std::size_t kRowBytes = L * W;
  std::size_t source_col[L];
  for (std::size_t j = 0; j < L; ++j) source_col[j] = (j + L - g.shift) % L * W;
  // Source runs are often short (runs of a shifted outer dim), where the hardware prefetchers start cold on
  // each: a second odometer prefetches the sources kShortRowBytes ahead.
  constexpr std::size_t kAhead = kShortRowBytes / kRowBytes;
  SourceRows at(l, L, r0), ahead(l, L, std::min(r0 + kAhead, r1));
  std::size_t ahead_row = std::min(r0 + kAhead, r1);
  const auto prefetch = [&](std::size_t k) {
    for (std::size_t end = std::min(ahead_row + k, r1); ahead_row < end;) {
      const std::size_t m = std::min(ahead.run(), end - ahead_row);
      const unsigned char *p = in + ahead.src() * W;
      for (std::size_t b = 0; b < m * kRowBytes; b += 64) __builtin_prefetch(p + b);
      __builtin_prefetch(p + m * kRowBytes - 1);
      ahead.advance(m);
      ahead_row += m;
    }
  };
  for (std::size_t row = r0; row < r1;) {
    // Runs of rows whose sources follow each other: one flat loop each, the odometer stepped once a run.
    const std::size_t k = std::min({at.run(), r1 - row, sink.room_bytes() / kRowBytes});
    prefetch(std::max<std::size_t>(k, 1));
    const unsigned char *from = in + at.src() * W;
    if (k == 0) {
      alignas(16) unsigned char one[kRowBytes];
      move_tiny_rows<W, L>(one, from, 1, source_col);
      sink.append(one, kRowBytes);
      at.next();
      ++row;
      continue;
    }
    move_tiny_rows<W, L>(sink.room(), from, k, source_col);
    sink.commit(k * kRowBytes);
    at.advance(k);
    row += k;
  }
}

template <std::size_t W, std::size_t L>
void copy_tiny_rows(const Layout &l, const Rows &g, unsigned char *out, const unsigned char *in, std::size_t r0,
                    std::size_t r1) {
  unsigned char *to = out + r0 * L * W;
#if defined(__x86_64__)
  if ((r1 - r0) * L * W >= kStreamBytes) {
    StreamingWriter writer(to);
    gather_tiny_rows<W, L>(l, g, in, r0, r1, writer);
    writer.finish();
    return;
  }
#endif
  DirectRows direct{to};
  gather_tiny_rows<W, L>(l, g, in, r0, r1, direct);
}

// copy_tiny_rows for the layout's word size and row length (compile-time constants, so that a row's gather is
// unrolled), chosen before the threads start: nullptr for rows longer than kTinyRowWords.
using TinyRowsCopy = void (*)(const Layout &, const Rows &, unsigned char *, const unsigned char *, std::size_t,
                              std::size_t);

template <std::size_t W, std::size_t... L>
TinyRowsCopy tiny_rows_copy(std::size_t row_words, std::index_sequence<L...>) {
  TinyRowsCopy f = nullptr;
  ((f = row_words == L + 2 ? &copy_tiny_rows<W, L + 2> : f), ...);
  return f;
}

TinyRowsCopy tiny_rows_copy(const Layout &l, const Rows &g) {
  if (g.L > kTinyRowWords) return nullptr;
  constexpr auto lengths = std::make_index_sequence<kTinyRowWords - 1>();  // 2 .. kTinyRowWords
  const TinyRowsCopy f = l.word_bytes == 4    ? tiny_rows_copy<4>(g.L, lengths)
                         : l.word_bytes == 8  ? tiny_rows_copy<8>(g.L, lengths)
                         : l.word_bytes == 16 ? tiny_rows_copy<16>(g.L, lengths)
                                              : nullptr;
  if (f == nullptr) fail(SFFT_ERROR_INTERNAL, "shift: rows of ", g.L, " words of ", l.word_bytes, " bytes");
  return f;
}

// The runs (at most three) that copy w words cyclically within rows of L words,
// dst[(dc + j) mod L] = src[(sc + j) mod L] for j < w, as byte offsets and lengths: the same for every row
// that a chain item moves in one step.
struct RowRuns {
  int count = 0;
  std::size_t dst[3] = {}, src[3] = {}, bytes[3] = {};
};

RowRuns cyclic_runs(int64_t dc, int64_t sc, int64_t w, int64_t L, std::size_t word_bytes) {
  RowRuns r;
  while (w > 0) {
    const int64_t run = std::min({w, L - dc, L - sc});
    r.dst[r.count] = static_cast<std::size_t>(dc) * word_bytes;
    r.src[r.count] = static_cast<std::size_t>(sc) * word_bytes;
    r.bytes[r.count++] = static_cast<std::size_t>(run) * word_bytes;
    dc = dc + run == L ? 0 : dc + run;
    sc = sc + run == L ? 0 : sc + run;
    w -= run;
  }
  return r;
}

void copy_row(unsigned char *dst_row, const unsigned char *src_row, const RowRuns &r) {
  for (int j = 0; j < r.count; ++j) copy_run(dst_row + r.dst[j], src_row + r.src[j], r.bytes[j]);
}

// One inner dim's digit moved by π (fwd), π^-1 (back) and one chain step π^-2 (next): additions modulo e.
struct DigitMoves {
  int64_t e = 1, fwd = 0, back = 0, next = 0;
  DigitMoves() = default;
  DigitMoves(int64_t extent, int64_t s)
      : e(extent), fwd(s), back(shift_digit(0, extent, s, -1)), next(shift_digit(0, extent, s, -2)) {}
  int64_t add(int64_t j, int64_t by) const { return j + by >= e ? j + by - e : j + by; }
};

// Physical word range [first, first + count) of the blocks (o, v) for virtual v in [v0, v1), v0 < v1.
std::size_t block_range_start(const PairPlan &p, std::size_t o, int64_t v0, int64_t v1) {
  return word_at(p, o, p.rev ? v1 - 1 : v0, 0);
}

// in place, not an involution: the pair order of pairs.hpp. Long inner blocks (S >= kChainWords, σ an
// involution): an item is a range of rows of one plane (the last two inner dims; or a piece of a long row)
// following its chains through a batch. π moves a plane to a plane, rotating its rows and its columns, so per
// step the item's plane offsets, its first rows and its column runs are worked out once, and each row costs
// two row copies (lane 1 before lane 0: lane 0 overwrites what lane 1 reads), while the next step's source rows
// are prefetched. Otherwise items are batches of steps of one outer element (or of all, see pairs.hpp), lane
// 0's sources buffered first, then both lanes as block copies (inner dims unshifted) or through tables of π
// and π^-1.
constexpr std::size_t kChainWords = 64;
constexpr std::size_t kItemWords = std::size_t{1} << 13;  // words per item and step (chains) or buffered (batches)
constexpr std::size_t kPrefetchRowBytes = 4096;           // chain rows up to this long are prefetched a step ahead

// One chain item's rows in one step: rows r (lane 1's source, lane 0's destination), π r and π^-1 r of
// planes of R rows, advanced together with wrap-around.
struct PlaneRows {
  int64_t own, fwd, back, R;
  void next() {
    own = own + 1 == R ? 0 : own + 1;
    fwd = fwd + 1 == R ? 0 : fwd + 1;
    back = back + 1 == R ? 0 : back + 1;
  }
};

// Rows d0.. of `dst` from rows s0.. of `src` (planes of R rows, both wrapping), n <= R rows, in runs.
void move_plane_rows(TinyRowsMove move, unsigned char *dst, const unsigned char *src, int64_t d0, int64_t s0,
                     std::size_t n, int64_t R, std::size_t row_bytes, const std::size_t *source_col) {
  while (n > 0) {
    const std::size_t k = std::min({n, static_cast<std::size_t>(R - d0), static_cast<std::size_t>(R - s0)});
    move(dst + static_cast<std::size_t>(d0) * row_bytes, src + static_cast<std::size_t>(s0) * row_bytes, k, source_col);
    d0 = d0 + static_cast<int64_t>(k) == R ? 0 : d0 + static_cast<int64_t>(k);
    s0 = s0 + static_cast<int64_t>(k) == R ? 0 : s0 + static_cast<int64_t>(k);
    n -= k;
  }
}

// Prefetches rows s0.. (n <= R, wrapping) of a plane.
void prefetch_plane_rows(const unsigned char *src, int64_t s0, std::size_t n, int64_t R, std::size_t row_bytes) {
  while (n > 0) {
    const std::size_t k = std::min(n, static_cast<std::size_t>(R - s0));
    const unsigned char *from = src + static_cast<std::size_t>(s0) * row_bytes;
    for (std::size_t b = 0; b < k * row_bytes; b += 64) __builtin_prefetch(from + b);
    __builtin_prefetch(from + k * row_bytes - 1);
    s0 = s0 + static_cast<int64_t>(k) == R ? 0 : s0 + static_cast<int64_t>(k);
    n -= k;
  }
}

// The pair order's pre-pass: boundary slab k of every outer element into `saved`, in pieces of up to
// kSavePieceBytes, so that all threads share it also where one slab is a large part of the array (a short odd
// first axis: 3 x 4096 x 4096 saves a third of it).
constexpr std::size_t kSavePieceBytes = std::size_t{1} << 20;

void save_boundary_slabs(const PairPlan &p, unsigned char *saved, const unsigned char *data, std::size_t W,
                         int threads) {
  const std::size_t slab_bytes = p.S * W, piece = kSavePieceBytes / W * W;
  const std::size_t pieces = (slab_bytes + piece - 1) / piece;
  const auto items = static_cast<std::ptrdiff_t>(static_cast<std::size_t>(p.batches) * p.O * pieces);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::ptrdiff_t it = 0; it < items; ++it) {
    const std::size_t at = static_cast<std::size_t>(it) % pieces * piece;
    const std::size_t o = static_cast<std::size_t>(it) / pieces % p.O;
    const auto k = static_cast<int64_t>(static_cast<std::size_t>(it) / pieces / p.O);
    copy_words(saved + saved_at(p, k, o, 0) * W + at, data + word_at(p, o, batch_begin(p, k) + p.lo, 0) * W + at,
               std::min(piece, slab_bytes - at));
  }
}

template <std::size_t W>
void chain_items(PairPlan &p, unsigned char *data, int threads) {
  const int cd = p.inner_dims - 1, rd = cd - 1;  // the column dim; the row dim (-1: none)
  const int plane_dims = std::max(rd, 0);        // inner dims before the plane
  const int64_t L = p.inner_e[cd], R = rd >= 0 ? p.inner_e[rd] : 1;
  const DigitMoves cols(L, p.inner_s[cd]), rows = rd >= 0 ? DigitMoves(R, p.inner_s[rd]) : DigitMoves();
  const std::size_t planes = p.S / static_cast<std::size_t>(R * L), row_bytes = static_cast<std::size_t>(L) * W;
  const std::size_t width = std::min<std::size_t>(static_cast<std::size_t>(L), kItemWords);
  const std::size_t pieces = (static_cast<std::size_t>(L) + width - 1) / width;
  const std::size_t group =
      std::clamp<std::size_t>(kItemWords / static_cast<std::size_t>(L), 1, static_cast<std::size_t>(R));
  const std::size_t groups = (static_cast<std::size_t>(R) + group - 1) / group;
  // Rows of at most kTinyRowWords words (a field of a few components, every axis shifted): a row copy through
  // RowRuns costs several times its few bytes, so runs of consecutive rows go through move_tiny_rows, every row's
  // words rotated through one table (the same for both lanes: π moves a column by its shift). 181^3x3 float32 in
  // place, 2 threads: 30-44 -> 9-10 ms.
  const TinyRowsMove tiny =
      static_cast<std::size_t>(L) <= kTinyRowWords
          ? tiny_rows_move<W>(static_cast<std::size_t>(L), std::make_index_sequence<kTinyRowWords>())
          : nullptr;
  std::size_t source_col[kTinyRowWords] = {};
  for (int64_t j = 0; tiny != nullptr && j < L; ++j)
    source_col[j] = static_cast<std::size_t>(cols.add(j, cols.back)) * W;
  // Planes of a few tiny rows (9^8 float32: 81 words): an item takes a run of up to `mp` planes along the last
  // plane dim P, whose offsets follow the first plane's by whole planes (each wrapping on its own), so the
  // per-step plane bookkeeping is shared by the run.
  const int pd = plane_dims - 1;
  const std::size_t EP = pd >= 0 ? static_cast<std::size_t>(p.inner_e[pd]) : 1;
  const std::size_t mp = tiny != nullptr && groups == 1 && pieces == 1 && pd >= 0
                             ? std::clamp<std::size_t>(kItemWords / static_cast<std::size_t>(R * L), 1, EP)
                             : 1;
  const std::size_t runs_per_line = (EP + mp - 1) / mp;  // runs of planes along one line of P
  const std::size_t plane_items = mp > 1 ? planes / EP * runs_per_line : planes;
  // One batch unless the chains are too few to share among the threads; at most n / 32 batches, so the
  // scratch stays within one slab or 1/32 of the array.
  const std::size_t per_batch = p.O * plane_items * groups * pieces, want = 16 * static_cast<std::size_t>(threads);
  const auto batches =
      std::min<int64_t>(static_cast<int64_t>((want + per_batch - 1) / per_batch), std::max<int64_t>(1, p.n / 32));
  set_batch(p, (p.steps + batches - 1) / batches);
  const KeptScratch saved(p.scratch_words * W);
  save_boundary_slabs(p, saved.get(), data, W, threads);
  const auto K = static_cast<std::ptrdiff_t>(p.batches);
  DigitMoves moves[kMaxDims];
  for (int d = 0; d < plane_dims; ++d) moves[d] = DigitMoves(p.inner_e[d], p.inner_s[d]);
  const auto items = static_cast<std::ptrdiff_t>(static_cast<std::size_t>(K) * p.O * plane_items * groups * pieces);
#pragma omp parallel for num_threads(threads) schedule(dynamic, 4)
  for (std::ptrdiff_t it = 0; it < items; ++it) {
    auto rest = static_cast<std::size_t>(it);
    const std::size_t piece = rest % pieces;
    rest /= pieces;
    const std::size_t g = rest % groups;
    rest /= groups;
    std::size_t plane = rest % plane_items, np = 1;  // the item's first plane, and its planes along P
    rest /= plane_items;
    if (mp > 1) {
      const std::size_t first_p = plane % runs_per_line * mp;
      np = std::min(mp, EP - first_p);
      plane = plane / runs_per_line * EP + first_p;
    }
    const std::size_t o = rest % p.O;
    const auto k = static_cast<int64_t>(rest / p.O);
    const std::size_t so = outer_image(p, o);
    const std::size_t nr = std::min(group, static_cast<std::size_t>(R) - g * group);
    const auto w = static_cast<int64_t>(std::min(width, static_cast<std::size_t>(L) - piece * width));
    int64_t digit[kMaxDims];  // the chain's plane digits, one step ahead of the copies
    for (int d = plane_dims - 1; d >= 0; --d) {
      const auto e = static_cast<std::size_t>(p.inner_e[d]);
      digit[d] = static_cast<int64_t>(plane % e);
      plane /= e;
    }
    // Step t's moves for the planes the digits hold (the chain's own plane, π and π^-1 of it).
    const auto plane_moves = [&](int64_t t) {
      std::size_t at = 0, fwd = 0, back = 0;
      for (int d = 0; d < plane_dims; ++d) {
        const DigitMoves &dm = moves[d];
        at += static_cast<std::size_t>(digit[d]) * p.inner_stride[d];
        fwd += static_cast<std::size_t>(dm.add(digit[d], dm.fwd)) * p.inner_stride[d];
        back += static_cast<std::size_t>(dm.add(digit[d], dm.back)) * p.inner_stride[d];
      }
      return step_moves(p, k, t, o, so, so, at, fwd, back);
    };
    const int64_t end = batch_end(p, k);
    auto row = static_cast<int64_t>(g * group), col = static_cast<int64_t>(piece * width);
    StepMoves m = plane_moves(batch_begin(p, k));
    int64_t own_p = pd >= 0 ? digit[pd] : 0;  // this step's P digit of the item's first plane
    for (int64_t t = batch_begin(p, k); t < end; ++t) {
      for (int d = 0; d < plane_dims; ++d) digit[d] = moves[d].add(digit[d], moves[d].next);
      const StepMoves next = t + 1 < end ? plane_moves(t + 1) : m;
      const int64_t next_row = rows.add(row, rows.next);
      unsigned char *dst1 = data + m.dst1 * W, *dst0 = data + m.dst0 * W;
      const unsigned char *src1 = (m.saved1 ? saved.get() : data) + m.src1 * W;
      const unsigned char *src0 = m.has0 ? (m.saved0 ? saved.get() : data) + m.src0 * W : nullptr;  // none at t = lo
      // The next step reads planes a slab away, where the hardware prefetchers start cold on every short
      // row: its source rows are prefetched while this step copies (its destinations are this step's sources).
      const bool prefetch = t + 1 < end && row_bytes <= kPrefetchRowBytes;
      const unsigned char *next1 = (next.saved1 ? saved.get() : data) + next.src1 * W;
      const unsigned char *next0 = next.has0 ? (next.saved0 ? saved.get() : data) + next.src0 * W : nullptr;
      PlaneRows r{row, rows.add(row, rows.fwd), rows.add(row, rows.back), R};
      PlaneRows after{next_row, rows.add(next_row, rows.fwd), rows.add(next_row, rows.back), R};
      if (tiny != nullptr) {  // whole rows (w = L); every lane-1 read of a plane's rows before its lane-0 writes
        const DigitMoves &dp = pd >= 0 ? moves[pd] : cols;  // (cols: unused without plane dims, np = 1)
        const std::size_t stride_p = pd >= 0 ? p.inner_stride[pd] * W : 0;
        const int64_t fwd_p = dp.add(own_p, dp.fwd), back_p = dp.add(own_p, dp.back), next_p = dp.add(own_p, dp.next);
        const int64_t after_back_p = dp.add(next_p, dp.back);
        // Byte offset of plane digit base + j (mod EP) from plane digit base.
        const auto along = [&](int64_t base, std::size_t j) {
          const int64_t at = dp.add(base, static_cast<int64_t>(j));
          return static_cast<std::ptrdiff_t>(at - base) * static_cast<std::ptrdiff_t>(stride_p);
        };
        for (std::size_t j = 0; j < np; ++j) {
          const std::ptrdiff_t own = along(own_p, j), fwd = along(fwd_p, j), back = along(back_p, j);
          if (prefetch) {
            prefetch_plane_rows(next1 + along(next_p, j), after.own, nr, R, row_bytes);
            if (next0) prefetch_plane_rows(next0 + along(after_back_p, j), after.back, nr, R, row_bytes);
          }
          move_plane_rows(tiny, dst1 + fwd, src1 + own, r.fwd, r.own, nr, R, row_bytes, source_col);
          if (src0) move_plane_rows(tiny, dst0 + own, src0 + back, r.own, r.back, nr, R, row_bytes, source_col);
        }
      } else {
        const RowRuns lane1 = cyclic_runs(cols.add(col, cols.fwd), col, w, L, W);
        const RowRuns lane0 = cyclic_runs(col, cols.add(col, cols.back), w, L, W);
        for (std::size_t j = 0; j < nr; ++j, r.next(), after.next()) {
          if (prefetch)
            for (std::size_t byte = 0; byte < row_bytes; byte += 64) {
              __builtin_prefetch(next1 + static_cast<std::size_t>(after.own) * row_bytes + byte);
              if (next0) __builtin_prefetch(next0 + static_cast<std::size_t>(after.back) * row_bytes + byte);
            }
          const auto own = static_cast<std::size_t>(r.own) * row_bytes;
          copy_row(dst1 + static_cast<std::size_t>(r.fwd) * row_bytes, src1 + own, lane1);
          if (src0) copy_row(dst0 + own, src0 + static_cast<std::size_t>(r.back) * row_bytes, lane0);
        }
      }
      m = next;
      row = next_row;
      col = cols.add(col, cols.next);
      if (pd >= 0) own_p = moves[pd].add(own_p, moves[pd].next);
    }
  }
}

// Blocks of S words from `from` to `to`, each block's words through the table of π^-1 (for lane 1's
// to[π i] = from[i] as well: to[j] = from[π^-1 j]), both pointers stepping by their own stride (words, negative
// in mirrored coordinates) from block to block. S a compile-time constant for blocks of up to kTinyRowWords words
// (0: `words` at run time), so a block of rows of 2 words is two moves, where the per-block work had been most of
// the time ((2^23+1)x2 float32 in place).
template <std::size_t W, std::size_t S>
void gather_blocks(Word<W> *to, std::ptrdiff_t to_step, const Word<W> *from, std::ptrdiff_t from_step,
                   std::size_t count, std::size_t words, const std::size_t *source) {
  const std::size_t n = S != 0 ? S : words;
  for (std::size_t c = 0; c < count; ++c, to += to_step, from += from_step)
    for (std::size_t j = 0; j < n; ++j) to[j] = from[source[j]];
}

template <std::size_t W>
using BlocksGather = void (*)(Word<W> *, std::ptrdiff_t, const Word<W> *, std::ptrdiff_t, std::size_t, std::size_t,
                              const std::size_t *);

template <std::size_t W, std::size_t... S>
BlocksGather<W> blocks_gather(std::size_t words, std::index_sequence<S...>) {
  BlocksGather<W> f = &gather_blocks<W, 0>;
  ((f = words == S + 1 ? &gather_blocks<W, S + 1> : f), ...);
  return f;
}

template <std::size_t W>
void pair_in_place(const Layout &l, unsigned char *bytes, int threads) {
  using T = Word<W>;
  T *data = reinterpret_cast<T *>(bytes);
  PairPlan p = make_pair_plan(l, kMaxOuterBlock);
  if (p.involution && p.S >= kChainWords) {
    chain_items<W>(p, bytes, threads);
    return;
  }
  set_batch(p, static_cast<int64_t>(std::max<std::size_t>(1, kItemWords / (p.S * (p.involution ? 1 : p.O)))));
  const KeptScratch kept(p.scratch_words * W);
  const T *saved = reinterpret_cast<const T *>(kept.get());
  save_boundary_slabs(p, kept.get(), bytes, W, threads);
  const auto K = static_cast<std::ptrdiff_t>(p.batches);
  // Batches of steps over short inner blocks: tables of π and π^-1 on the inner index. An item is one
  // outer element, or every outer element when σ is no involution (its chains visit them all).
  bool identity = true;
  for (int d = 0; d < p.inner_dims; ++d) identity = identity && p.inner_s[d] == 0;
  std::size_t back[kMaxOuterBlock];
  for (std::size_t i = 0; i < p.S; ++i) back[i] = inner_image(p, i, -1);
  const BlocksGather<W> gather = blocks_gather<W>(p.S, std::make_index_sequence<kTinyRowWords>());
  const auto S = static_cast<std::ptrdiff_t>(p.S), step = p.rev ? -S : S;  // from one step's block to the next
  const std::size_t per_item = p.involution ? 1 : p.O;
  const auto items = static_cast<std::ptrdiff_t>(static_cast<std::size_t>(K) * (p.O / per_item));
  // Each thread's lane-0 buffer, allocated before the parallel region (no exception may leave it).
  const std::size_t per_thread = static_cast<std::size_t>(p.batch) * p.S * per_item;
  HostBuffer<T> buffers(per_thread * static_cast<std::size_t>(threads));
#pragma omp parallel num_threads(threads)
  {
    T *const buf = buffers.get() + static_cast<std::size_t>(omp_get_thread_num()) * per_thread;
#pragma omp for schedule(static)
    for (std::ptrdiff_t it = 0; it < items; ++it) {
      const std::size_t o0 = static_cast<std::size_t>(it) % (p.O / per_item) * per_item;
      const auto k = static_cast<int64_t>(static_cast<std::size_t>(it) / (p.O / per_item));
      const int64_t b = batch_begin(p, k), e = batch_end(p, k);
      const int64_t e0 = std::min(e, p.lo);       // steps with lane 0, and steps whose lane 1 reads the data
      const bool last_saved = e0 == e && e0 > b;  // lane 0 of step e - 1 reads boundary k + 1
      const int64_t direct = last_saved ? e0 - 1 : e0;
      // Lane 0's sources, in the physical order of their destinations (each block's inner words by i).
      const auto slot = [&](std::size_t ol, int64_t t) {
        return (ol * static_cast<std::size_t>(p.batch) + static_cast<std::size_t>(p.rev ? e0 - 1 - t : t - b)) * p.S;
      };
      const auto run_words = [&](int64_t steps) { return static_cast<std::size_t>(steps) * p.S * W; };
      for (std::size_t ol = 0; ol < per_item; ++ol) {
        const std::size_t o = o0 + ol, back_o = outer_image(p, o, -1);
        if (!identity) {  // block by block, the inner words through the table of π^-1
          if (direct > b)
            gather(buf + slot(ol, b), step, data + word_at(p, back_o, b + p.lo + 1, 0), step,
                   static_cast<std::size_t>(direct - b), p.S, back);
          if (last_saved) gather(buf + slot(ol, e0 - 1), 0, saved + saved_at(p, k + 1, back_o, 0), 0, 1, p.S, back);
          continue;
        }
        if (direct > b)
          copy_words(buf + slot(ol, p.rev ? direct - 1 : b),
                     data + block_range_start(p, back_o, b + p.lo + 1, direct + p.lo + 1), run_words(direct - b));
        if (last_saved) copy_words(buf + slot(ol, e0 - 1), saved + saved_at(p, k + 1, back_o, 0), run_words(1));
      }
      for (std::size_t ol = 0; ol < per_item; ++ol) {
        const std::size_t o = o0 + ol, fwd_o = outer_image(p, o, 1);
        if (!identity) {  // block by block, to[π i] = from[i]
          if (e0 > b)
            gather(data + word_at(p, fwd_o, b + p.lo, 0), step, data + word_at(p, o, b, 0), step,
                   static_cast<std::size_t>(e0 - b), p.S, back);
          if (e == p.steps)
            gather(data + word_at(p, fwd_o, 2 * p.lo, 0), 0, saved + saved_at(p, 0, o, 0), 0, 1, p.S, back);
          continue;
        }
        if (e0 > b)
          copy_words(data + block_range_start(p, fwd_o, b + p.lo, e0 + p.lo), data + block_range_start(p, o, b, e0),
                     run_words(e0 - b));
        if (e == p.steps) copy_words(data + word_at(p, fwd_o, 2 * p.lo, 0), saved + saved_at(p, 0, o, 0), run_words(1));
      }
      for (std::size_t ol = 0; ol < per_item; ++ol)
        if (e0 > b)
          copy_words(data + block_range_start(p, o0 + ol, b, e0), buf + slot(ol, p.rev ? e0 - 1 : b),
                     run_words(e0 - b));
    }
  }
}

// Chunks of h rows (h dividing both R and the row shift, so that the map (a, r) -> (a + sA, r + sR) takes whole
// chunks to whole chunks, row j of one to row j of the other) of at most kCycleChunkBytes, and at least
// kCycleMinChunkBytes (shorter rows: the pair order).
constexpr std::size_t kCycleChunkBytes = std::size_t{256} << 10, kCycleMinChunkBytes = std::size_t{4} << 10;

}  // namespace

// The map is a translation of Z_n x Z_(R/h), so every orbit of chunks has the same length k (its order); an orbit
// X_0 -> X_1 -> ... -> X_(k-1) -> X_0 is rotated by saving X_(k-1), moving X_(i-1) into X_i for i = k-1 .. 1 and the
// saved chunk into X_0, each row moved with its own rotation by sL: every word read and written once, plus one
// chunk in k through the buffer. The pair order saves a 1/n share of the array (n = 3: a third), allocated each
// call (over the kept 64 MiB): 3 x 4096 x 4096 float64 in place took 35-170 ms a call as the host's huge pages came
// and went.
bool rotate_chunk_cycles(const Layout &l, unsigned char *data, int threads, std::size_t min_scratch_bytes) {
  if (l.ndim < 2 || l.ndim > 3) return false;
  const auto n = static_cast<std::size_t>(l.extent[0]), R = static_cast<std::size_t>(l.extent[1]);
  const auto L = static_cast<std::size_t>(l.ndim == 3 ? l.extent[2] : 1);
  const auto sA = static_cast<std::size_t>(l.shift[0]), sR = static_cast<std::size_t>(l.shift[1]);
  const auto sL = static_cast<std::size_t>(l.ndim == 3 ? l.shift[2] : 0);
  if (n % 2 == 0 || sA == 0 || l.bytes / n < min_scratch_bytes) return false;
  const std::size_t W = l.word_bytes, row_bytes = L * W, g = std::gcd(sR, R);  // gcd(0, R) = R
  std::size_t h = 0;
  for (std::size_t d = 1; d <= g && d * row_bytes <= kCycleChunkBytes; ++d)
    if (g % d == 0) h = d;
  if (h == 0 || h * row_bytes < kCycleMinChunkBytes) return false;
  const std::size_t chunks = R / h, step = sR / h;
  // One cell (a, c) of each orbit: cells are visited along their orbits once.
  std::vector<std::size_t> starts;
  std::vector<char> seen(n * chunks, 0);
  std::size_t k = 0;
  for (std::size_t cell = 0; cell < n * chunks; ++cell) {
    if (seen[cell]) continue;
    starts.push_back(cell);
    std::size_t a = cell / chunks, c = cell % chunks, len = 0;
    do {
      seen[a * chunks + c] = 1;
      a = (a + sA) % n, c = (c + step) % chunks, ++len;
    } while (a * chunks + c != cell);
    k = len;
  }
  const std::size_t chunk_bytes = h * row_bytes, tail = sL * W, head = row_bytes - tail;
  const auto at = [&](std::size_t a, std::size_t c) { return data + (a * R + c * h) * row_bytes; };
  // Rows of chunk `from` into chunk `to`, each row's word j to word j + sL (mod L).
  const auto move = [&](unsigned char *to, const unsigned char *from) {
    if (tail == 0) return static_cast<void>(std::memcpy(to, from, chunk_bytes));
    for (std::size_t j = 0; j < h; ++j, to += row_bytes, from += row_bytes) {
      std::memcpy(to + tail, from, head);
      std::memcpy(to, from + head, tail);
    }
  };
  const auto orbits = static_cast<std::ptrdiff_t>(starts.size());
  // Each thread's chunk buffer and orbit, allocated before the parallel region (no exception may leave it).
  const int team = usable_threads(threads);
  HostBuffer<unsigned char> buffers(chunk_bytes * static_cast<std::size_t>(team));
  std::vector<unsigned char *> orbits_of(k * static_cast<std::size_t>(team));
#pragma omp parallel num_threads(team)
  {
    const auto me = static_cast<std::size_t>(omp_get_thread_num());
    unsigned char *buffer = buffers.get() + me * chunk_bytes, **orbit = orbits_of.data() + me * k;
#pragma omp for schedule(dynamic, 4)
    for (std::ptrdiff_t o = 0; o < orbits; ++o) {
      std::size_t a = starts[static_cast<std::size_t>(o)] / chunks, c = starts[static_cast<std::size_t>(o)] % chunks;
      for (std::size_t i = 0; i < k; ++i, a = (a + sA) % n, c = (c + step) % chunks) orbit[i] = at(a, c);
      std::memcpy(buffer, orbit[k - 1], chunk_bytes);
      for (std::size_t i = k - 1; i > 0; --i) move(orbit[i], orbit[i - 1]);
      move(orbit[0], buffer);
    }
  }
  return true;
}

void run_cpu(const Layout &layout, void *out, const void *in, int threads) {
  threads = usable_threads(threads);
  auto *dst = static_cast<unsigned char *>(out);
  const auto *src = static_cast<const unsigned char *>(in);
  if (layout.ndim == 0) {  // nothing moves
    if (out != in) std::memcpy(dst, src, layout.bytes);
    return;
  }
  if (out == in && !is_involution(layout)) {
    if (rotate_chunk_cycles(layout, dst, threads, kKeptScratchBytes)) return;
    switch (layout.word_bytes) {
      case 4:
        pair_in_place<4>(layout, dst, threads);
        break;
      case 8:
        pair_in_place<8>(layout, dst, threads);
        break;
      case 16:
        pair_in_place<16>(layout, dst, threads);
        break;
      default:
        fail(SFFT_ERROR_INTERNAL, "shift: unexpected word size ", layout.word_bytes);
    }
    return;
  }
  const Layout l = join_unshifted_last(layout);
  const Rows g(l);
  const auto tasks = static_cast<std::ptrdiff_t>(g.rows * g.pieces);
  if (out != in && g.pieces == 1) {
    const TinyRowsCopy tiny = tiny_rows_copy(l, g);
#pragma omp parallel num_threads(threads)
    {
      const auto me = static_cast<std::size_t>(omp_get_thread_num());
      const auto all = static_cast<std::size_t>(omp_get_num_threads());
      const std::size_t r0 = g.rows * me / all, r1 = g.rows * (me + 1) / all;
      if (tiny != nullptr) {
        tiny(l, g, dst, src, r0, r1);
      } else {
#if defined(__x86_64__)
        const std::size_t row_bytes = g.L * l.word_bytes;
        if (row_bytes <= kShortRowBytes && (r1 - r0) * row_bytes >= kStreamBytes)
          stream_rows(l, g, dst, src, r0, r1);
        else
          copy_rows(l, g, dst, src, r0, r1);
#else
        copy_rows(l, g, dst, src, r0, r1);
#endif
      }
    }
  } else if (out != in) {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::ptrdiff_t t = 0; t < tasks; ++t) {
      std::size_t row = static_cast<std::size_t>(t) / g.pieces, p = static_cast<std::size_t>(t) % g.pieces;
      copy_piece(l, g, dst, src, row, p * g.piece, std::min(g.L, (p + 1) * g.piece));
    }
  } else {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::ptrdiff_t t = 0; t < tasks; ++t) {
      std::size_t row = static_cast<std::size_t>(t) / g.pieces, p = static_cast<std::size_t>(t) % g.pieces;
      swap_piece(l, g, dst, row, p * g.piece, std::min(g.L, (p + 1) * g.piece));
    }
  }
}

}  // namespace sfft::shift
