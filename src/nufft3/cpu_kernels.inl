// SPDX-License-Identifier: Apache-2.0
// Body of one instruction-set variant of the CPU NUFFT loops; included by cpu_kernels_<isa>.cpp with
// SFFT_NUFFT3_ISA naming the namespace. Everything but kernels() has internal linkage, and nothing here calls
// an out-of-line inline function of another header, so no code built with wider -m flags can be shared with
// (and picked by the linker for) the other variants.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

#include "nufft3/cpu_kernels.hpp"
#include "nufft3/kernel.hpp"

// Clang reports every `omp simd` loop it does not vectorise: short fixed-length loops it unrolls instead, and
// all of them under sanitizer instrumentation. Neither is a problem here.
#if defined(__clang__)
#pragma clang diagnostic ignored "-Wpass-failed"
#endif

namespace sfft::nufft3::cpu::SFFT_NUFFT3_ISA {
namespace {

// One SIMD register of Real (GCC/Clang vector extension; the attribute needs a non-dependent type).
template <class Real>
struct VectorOf;
template <>
struct VectorOf<float> {
  typedef float type __attribute__((vector_size(SFFT_NUFFT3_VECTOR_BYTES)));
};
template <>
struct VectorOf<double> {
  typedef double type __attribute__((vector_size(SFFT_NUFFT3_VECTOR_BYTES)));
};

// A narrower vector of Real: a line's tail (line_width, 8, 16 or 32 bytes) or part of a vector (add_pairs).
template <class Real, int Bytes>
struct PieceOf;
template <int Bytes>
struct PieceOf<float, Bytes> {
  typedef float type __attribute__((vector_size(Bytes)));
};
template <int Bytes>
struct PieceOf<double, Bytes> {
  typedef double type __attribute__((vector_size(Bytes)));
};

// Lanes F, F, F + 1, F + 1, ... of x, as many as I: weights of complex cells laid out like the interleaved values.
template <int F, class V, std::size_t... I>
inline auto paired_lanes(V x, std::index_sequence<I...>) {
  return __builtin_shufflevector(x, x, (F + static_cast<int>(I / 2))...);
}

// Weights of cells 0 .. kL - 1 from whole vectors of w, in lanes paired for the v-th vector of an interleaved line
// (cells v kL / 2 on) and for the piece after kV whole ones. Loads of other offsets, straddling two of the vectors
// that weights() has just stored, wait for both stores to retire (store forwarding fails): a quarter of 2-d
// spreading's samples.
template <class Real, class Vec, int kL>
inline Vec paired_weights(const Real *w, int v) {
  Vec x;
  std::memcpy(&x, w + v / 2 * kL, sizeof x);
  return v % 2 == 0 ? paired_lanes<0>(x, std::make_index_sequence<kL>())
                    : paired_lanes<kL / 2>(x, std::make_index_sequence<kL>());
}
template <class Real, class Vec, int kL, int kV, int kT>
inline auto paired_piece(const Real *w) {
  Vec x;
  std::memcpy(&x, w + kV / 2 * kL, sizeof x);
  return paired_lanes<kV % 2 * kL / 2>(x, std::make_index_sequence<kT>());
}
// a, b, a, b, ...: a complex value's parts repeated over the lanes of V.
template <class V, class Real, std::size_t... I>
inline V alternating(Real a, Real b, std::index_sequence<I...>) {
  return V{(I % 2 == 0 ? a : b)...};
}

template <class Real>
constexpr int stride_for(int w) {
  return (w + kStrideMultiple<Real> - 1) / kStrideMultiple<Real> * kStrideMultiple<Real>;
}
constexpr int kMaxStride = 64;  // stride_for(kMaxWidth)

// Width the per-line loops run over: W rounded up to whole vectors of complex values, so that a line is a few
// full-width vector operations rather than vectors plus a scalar tail. The extra taps have weight exactly 0
// (the Horner table is zero padded); their cells lie inside the slack that the engine allocates after every
// subgrid and after the FFT grid (kLineSlack cells).
template <class Real, int W>
constexpr int padded_width() {
  constexpr int lanes = SFFT_NUFFT3_VECTOR_BYTES / static_cast<int>(2 * sizeof(Real));
  return W > 0 ? (W + lanes - 1) / lanes * lanes : 0;
}

// Taps a spreading line adds: W itself where its 2 W values end in one narrower vector after whole ones (the
// tail a single 8-, 16- or 32-byte piece: as many vector operations as the padded line, fewer bytes moved), else
// the padded width. Double, AVX-512: W = 13 adds 26 values as three vectors and one 16-byte piece instead of four
// full vectors, 12 % faster in 3-d; float W = 7 (14 values: 32 + 16 + 8 bytes) was 24 % slower unpadded.
template <class Real, int W>
constexpr int line_width() {
  constexpr int per_vector = SFFT_NUFFT3_VECTOR_BYTES / static_cast<int>(sizeof(Real));
  constexpr int tail = W > 0 ? 2 * W % per_vector : 0;
  return (tail & (tail - 1)) == 0 ? W : padded_width<Real, W>();
}

// The Horner evaluation of N points' weights at a compile-time width in vector registers (each row's
// multiply-add on the row before it, not through memory), each coefficient row loaded once for all N: store(i,
// v, value) receives vector v of point i's weights (z[i] its offset in its first cell, as weights() forms it).
template <class Real, int W, int N, class Store>
inline void horner_chains(const HornerView<Real> &k, const Real (&z)[N], Store store) {
  using Vec = typename VectorOf<Real>::type;
  constexpr int kS = stride_for<Real>(W), kL = SFFT_NUFFT3_VECTOR_BYTES / static_cast<int>(sizeof(Real)), kV = kS / kL;
  static_assert(kS % kL == 0, "Horner rows are whole vectors");
  Vec acc[N][kV];
#pragma GCC unroll 8
  for (int i = 0; i < N; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < kV; ++v) std::memcpy(&acc[i][v], k.coeff + v * kL, sizeof(Vec));
  for (int r = 1; r <= k.degree; ++r) {
    Vec row[kV];
#pragma GCC unroll 4
    for (int v = 0; v < kV; ++v) std::memcpy(&row[v], k.coeff + r * kS + v * kL, sizeof(Vec));
#pragma GCC unroll 8
    for (int i = 0; i < N; ++i)
#pragma GCC unroll 4
      for (int v = 0; v < kV; ++v) acc[i][v] = acc[i][v] * z[i] + row[v];
  }
#pragma GCC unroll 8
  for (int i = 0; i < N; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < kV; ++v) store(i, v, acc[i][v]);
}

// Weights of the taps of a point at grid coordinate pos into w[0 .. stride); returns its first cell. The
// coordinate is double in both precisions and the offset z within the cell is formed in double: a float
// coordinate holds whole cells and offset in 24 bits together, so at 1e6 cells (1-d grids) the offset had
// 0.06-cell steps and single precision could not get below 7e-4 (uniform 1-d, N = K = 1e5), nor 5e-6 in 2-d.
template <class Real, int W>
inline long long weights(const HornerView<Real> &k, double pos, Real *__restrict w) {
  constexpr int kS = W > 0 ? stride_for<Real>(W) : 0;
  const int S = W > 0 ? kS : k.stride;
  const double a = pos - static_cast<double>(k.half_width);
  const double first = __builtin_ceil(a);
  const Real z = static_cast<Real>(2 * (first - a) - 1);
  const Real *__restrict c = k.coeff;
  if constexpr (W > 0) {
    // Compile-time width: the polynomials' values stay in vector registers from row to row (horner_chains).
    // Through w (the loop below) each row's multiply-add waited on the previous row's store: 2-d double W = 8,
    // interpolation 5.7 ms of an 11.8 ms exec, a fifth of it on that chain.
    const Real zs[1] = {z};
    horner_chains<Real, W, 1>(k, zs, [&](int, int v, const auto &value) {
      std::memcpy(w + v * (SFFT_NUFFT3_VECTOR_BYTES / static_cast<int>(sizeof(Real))), &value, sizeof value);
    });
    return static_cast<long long>(first);
  }
#pragma omp simd
  for (int i = 0; i < S; ++i) w[i] = c[i];
  for (int r = 1; r <= k.degree; ++r) {
    const Real *__restrict row = c + r * S;
#pragma omp simd
    for (int i = 0; i < S; ++i) w[i] = w[i] * z + row[i];
  }
  return static_cast<long long>(first);
}

// Weights of `points` points in `dims` dimensions at a compile-time width, as weights() gives them: point q's
// weights in dimension d at taps + (q * 3 + d) * stride_for(W), its first cell in first[q][d]. kChains Horner
// chains run side by side (horner_chains), where one chain after another had every row's multiply-add wait for
// the previous row's.
template <class Real, int W>
inline void weights_of_group(const HornerView<Real> &k, const double *const *pos, std::size_t j0, int points, int dims,
                             Real *taps, long long (*first)[3]) {
  static_assert(W > 0, "compile-time width");
  constexpr int kS = stride_for<Real>(W), kL = SFFT_NUFFT3_VECTOR_BYTES / static_cast<int>(sizeof(Real));
  constexpr int kChains = kS / kL > 2 ? 4 : 8;  // accumulators and z's within the 16 or 32 vector registers
  const int chains = points * dims;
  for (int c0 = 0; c0 < chains; c0 += kChains) {
    Real z[kChains];
    int at[kChains];
#pragma GCC unroll 8
    for (int i = 0; i < kChains; ++i) {
      const int c = c0 + i < chains ? c0 + i : chains - 1;  // past the end: the last chain again
      const int q = c / dims, d = c - q * dims;
      const double a = pos[d][j0 + static_cast<std::size_t>(q)] - static_cast<double>(k.half_width);
      const double f = __builtin_ceil(a);
      z[i] = static_cast<Real>(2 * (f - a) - 1);
      first[q][d] = static_cast<long long>(f);
      at[i] = (q * 3 + d) * kS;
    }
    horner_chains<Real, W, kChains>(
        k, z, [&](int i, int v, const auto &value) { std::memcpy(taps + at[i] + v * kL, &value, sizeof value); });
  }
}

// Points ahead whose strengths (spreading) or output locations (interpolation) are prefetched.
constexpr std::size_t kPrefetchAhead = 8;

// The lines of a 3-d source's window at a compile-time width, as whole vectors on vector boundaries: every
// subgrid line starts on one (SpreadTask), so all of a window's lines share its first cell's offset within a
// vector, `shift` cells, and each line adds the same kN vectors (the strength times the last dimension's weights
// moved up by shift cells, zeros around them) at the aligned address below its first cell. Unaligned, most of a
// line's 64-byte accesses crossed a cache line, and such stores took twice as long as aligned ones (development
// VM). Taken where it measured faster (aligned_lines): 3-d double from W = 9 on, spreading 9-16 % faster (stage
// medians, uniform 3-D, N = 1e5, 2 threads: W = 9 11.8 -> 10.0 ms, W = 10 15.4 -> 14.1, W = 12 25.2 -> 22.5, W = 14
// 36.1 -> 32.8). The quarter more vectors and the shifted weights' set-up cost more than they saved at W = 5 (1.8
// -> 2.0 ms), in 2-d (double W = 11 1.85 -> 2.1) and in single precision (3-d W = 7 2.4 -> 3.0), and broke even
// at W = 7 and 8 in 3-d double.
template <class Real, int W, int DIM>
constexpr bool aligned_lines() {
  return DIM == 3 && sizeof(Real) == 8 && W >= 9;
}

template <class Real, int W>
struct WindowLines {
  using Vec = typename VectorOf<Real>::type;
  static constexpr int kL = SFFT_NUFFT3_VECTOR_BYTES / static_cast<int>(sizeof(Real));  // Reals a vector
  static constexpr int kC = kL / 2;                                                     // cells a vector
  static constexpr int kN = (W + kC - 1) / kC;  // vectors a line that starts on a vector boundary
  Vec kv[kN + 1];
  int shift;

  // first: the window's first cell (its first line) in the subgrid.
  WindowLines(const Real *first, const Real *last, Real vr, Real vi) {
    shift = static_cast<int>(reinterpret_cast<std::uintptr_t>(first) % SFFT_NUFFT3_VECTOR_BYTES / (2 * sizeof(Real)));
    alignas(SFFT_NUFFT3_VECTOR_BYTES) Real line[(kN + 1) * kL] = {};
    for (int c = 0; c < W; ++c) {
      line[2 * (c + shift)] = vr * last[c];
      line[2 * (c + shift) + 1] = vi * last[c];
    }
    std::memcpy(kv, line, sizeof kv);
  }
  // Adds the lines of planes a_begin .. a_end - 1 of dimension 0, weights kx, ky.
  void add(Real *__restrict first, const Real *kx, const Real *ky, int a_begin, int a_end, std::size_t stride0,
           std::size_t stride1) const {
    Real *base = first - 2 * shift;
    if (shift + W <= kN * kC)
      add_lines<kN>(base, kx, ky, a_begin, a_end, stride0, stride1);
    else
      add_lines<kN + 1>(base, kx, ky, a_begin, a_end, stride0, stride1);
  }

 private:
  template <int N>
  void add_line(Real *out, Real s) const {
#pragma GCC unroll 16
    for (int v = 0; v < N; ++v) {
      Vec x;
      std::memcpy(&x, out + v * kL, sizeof x);
      x += s * kv[v];
      std::memcpy(out + v * kL, &x, sizeof x);
    }
  }
  template <int N>
  void add_lines(Real *base, const Real *kx, const Real *ky, int a_begin, int a_end, std::size_t stride0,
                 std::size_t stride1) const {
    for (int a = a_begin; a < a_end; ++a) {
      Real *plane = base + 2 * static_cast<std::size_t>(a) * stride0;
      for (int b = 0; b < W; ++b) add_line<N>(plane + 2 * static_cast<std::size_t>(b) * stride1, kx[a] * ky[b]);
    }
  }
};

// 3-D spreading where one source's window takes much of L1 (over kWindowBytes: double W >= 12, 144 lines of 192
// bytes, 27 KiB): sources are taken kPlaneBatch at a time, and the batch's windows a slab of dimension-0 planes
// at a time (at most kSlabBytes of one window), so that sorted, nearby sources find each other's lines in L1
// (dense clusters 3-D double, development VM: spreading at W = 14, a 44 KiB window, took 2.2 times W = 13's for
// 1.25 times the taps; slabs from 24 KiB windows on were 5-19 % faster at W = 12 and 13 than from 40 KiB on, 16
// KiB slabs no better). A cell lies in one slab, and within it the sources add in sorted order: the same bits.
constexpr std::size_t kWindowBytes = 24 * 1024;
constexpr std::size_t kSlabBytes = 24 * 1024;
constexpr int kPlaneBatch = 16;

// Bytes of one dimension-0 plane of a 3-D window `width` cells a side whose lines hold `line` complex values,
// and the planes of it a slab takes.
template <class Real>
constexpr std::size_t plane_bytes(int width, int line) {
  return static_cast<std::size_t>(width) * static_cast<std::size_t>(2 * line) * sizeof(Real);
}
template <class Real>
constexpr int slab_planes(int width, int line) {
  return kSlabBytes / plane_bytes<Real>(width, line) > 1 ? static_cast<int>(kSlabBytes / plane_bytes<Real>(width, line))
                                                         : 1;
}
template <class Real>
constexpr bool window_fills_cache(int width, int line) {
  return plane_bytes<Real>(width, line) * static_cast<std::size_t>(width) > kWindowBytes;
}

template <class Real, int W>
void spread_3d_by_slabs(const SpreadTask<Real> &t, int planes) {
  const int w = W > 0 ? W : t.kernel.width;
  const int wp = W > 0 ? padded_width<Real, W>() : w;
  const int wl = W > 0 ? line_width<Real, W>() : w;
  alignas(64) Real kx[kPlaneBatch][kMaxStride], ky[kPlaneBatch][kMaxStride], kz[kPlaneBatch][kMaxStride];
  alignas(64) Real kv[2 * kMaxWidth];
  long long cx[kPlaneBatch], cy[kPlaneBatch], cz[kPlaneBatch];
  Real vr[kPlaneBatch], vi[kPlaneBatch];
  const Real *fr = reinterpret_cast<const Real *>(t.f);
  const Real *pr = reinterpret_cast<const Real *>(t.phase);
  for (std::size_t j0 = t.begin; j0 < t.end; j0 += kPlaneBatch) {
    const int batch = static_cast<int>(t.end - j0 < kPlaneBatch ? t.end - j0 : kPlaneBatch);
    // The next batch's strengths, read in the caller's order (see spread).
    for (std::size_t j = j0 + kPlaneBatch; j < j0 + 2 * kPlaneBatch && j < t.end; ++j)
      for (int g = 0; g < t.count; ++g)
        __builtin_prefetch(fr + 2 * (static_cast<std::size_t>(g) * t.f_stride + t.index[j]));
    long long lo = 0, hi = 0;
    for (int q = 0; q < batch; ++q) {
      const std::size_t j = j0 + static_cast<std::size_t>(q);
      cx[q] = weights<Real, W>(t.kernel, t.pos[0][j], kx[q]) + t.offset[0];
      cy[q] = weights<Real, W>(t.kernel, t.pos[1][j], ky[q]) + t.offset[1];
      cz[q] = weights<Real, W>(t.kernel, t.pos[2][j], kz[q]) + t.offset[2];
      lo = q == 0 || cx[q] < lo ? cx[q] : lo;
      hi = q == 0 || cx[q] + w > hi ? cx[q] + w : hi;
    }
    for (int g = 0; g < t.count; ++g) {
      for (int q = 0; q < batch; ++q) {
        const std::size_t j = j0 + static_cast<std::size_t>(q);
        const std::size_t fi = 2 * (static_cast<std::size_t>(g) * t.f_stride + t.index[j]);
        const Real fre = fr[fi], fim = fr[fi + 1], pre = pr[2 * j], pim = pr[2 * j + 1];
        vr[q] = fre * pre - fim * pim;
        vi[q] = fre * pim + fim * pre;
      }
      Real *__restrict sub = t.sub + 2 * static_cast<std::size_t>(g) * t.sub_stride;
      for (long long x0 = lo; x0 < hi; x0 += planes) {
        for (int q = 0; q < batch; ++q) {
          const long long a_begin = x0 > cx[q] ? x0 - cx[q] : 0;
          const long long a_end = x0 + planes - cx[q] < w ? x0 + planes - cx[q] : w;
          if (a_begin >= a_end) continue;
          if constexpr (aligned_lines<Real, W, 3>()) {
            Real *first = sub + 2 * (cx[q] * static_cast<long long>(t.stride0) +
                                     cy[q] * static_cast<long long>(t.stride1) + cz[q]);
            WindowLines<Real, W>(first, kz[q], vr[q], vi[q])
                .add(first, kx[q], ky[q], static_cast<int>(a_begin), static_cast<int>(a_end), t.stride0, t.stride1);
            continue;
          }
#pragma omp simd
          for (int b = 0; b < wp; ++b) {
            kv[2 * b] = vr[q] * kz[q][b];
            kv[2 * b + 1] = vi[q] * kz[q][b];
          }
          for (long long a = a_begin; a < a_end; ++a) {
            for (int b = 0; b < w; ++b) {
              Real *__restrict out = sub + 2 * ((cx[q] + a) * static_cast<long long>(t.stride0) +
                                                (cy[q] + b) * static_cast<long long>(t.stride1) + cz[q]);
              const Real s = kx[q][a] * ky[q][b];
#pragma omp simd
              for (int e = 0; e < 2 * wl; ++e) out[e] += s * kv[e];
            }
          }
        }
      }
    }
  }
}

// A 2-d or 3-d source's window at a compile-time width: the last dimension's weights times the strength,
// interleaved like the grid (lanes re, im of a cell), are built in vector registers, and each line adds them
// scaled by the other dimensions' weights: a line is line_width cells, whole vectors then a narrower piece.
// Built through an array, the narrow stores and the whole-vector reloads of the first line stalled on store
// forwarding. last is read as the whole vectors weights() stored (paired_weights).
template <class Real, int W, int DIM>
inline void spread_window(Real *__restrict sub, const Real *kx, const Real *ky, const Real *last, Real vr, Real vi,
                          long long cx, long long cy, long long cz, std::size_t stride0, std::size_t stride1) {
  using Vec = typename VectorOf<Real>::type;
  constexpr int kL = SFFT_NUFFT3_VECTOR_BYTES / static_cast<int>(sizeof(Real));
  constexpr int kCells = line_width<Real, W>(), kV = 2 * kCells / kL, kT = 2 * kCells - kV * kL;
  using Piece = typename PieceOf<Real, static_cast<int>(sizeof(Real)) * (kT > 0 ? kT : 2)>::type;
  Vec kv[kV > 0 ? kV : 1];
  Piece kt{};
  const Vec strength = alternating<Vec>(vr, vi, std::make_index_sequence<kL>());
#pragma GCC unroll 16
  for (int v = 0; v < kV; ++v) kv[v] = paired_weights<Real, Vec, kL>(last, v) * strength;
  if constexpr (kT > 0)
    kt = paired_piece<Real, Vec, kL, kV, kT>(last) * alternating<Piece>(vr, vi, std::make_index_sequence<kT>());
  auto add_line = [&](Real *out, Real s) {
#pragma GCC unroll 16
    for (int v = 0; v < kV; ++v) {
      Vec x;
      std::memcpy(&x, out + v * kL, sizeof x);
      x += s * kv[v];
      std::memcpy(out + v * kL, &x, sizeof x);
    }
    if constexpr (kT > 0) {
      Piece x;
      std::memcpy(&x, out + kV * kL, sizeof x);
      x += s * kt;
      std::memcpy(out + kV * kL, &x, sizeof x);
    }
  };
  for (int a = 0; a < W; ++a) {
    if constexpr (DIM == 2) {
      add_line(sub + 2 * ((cx + a) * static_cast<long long>(stride0) + cy), kx[a]);
    } else {
      for (int b = 0; b < W; ++b)
        add_line(
            sub + 2 * ((cx + a) * static_cast<long long>(stride0) + (cy + b) * static_cast<long long>(stride1) + cz),
            kx[a] * ky[b]);
    }
  }
}

template <class Real, int W, int DIM>
void spread(const SpreadTask<Real> &t) {
  if constexpr (DIM == 3) {
    const int width = W > 0 ? W : t.kernel.width, line = W > 0 ? line_width<Real, W>() : width;
    if (window_fills_cache<Real>(width, line)) {
      spread_3d_by_slabs<Real, W>(t, slab_planes<Real>(width, line));
      return;
    }
  }
  const int w = W > 0 ? W : t.kernel.width;
  const int wp = W > 0 ? padded_width<Real, W>() : w;
  const int wl = W > 0 ? line_width<Real, W>() : w;
  alignas(64) Real kx[kMaxStride], ky[kMaxStride], kz[kMaxStride], kv[2 * kMaxWidth];
  const Real *fr = reinterpret_cast<const Real *>(t.f);
  const Real *pr = reinterpret_cast<const Real *>(t.phase);
  for (std::size_t j = t.begin; j < t.end; ++j) {
    // The strengths are read in the caller's order, a cache miss per source and transform once they outgrow
    // the cache (ntransf 16); fetched kPrefetchAhead sources ahead, the misses overlap the spreading.
    if (j + kPrefetchAhead < t.end) {
      const std::size_t ahead = t.index[j + kPrefetchAhead];
      for (int g = 0; g < t.count; ++g) __builtin_prefetch(fr + 2 * (static_cast<std::size_t>(g) * t.f_stride + ahead));
    }
    const std::size_t src = t.index[j];
    const Real pre = pr[2 * j], pim = pr[2 * j + 1];
    const long long cx = weights<Real, W>(t.kernel, t.pos[0][j], kx) + t.offset[0];
    long long cy = 0, cz = 0;
    if (DIM >= 2) cy = weights<Real, W>(t.kernel, t.pos[1][j], ky) + t.offset[1];
    if (DIM == 3) cz = weights<Real, W>(t.kernel, t.pos[2][j], kz) + t.offset[2];
    const Real *last = DIM == 1 ? kx : DIM == 2 ? ky : kz;
    for (int g = 0; g < t.count; ++g) {
      const std::size_t fi = 2 * (static_cast<std::size_t>(g) * t.f_stride + src);
      const Real fre = fr[fi], fim = fr[fi + 1];
      const Real vr = fre * pre - fim * pim, vi = fre * pim + fim * pre;
      Real *__restrict sub = t.sub + 2 * static_cast<std::size_t>(g) * t.sub_stride;
      if (DIM == 1) {
        // The line straight from the weights. Through kv (below), built as two half-width vectors and reloaded
        // as one, every source's line stalled on store forwarding: half of the 1-d spreading's samples (float,
        // W = 5). In 2-d (W lines a source, the stall once) the direct form was slower in single precision.
        Real *__restrict out = sub + 2 * cx;
#pragma omp simd
        for (int b = 0; b < wl; ++b) {
          out[2 * b] += vr * last[b];
          out[2 * b + 1] += vi * last[b];
        }
        continue;
      }
      if constexpr (aligned_lines<Real, W, DIM>()) {
        Real *first = sub + 2 * (cx * static_cast<long long>(t.stride0) + cy * static_cast<long long>(t.stride1) + cz);
        WindowLines<Real, W>(first, last, vr, vi).add(first, kx, ky, 0, W, t.stride0, t.stride1);
        continue;
      } else if constexpr (W > 0) {
        spread_window<Real, W, DIM>(sub, kx, ky, last, vr, vi, cx, cy, cz, t.stride0, t.stride1);
        continue;
      }
      // The last dimension's weights times the strength, interleaved like the grid: each line is one real axpy.
#pragma omp simd
      for (int b = 0; b < wp; ++b) {
        kv[2 * b] = vr * last[b];
        kv[2 * b + 1] = vi * last[b];
      }
      if (DIM == 2) {
        for (int a = 0; a < w; ++a) {
          Real *__restrict out = sub + 2 * ((cx + a) * static_cast<long long>(t.stride0) + cy);
          const Real s = kx[a];
#pragma omp simd
          for (int e = 0; e < 2 * wl; ++e) out[e] += s * kv[e];
        }
      } else {
        for (int a = 0; a < w; ++a) {
          for (int b = 0; b < w; ++b) {
            Real *__restrict out = sub + 2 * ((cx + a) * static_cast<long long>(t.stride0) +
                                              (cy + b) * static_cast<long long>(t.stride1) + cz);
            const Real s = kx[a] * ky[b];
#pragma omp simd
            for (int e = 0; e < 2 * wl; ++e) out[e] += s * kv[e];
          }
        }
      }
    }
  }
}

// First cell of a window on a periodic axis of n cells, in [0, n). Targets lie within (-n, 2 n) and the last
// dimension adds n / 2, so one wrap each way (selects, not branches: about half the last dimension's windows
// wrap) almost always does; the 64-bit remainder it replaced was 2 % of a 3-d single exec.
inline long long wrap_first(long long first, long long n) {
  first += first < 0 ? n : 0;
  first -= first >= n ? n : 0;
  if (first < 0 || first >= n) first = (first % n + n) % n;
  return first;
}

// In 2-d and 3-d, targets of an interpolation block are taken kInterpGroup at a time: their weights and first
// cells are worked out once, then each transform's grid is read for the whole group, so that the group's
// neighbourhood of one grid stays in cache. Target by target, a W^3 window of every one of the ntransf grids was
// read in turn (W = 16, double: 64 KiB each): clustered 3-d, 16 transforms, tol 3e-14 took 465-486 ms, in groups
// 341-394 (development VM, 2 threads). 2-d, same process, bit-identical: uniform 16 transforms double 1e-5
// 21.0-21.3 -> 19.7 ms, uniform double 1e-9 11.7 -> 10.9, K >> N double 1e-8 5.9-6.1 -> 5.1-5.4, spiral single 1e-4
// 4.6 -> 4.2-4.3 (uniform 16 transforms single 1e-5 16.4-17.9 -> 17.3-17.7). In 1-d, where a window is one line,
// groups gained only with a group's weights worked out together (weights_of_group; compile-time widths): uniform
// 1-d single 1e-4, same process, 2.42 -> 2.26 ms; before that, none.
constexpr int kInterpGroup = 16;

// A target's output: its window's sum (sr, si) times its factor, into F at the caller's order.
template <class Real>
inline void store_target(const InterpTask<Real> &t, Real sr, Real si, std::size_t j, int tr) {
  const Real *fac = reinterpret_cast<const Real *>(t.factor);
  const Real fre = fac[2 * j], fim = fac[2 * j + 1];
  Real *out = reinterpret_cast<Real *>(t.F);
  const std::size_t o = 2 * (static_cast<std::size_t>(tr) * t.K + t.index[j]);
  out[o] = sr * fre - si * fim;
  out[o + 1] = sr * fim + si * fre;
}
// The same from the window's lines summed (acc, interleaved complex), weighted by the last dimension's w weights.
template <class Real>
inline void write_target(const InterpTask<Real> &t, const Real *acc, const Real *last, int w, std::size_t j, int tr) {
  Real sr = 0, si = 0;
#pragma omp simd reduction(+ : sr, si)
  for (int b = 0; b < w; ++b) {
    sr += acc[2 * b] * last[b];
    si += acc[2 * b + 1] * last[b];
  }
  store_target(t, sr, si, j, tr);
}

// Sum of the even lanes and of the odd lanes of a vector of Bytes bytes (real and imaginary parts), halving it.
template <class Real, int Bytes>
inline void add_pairs(typename PieceOf<Real, Bytes>::type x, Real &re, Real &im) {
  if constexpr (Bytes == 2 * static_cast<int>(sizeof(Real))) {
    re += x[0];
    im += x[1];
  } else {
    typename PieceOf<Real, Bytes / 2>::type lo, hi;
    std::memcpy(&lo, &x, sizeof lo);
    std::memcpy(&hi, reinterpret_cast<const char *>(&x) + Bytes / 2, sizeof hi);
    add_pairs<Real, Bytes / 2>(lo + hi, re, im);
  }
}

// A window line's sum in vector registers at a compile-time width W (GCC/Clang vector extensions): kV whole
// vectors of kL values, then a narrower piece of kT values (0 or a power of two) where line_width says so (W =
// 13 in double: three vectors and 16 bytes instead of four vectors).
template <class Real, int W>
struct LineVectors {
  static constexpr int kL = SFFT_NUFFT3_VECTOR_BYTES / static_cast<int>(sizeof(Real));
  static constexpr int kWl = 2 * W >= kL ? line_width<Real, W>() : padded_width<Real, W>();
  static constexpr int kV = 2 * kWl / kL;       // whole vectors a line
  static constexpr int kT = 2 * kWl - kV * kL;  // then a piece of kT values
  using Vec = typename VectorOf<Real>::type;
  using Piece = typename PieceOf<Real, static_cast<int>(sizeof(Real)) * (kT > 0 ? kT : 2)>::type;
  // r += sc times the line's vectors, rt += sc times its piece (unused where kT == 0).
  static inline void add(Vec (&r)[kV], Piece &rt, const Real *l, Real sc) {
#pragma GCC unroll 16
    for (int v = 0; v < kV; ++v) {
      Vec x;
      std::memcpy(&x, l + v * kL, sizeof x);
      r[v] += sc * x;
    }
    if constexpr (kT > 0) {
      Piece x;
      std::memcpy(&x, l + kV * kL, sizeof x);
      rt += sc * x;
    }
  }
  // The line's cells weighted by the last dimension's weights (last[b], zero past the width) and summed, in
  // registers: through an array, the vectors' stores and the narrower reloads stalled on store forwarding, and
  // the sum was a chain of scalar adds (2-d double W = 8: a quarter of the interpolation). last is read as the
  // whole vectors the weights were stored as (paired_weights).
  static inline void finish(const Vec (&r)[kV], const Piece &rt, const Real *last, Real &re, Real &im) {
    Vec sum = {};
#pragma GCC unroll 16
    for (int v = 0; v < kV; ++v) sum += r[v] * paired_weights<Real, Vec, kL>(last, v);
    re = 0;
    im = 0;
    add_pairs<Real, SFFT_NUFFT3_VECTOR_BYTES>(sum, re, im);
    if constexpr (kT > 0)
      add_pairs<Real, static_cast<int>(sizeof(Piece))>(rt * paired_piece<Real, Vec, kL, kV, kT>(last), re, im);
  }
};

// A window's line of w cells from `first` on the last (contiguous) axis: the grid's own cells where the window
// does not wrap, else the cells at `wrapped` gathered into `gathered`, zero padded to wp.
template <class Real>
inline const Real *window_line(const Real *line, long long first, bool contiguous, const long long *wrapped, int w,
                               int wp, Real *gathered) {
  if (contiguous) return line + 2 * first;
  for (int e = 0; e < w; ++e) {
    gathered[2 * e] = line[2 * wrapped[e]];
    gathered[2 * e + 1] = line[2 * wrapped[e] + 1];
  }
  for (int e = 2 * w; e < 2 * wp; ++e) gathered[e] = 0;
  return gathered;
}

// The lines of planes a0 .. a1 - 1 of a 3-D window that does not wrap on the last axis (its lines start
// `first_last` cells into rows ix[a], iy[b]), weighted by kx[a] ky[b], added to r / rt. Out of line, so that its
// loop keeps its offsets and counters in registers: inlined into interpolate, GCC kept the line counter and half
// the offsets on the stack, and every line waited on a store-to-load round trip. Even and odd lines go to two
// accumulator sets, so that a line's multiply-adds do not wait on the previous line's.
template <class Real, int W>
[[gnu::noinline]] void sum_window_3d(const Real *g, const long long *ix, const long long *iy, long long first_last,
                                     long long ny, long long nz, const Real *kx, const Real *ky, int a0, int a1,
                                     typename LineVectors<Real, W>::Vec (&r)[LineVectors<Real, W>::kV],
                                     typename LineVectors<Real, W>::Piece &rt) {
  using LV = LineVectors<Real, W>;
  constexpr int kSets = 2;
  // Local accumulators: r itself may alias the grid (a vector of Real may alias Real), so adding into it kept it in
  // memory, a load and a store every line.
  typename LV::Vec acc[kSets][LV::kV] = {};
  typename LV::Piece acc_t[kSets] = {};
  std::ptrdiff_t row[W];
  for (int b = 0; b < W; ++b) row[b] = 2 * (iy[b] * nz + first_last);
  const std::ptrdiff_t plane = 2 * ny * nz;
  for (int a = a0; a < a1; ++a) {
    const Real *p = g + ix[a] * plane;
    const Real sa = kx[a];
#pragma GCC unroll 16
    for (int b = 0; b < W; ++b) LV::add(acc[b % kSets], acc_t[b % kSets], p + row[b], sa * ky[b]);
  }
#pragma GCC unroll 4
  for (int j = 0; j < kSets; ++j) {
#pragma GCC unroll 16
    for (int v = 0; v < LV::kV; ++v) r[v] += acc[j][v];
    rt += acc_t[j];
  }
}

// Interpolation's counterpart of WindowLines: where the grid's lines start on 64-byte boundaries (its base aligned
// and the last dimension a multiple of 64 bytes long), a window's lines are read as the whole aligned vectors around
// them, N of them from the aligned cell below the window's first, and the sums are weighted by the last dimension's
// weights moved up by the window's offset within a vector (zeros around them: the cells outside the window add
// nothing). Unaligned, most of a line's 64-byte loads crossed a cache line: a stand-alone copy of the 3-d double line
// loop at W = 12 (clustered windows, development VM) took 2.15 ns a line, aligned 1.45. Taken with aligned_lines.
template <class Real, int W>
struct AlignedSums {
  using Vec = typename VectorOf<Real>::type;
  static constexpr int kL = SFFT_NUFFT3_VECTOR_BYTES / static_cast<int>(sizeof(Real));  // Reals a vector
  static constexpr int kC = kL / 2;                                                     // cells a vector
  static constexpr int kN = (W + kC - 1) / kC;  // vectors a line that starts on a vector boundary

  static bool usable(const Real *grid, long long n_last) {
    return reinterpret_cast<std::uintptr_t>(grid) % SFFT_NUFFT3_VECTOR_BYTES == 0 &&
           n_last % static_cast<long long>(kC) == 0;
  }
  // The lines of planes a0 .. a1 - 1 of a window whose lines start `shift` cells after `first_last` (a multiple of
  // kC) in rows ix[a], iy[b], weighted by kx[a] ky[b], added to r: kN vectors a line, or kN + 1 where the window
  // runs into one more. Two accumulator sets, as sum_window_3d.
  static void add(const Real *g, const long long *ix, const long long *iy, long long first_last, int shift,
                  long long ny, long long nz, const Real *kx, const Real *ky, int a0, int a1, Vec (&r)[kN + 1]) {
    if (shift + W <= kN * kC)
      sum_lines<kN>(g, ix, iy, first_last, ny, nz, kx, ky, a0, a1, r);
    else
      sum_lines<kN + 1>(g, ix, iy, first_last, ny, nz, kx, ky, a0, a1, r);
  }
  // The sums r weighted by the last dimension's weights `last` (W of them) moved up by shift cells.
  static void finish(const Vec (&r)[kN + 1], int shift, const Real *last, Real &re, Real &im) {
    alignas(SFFT_NUFFT3_VECTOR_BYTES) Real w[(kN + 1) * kL] = {};
    for (int c = 0; c < W; ++c) w[2 * (c + shift)] = w[2 * (c + shift) + 1] = last[c];
    Vec sum = {};
#pragma GCC unroll 8
    for (int v = 0; v <= kN; ++v) {
      Vec x;
      std::memcpy(&x, w + v * kL, sizeof x);
      sum += r[v] * x;
    }
    re = 0;
    im = 0;
    add_pairs<Real, SFFT_NUFFT3_VECTOR_BYTES>(sum, re, im);
  }

 private:
  template <int N>
  [[gnu::noinline]] static void sum_lines(const Real *g, const long long *ix, const long long *iy, long long first_last,
                                          long long ny, long long nz, const Real *kx, const Real *ky, int a0, int a1,
                                          Vec (&r)[kN + 1]) {
    Vec acc[2][N] = {};
    std::ptrdiff_t row[W];
    for (int b = 0; b < W; ++b) row[b] = 2 * (iy[b] * nz + first_last);
    const std::ptrdiff_t plane = 2 * ny * nz;
    for (int a = a0; a < a1; ++a) {
      const Real *p = g + ix[a] * plane;
      const Real sa = kx[a];
#pragma GCC unroll 16
      for (int b = 0; b < W; ++b) {
        const Real sc = sa * ky[b];
#pragma GCC unroll 8
        for (int v = 0; v < N; ++v) {
          Vec x;
          std::memcpy(&x, p + row[b] + v * kL, sizeof x);
          acc[b % 2][v] += sc * x;
        }
      }
    }
#pragma GCC unroll 8
    for (int v = 0; v < N; ++v) r[v] += acc[0][v] + acc[1][v];
  }
};

// 3-D interpolation of one transform's grid g at a group of targets (weights in taps, first cells in first) whose
// windows take much of L1: slab by slab of dimension-0 planes (at most kSlabBytes of a window: double W = 16, planes of
// 4 KiB, 6 a slab), each target's vector accumulators kept between slabs; a slab's lines of a window that does not
// wrap are summed by sum_window_3d.
template <class Real, int W>
void interpolate_group_by_slabs(const InterpTask<Real> &t, const Real *g, int tr, std::size_t j0, int group,
                                const long long (*first)[3], const Real *taps, int S) {
  using LV = LineVectors<Real, W>;
  constexpr int kV = LV::kV;
  // As many slabs as kSlabBytes needs, of equal numbers of planes: double W = 12 took 10 + 2 planes, 28.2-28.7 ms
  // of interpolation against 26.1-26.9 with 6 + 6 (clustered 3-D, 16 transforms, development VM; three slabs of 4
  // the same, 8 + 4 in between); W = 14 keeps 7 + 7 (5 + 5 + 4 and 4 + 4 + 4 + 2 were slower).
  constexpr int kSlabs = (W + slab_planes<Real>(W, LV::kWl) - 1) / slab_planes<Real>(W, LV::kWl);
  constexpr int kPlanes = (W + kSlabs - 1) / kSlabs;
  using Vec = typename LV::Vec;
  using Piece = typename LV::Piece;
  Vec r[kInterpGroup][kV] = {};
  Piece rt[kInterpGroup] = {};
  alignas(64) Real gathered[2 * kMaxWidth];
  long long ix[kMaxWidth], iy[kMaxWidth], ilast[kMaxWidth];
  const long long nx = t.n2[0], ny = t.n2[1], nz = t.n2[2];
  using AS = AlignedSums<Real, W>;
  const bool aligned = aligned_lines<Real, W, 3>() && AS::usable(g, nz);
  Vec ra[kInterpGroup][AS::kN + 1] = {};  // sums of windows read as aligned vectors (aligned, not wrapping)
  for (int a0 = 0; a0 < W; a0 += kPlanes) {
    const int a1 = a0 + kPlanes < W ? a0 + kPlanes : W;
    for (int q = 0; q < group; ++q) {
      const Real *kx = taps + q * 3 * S, *ky = kx + S;
      const long long fx = first[q][0], fy = first[q][1], flast = first[q][2];
      for (int b = 0; b < W; ++b) iy[b] = fy + b < ny ? fy + b : fy + b - ny;
      const bool contiguous = flast + W <= nz;
      if (aligned && contiguous) {
        for (int a = a0; a < a1; ++a) ix[a] = fx + a < nx ? fx + a : fx + a - nx;
        const int shift = static_cast<int>(flast % AS::kC);
        AS::add(g, ix, iy, flast - shift, shift, ny, nz, kx, ky, a0, a1, ra[q]);
        continue;
      }
      for (int e = 0; e < W; ++e) ilast[e] = flast + e < nz ? flast + e : flast + e - nz;
      Vec rl[kV];
      Piece rtl = rt[q];
      std::memcpy(rl, r[q], sizeof rl);
      if (contiguous) {
        for (int a = a0; a < a1; ++a) ix[a] = fx + a < nx ? fx + a : fx + a - nx;
        sum_window_3d<Real, W>(g, ix, iy, flast, ny, nz, kx, ky, a0, a1, rl, rtl);
      } else {
        for (int a = a0; a < a1; ++a) {
          const long long x = fx + a < nx ? fx + a : fx + a - nx;
          for (int b = 0; b < W; ++b) {
            const Real *l = window_line(g + 2 * (x * ny + iy[b]) * nz, flast, contiguous, ilast, W,
                                        padded_width<Real, W>(), gathered);
            LV::add(rl, rtl, l, kx[a] * ky[b]);
          }
        }
      }
      std::memcpy(r[q], rl, sizeof rl);
      rt[q] = rtl;
    }
  }
  for (int q = 0; q < group; ++q) {
    const std::size_t ahead = j0 + static_cast<std::size_t>(q) + kPrefetchAhead;
    if (ahead < t.end)
      __builtin_prefetch(reinterpret_cast<Real *>(t.F) + 2 * (static_cast<std::size_t>(tr) * t.K + t.index[ahead]), 1);
    Real re, im;
    const long long flast = first[q][2];
    if (aligned && flast + W <= nz)
      AS::finish(ra[q], static_cast<int>(flast % AS::kC), taps + (q * 3 + 2) * S, re, im);
    else
      LV::finish(r[q], rt[q], taps + (q * 3 + 2) * S, re, im);
    store_target(t, re, im, j0 + static_cast<std::size_t>(q), tr);
  }
}

template <class Real, int W, int DIM>
void interpolate(const InterpTask<Real> &t) {
  const int w = W > 0 ? W : t.kernel.width;
  const int wp = W > 0 ? padded_width<Real, W>() : w;
  const int S = W > 0 ? stride_for<Real>(W) : t.kernel.stride;  // weights per dim and target
  alignas(64) Real taps[kInterpGroup * 3 * kMaxStride], acc[2 * kMaxWidth], gathered[2 * kMaxWidth];
  long long first[kInterpGroup][3], ix[kMaxWidth], iy[kMaxWidth], ilast[kMaxWidth];
  const long long n[3] = {t.n2[0], t.n2[1], t.n2[2]};
  const long long nx = n[0], ny = n[1], nz = n[2], nlast = n[DIM - 1];
  Real *out = reinterpret_cast<Real *>(t.F);
  constexpr std::size_t kGroup = DIM >= 2 || W > 0 ? kInterpGroup : 1;
  for (std::size_t j0 = t.begin; j0 < t.end; j0 += kGroup) {
    const int group = static_cast<int>(t.end - j0 < kGroup ? t.end - j0 : kGroup);
    // The grid's last dimension is shifted by half its extent (InterpTask).
    if constexpr (W > 0) {
      weights_of_group<Real, W>(t.kernel, t.pos, j0, group, DIM, taps, first);
      for (int q = 0; q < group; ++q)
        for (int d = 0; d < DIM; ++d) first[q][d] = wrap_first(first[q][d] + (d == DIM - 1 ? n[d] / 2 : 0), n[d]);
    } else {
      for (int q = 0; q < group; ++q)
        for (int d = 0; d < DIM; ++d)
          first[q][d] = wrap_first(
              weights<Real, W>(t.kernel, t.pos[d][j0 + q], taps + (q * 3 + d) * S) + (d == DIM - 1 ? n[d] / 2 : 0),
              n[d]);
    }
    for (int tr = 0; tr < t.ntransf; ++tr) {
      const Real *g = t.grid + 2 * static_cast<std::size_t>(tr) * t.n2_total;
      if constexpr (DIM == 3 && W > 0 && window_fills_cache<Real>(W, line_width<Real, W>())) {
        interpolate_group_by_slabs<Real, W>(t, g, tr, j0, group, first, taps, S);
        continue;
      }
      for (int q = 0; q < group; ++q) {
        // Outputs go to the caller's order: the one kPrefetchAhead targets ahead is fetched for writing.
        const std::size_t ahead = j0 + static_cast<std::size_t>(q) + kPrefetchAhead;
        if (ahead < t.end) __builtin_prefetch(out + 2 * (static_cast<std::size_t>(tr) * t.K + t.index[ahead]), 1);
        const Real *kx = taps + q * 3 * S, *ky = kx + S, *kz = ky + S;
        const long long fx = first[q][0], fy = DIM >= 2 ? first[q][1] : 0;
        if (DIM >= 2)
          for (int a = 0; a < w; ++a) ix[a] = fx + a < nx ? fx + a : fx + a - nx;
        if (DIM == 3)
          for (int b = 0; b < w; ++b) iy[b] = fy + b < ny ? fy + b : fy + b - ny;
        const long long flast = first[q][DIM - 1];
        const Real *last = DIM == 1 ? kx : DIM == 2 ? ky : kz;
        // A window that runs past the end of the last (contiguous) axis is gathered cell by cell.
        const bool contiguous = flast + w <= nlast;
        for (int e = 0; e < w; ++e) ilast[e] = flast + e < nlast ? flast + e : flast + e - nlast;
        auto line_at = [&](const Real *line) { return window_line(line, flast, contiguous, ilast, w, wp, gathered); };
        // The window's cell sums, interleaved: in 1-d the window's own cells. (Copied into acc first, the 64-byte
        // store and the narrower reloads of write_target stalled on store forwarding: a quarter of the 1-d
        // interpolation's samples, float W = 5.)
        const Real *sums = acc;
        if constexpr (DIM == 1 && W > 0) {
          using LV = LineVectors<Real, W>;
          typename LV::Vec r[LV::kV] = {};
          typename LV::Piece rt = {};
          LV::add(r, rt, line_at(g), Real(1));
          Real re, im;
          LV::finish(r, rt, last, re, im);
          store_target(t, re, im, j0 + static_cast<std::size_t>(q), tr);
          continue;
        }
        if (DIM == 1) {
          sums = line_at(g);
        } else if constexpr (W > 0) {
          // Compile-time width: the accumulator is kV vectors held in registers across the W^(DIM-1) lines
          // (GCC/Clang vector extensions). As an array under `omp simd` it went through the stack on every line,
          // a store-to-load chain that made 3-d interpolation twice as slow as spreading (W = 13, N = K = 2e4).
          using LV = LineVectors<Real, W>;
          constexpr int kL = LV::kL, kV = LV::kV, kT = LV::kT;
          using Vec = typename LV::Vec;
          using Piece = typename LV::Piece;
          Vec r[kV] = {};
          Piece rt = {};  // the tail's accumulator (unused where kT == 0)
          auto add_line = [&](const Real *l, Real sc) { LV::add(r, rt, l, sc); };
          // With fewer than 4 vectors a line (AVX-512: float W <= 16, double W <= 15), the lines go to kSets
          // independent accumulators in turn, a 3-d plane's 4 / kV, 2-d's two: with one, every line's FMA waited
          // for the previous one (clustered 3-d, 16 transforms, float, W = 7: 10 % of the exec; K >> N 2-d single
          // W = 8, same process: 3.6 -> 3.0 ms, uniform 2-d double W = 8 5.1 -> 4.7; four in 2-d no faster).
          // Wider lines keep one.
          constexpr int kSets = kV >= 4 ? 1 : DIM == 3 ? 4 / kV : DIM == 2 ? 2 : 1;
          // Wide lines (one accumulator set below): the window's lines out of line, in two sets. With narrower
          // lines, where the sets below already break the chain, that measured slower (dense clusters 3-D
          // single, W = 6: interpolation 4.6 ms against 3.9).
          if (DIM == 3 && kSets == 1 && contiguous) {
            sum_window_3d<Real, W>(g, ix, iy, flast, ny, nz, kx, ky, 0, W, r, rt);
            Real re, im;
            LV::finish(r, rt, last, re, im);
            store_target(t, re, im, j0 + static_cast<std::size_t>(q), tr);
            continue;
          }
          if constexpr (kSets > 1) {
            Vec more[kSets - 1][kV] = {};
            Piece more_t[kSets - 1] = {};
            auto add_to = [&](int set, const Real *l, Real sc) {
#pragma GCC unroll 16
              for (int v = 0; v < kV; ++v) {
                Vec x;
                std::memcpy(&x, l + v * kL, sizeof x);
                (set == 0 ? r[v] : more[set - 1][v]) += sc * x;
              }
              if constexpr (kT > 0) {
                Piece x;
                std::memcpy(&x, l + kV * kL, sizeof x);
                (set == 0 ? rt : more_t[set - 1]) += sc * x;
              }
            };
            if constexpr (DIM == 2) {
#pragma GCC unroll 16
              for (int a = 0; a < W; ++a) add_to(a % kSets, line_at(g + 2 * ix[a] * ny), kx[a]);
            } else if (contiguous) {
              // The lines' scales kx[a] ky[b] as a table made with vector multiplies, and their offsets once a
              // target: a line is then a broadcast load and its multiply-adds. Line by line (a scalar multiply,
              // broadcasts, the offset's multiply and the wrap's branch) interpolation took 4-30 % longer (H200
              // host, 2 threads, stage medians: dense clusters 3-D single W = 6 5.04 -> 3.89 ms, uniform 3-D single
              // W = 7 8.63 -> 7.77, double W = 10 22.6 -> 19.9). The same table in spreading was no faster.
              constexpr int kS = stride_for<Real>(W);
              alignas(64) Real scale[W][kS];
              std::ptrdiff_t row[W];
              for (int a = 0; a < W; ++a)
#pragma omp simd
                for (int b = 0; b < kS; ++b) scale[a][b] = kx[a] * ky[b];
              for (int b = 0; b < W; ++b) row[b] = 2 * (iy[b] * nz + flast);
              for (int a = 0; a < W; ++a) {
                const Real *plane = g + 2 * ix[a] * ny * nz;
#pragma GCC unroll 16
                for (int b = 0; b < W; ++b) add_to(b % kSets, plane + row[b], scale[a][b]);
              }
            } else {
              for (int a = 0; a < W; ++a) {
                const Real *plane = g + 2 * ix[a] * ny * nz;
#pragma GCC unroll 16
                for (int b = 0; b < W; ++b) add_to(b % kSets, line_at(plane + 2 * iy[b] * nz), kx[a] * ky[b]);
              }
            }
#pragma GCC unroll 4
            for (int j = 0; j < kSets - 1; ++j) {
#pragma GCC unroll 16
              for (int v = 0; v < kV; ++v) r[v] += more[j][v];
              rt += more_t[j];
            }
          } else {
            for (int a = 0; a < W; ++a) {
              if (DIM == 2) {
                add_line(line_at(g + 2 * ix[a] * ny), kx[a]);
              } else {
                for (int b = 0; b < W; ++b) add_line(line_at(g + 2 * (ix[a] * ny + iy[b]) * nz), kx[a] * ky[b]);
              }
            }
          }
          Real re, im;
          LV::finish(r, rt, last, re, im);
          store_target(t, re, im, j0 + static_cast<std::size_t>(q), tr);
          continue;
        } else {
#pragma omp simd
          for (int e = 0; e < 2 * wp; ++e) acc[e] = 0;
          for (int a = 0; a < w; ++a) {
            if (DIM == 2) {
              const Real *__restrict l = line_at(g + 2 * ix[a] * ny);
              const Real s = kx[a];
#pragma omp simd
              for (int e = 0; e < 2 * wp; ++e) acc[e] += s * l[e];
            } else {
              for (int b = 0; b < w; ++b) {
                const Real *__restrict l = line_at(g + 2 * (ix[a] * ny + iy[b]) * nz);
                const Real s = kx[a] * ky[b];
#pragma omp simd
                for (int e = 0; e < 2 * wp; ++e) acc[e] += s * l[e];
              }
            }
          }
        }
        write_target(t, sums, last, w, j0 + static_cast<std::size_t>(q), tr);
      }
    }
  }
}

template <class Real, int W>
Kernels<Real> for_width(int dim) {
  const char *isa = SFFT_NUFFT3_ISA_NAME;
  if (dim == 1) return {spread<Real, W, 1>, interpolate<Real, W, 1>, isa};
  if (dim == 2) return {spread<Real, W, 2>, interpolate<Real, W, 2>, isa};
  return {spread<Real, W, 3>, interpolate<Real, W, 3>, isa};
}

}  // namespace

template <class Real>
Kernels<Real> kernels(int width, int dim) {
  switch (width) {
    case 2:
      return for_width<Real, 2>(dim);
    case 3:
      return for_width<Real, 3>(dim);
    case 4:
      return for_width<Real, 4>(dim);
    case 5:
      return for_width<Real, 5>(dim);
    case 6:
      return for_width<Real, 6>(dim);
    case 7:
      return for_width<Real, 7>(dim);
    case 8:
      return for_width<Real, 8>(dim);
    case 9:
      return for_width<Real, 9>(dim);
    case 10:
      return for_width<Real, 10>(dim);
    case 11:
      return for_width<Real, 11>(dim);
    case 12:
      return for_width<Real, 12>(dim);
    case 13:
      return for_width<Real, 13>(dim);
    case 14:
      return for_width<Real, 14>(dim);
    case 15:
      return for_width<Real, 15>(dim);
    case 16:
      return for_width<Real, 16>(dim);
    default:
      return for_width<Real, 0>(dim);
  }
}

template Kernels<float> kernels<float>(int, int);
template Kernels<double> kernels<double>(int, int);

}  // namespace sfft::nufft3::cpu::SFFT_NUFFT3_ISA
