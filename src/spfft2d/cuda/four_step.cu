// SPDX-License-Identifier: Apache-2.0
// PRUNED's column pass at power-of-two row counts (PrunedShape::four_step): the length-R FFT down every column
// as a four-step FFT R = P x Q of our own, fed straight from the sparse rows, so the output is streamed three
// times in all (pass 1 writes it, pass 2 reads and rewrites it) where the cuFFT route wrote the rows' spectra,
// expanded them into the output and then ran cuFFT's strided column C2C over it.
//
// With r = r1 + P r2 and u = u2 + Q u1 (r1, u1 < P; r2, u2 < Q), e^{-2 pi i r u / R} =
// e^{-2 pi i r1 u2 / R} e^{-2 pi i r1 u1 / P} e^{-2 pi i r2 u2 / Q}, so
//   pass 1 (one block per r1 and tile of columns): A[r1][u2] = e^{-2 pi i r1 u2 / R} sum_r2 Y[r1 + P r2] w_Q^{r2 u2},
//          Y generated in shared memory from the rows, stored in output row Q r1 + u2;
//   pass 2 (one block per u2 and tile of columns): X[u2 + Q u1] = sum_r1 A[r1][u2] w_P^{r1 u1}, read from rows
//          u2 + Q r1 and written to rows u2 + Q u1: the same rows, so each block works in place on rows of its own.
// Y[r][v] is an R2C slot's spectrum (rows with many nonzeros, transformed by cuFFT before) or the direct sum
// over the row's nonzeros, w e^{-2 pi i c v / C}, a thread summing one row for 8 adjacent columns (or 4 and
// their mirrors C/2 - v when C is even) from one exact twiddle per nonzero times powers of the nonzero's step
// e^{-2 pi i c / C}; the rows' spectra are never stored. A block's rows go to its threads by decreasing length
// (FourStepArgs::rows), since a warp sums as long as its longest row.
// Each length-L FFT of a block (L = Q or P, at most 256) is L1 x L2 (L1 = min(L, 16)): an L1-point FFT in
// registers on every L2-th element, a twiddle, one exchange through shared memory, an L2-point FFT in
// registers. A block covers 256 bytes of each row (32 complex64 or 16 complex128 columns; pass 1 with mirrors:
// two runs of 128 bytes); pass 2 aligns them to 256 bytes, pass 1 (consecutive rows of an odd width) cannot.
#include <algorithm>

#include "spfft2d/cuda/device.cuh"

namespace sfft::spfft2d::gpu {
namespace {

// Columns of a block: 256 bytes of a row, so a warp's stores are runs of 128 bytes or more (with 128-byte
// tiles pass 1's mirrored runs of 64 bytes wrote 1.35 sectors per sector of data, and pass 2 moved the output
// at half of the DRAM bandwidth, H200 ncu at 16384^2). Threads: 256, looping over a step's sub-FFTs where a
// length needs more.
template <class Real>
constexpr unsigned kTileCols = 256 / sizeof(Cplx<Real>);
constexpr unsigned kThreads = 256;
// Shared rows padded by one element: the generation's threads write adjacent elements of different rows,
// which without the pad fell on the same banks.
template <class Real>
constexpr unsigned kPitch = kTileCols<Real> + 1;
// Shared memory of a length-L FFT's rows (dynamic: 256 rows of 256 bytes exceed the 48 KiB of static memory).
template <class Real>
constexpr std::size_t rows_bytes(int L) {
  return static_cast<std::size_t>(L) * kPitch<Real> * sizeof(Cplx<Real>);
}
// f(t) for each task t < Tasks of a block, a thread's tasks in turn (not unrolled: interleaved iterations took
// up to 176 registers).
template <unsigned Tasks, class F>
__device__ __forceinline__ void for_tasks(F &&f) {
  if constexpr (Tasks <= kThreads) {
    if (Tasks == kThreads || threadIdx.x < Tasks) f(threadIdx.x);
  } else {
#pragma unroll 1
    for (unsigned t = threadIdx.x; t < Tasks; t += kThreads) f(t);
  }
}

// Columns a thread of the generation sums: kGenCols adjacent ones (one exact twiddle per nonzero, then 7
// steps), or with an even column count kMirrorCols adjacent ones and their mirrors (add_entries).
constexpr unsigned kGenCols = 8, kMirrorCols = 4;

// cos(2 pi k / 16) for any int k (k & 15), exact to double; e^{-2 pi i k / 16} = (cos16(k), -cos16(k - 4)).
// The FFTs' indices are compile-time constants after unrolling, so the switch folds away.
__device__ __forceinline__ double cos16(int k) {
  switch (k & 15) {
    case 0:
      return 1.0;
    case 1:
    case 15:
      return 0.92387953251128675613;
    case 2:
    case 14:
      return 0.70710678118654752440;
    case 3:
    case 13:
      return 0.38268343236508977173;
    case 4:
    case 12:
      return 0.0;
    case 5:
    case 11:
      return -0.38268343236508977173;
    case 6:
    case 10:
      return -0.70710678118654752440;
    case 7:
    case 9:
      return -0.92387953251128675613;
    default:
      return -1.0;
  }
}

template <class Real>
__device__ __forceinline__ Cplx<Real> unit16(int k) {
  return Cplx<Real>{static_cast<Real>(cos16(k)), static_cast<Real>(-cos16(k - 4))};
}

template <int N>
__host__ __device__ constexpr int bit_reverse(int k) {
  int r = 0;
  for (int n = N; n > 1; n >>= 1) {
    r = (r << 1) | (k & 1);
    k >>= 1;
  }
  return r;
}

// Stages Len, Len/2, ..., 2 of an in-register radix-2 decimation-in-frequency FFT of N <= 16 points (natural
// order in, bit-reversed order out).
template <class Real, int N, int Len>
__device__ __forceinline__ void dif_stages(Cplx<Real> (&x)[N]) {
  if constexpr (Len >= 2) {
    constexpr int half = Len / 2;
#pragma unroll
    for (int s = 0; s < N; s += Len) {
#pragma unroll
      for (int j = 0; j < half; ++j) {
        const Cplx<Real> a = x[s + j], b = x[s + j + half];
        x[s + j] = Cplx<Real>{a.x + b.x, a.y + b.y};
        const Cplx<Real> d{a.x - b.x, a.y - b.y};
        x[s + j + half] = j == 0 ? d : cmul(d, unit16<Real>(j * (16 / Len)));
      }
    }
    dif_stages<Real, N, half>(x);
  }
}

// First step of a block's length-L FFT (L = L1 L2) on column g: x holds elements L2 a + b (a < L1); their
// L1-point FFT times e^{-2 pi i b k1 / L} goes to shared row L2 k1 + b (the rows x was read from, in pass 1).
// tw_L: e^{-2 pi i m / L} for m < L, in shared memory (from global memory, the twiddles' loads were a sixth of
// the passes' stalls).
template <class Real, int L1, int L2>
__device__ __forceinline__ void first_step(Cplx<Real> (&x)[L1], int b, unsigned g, const Cplx<Real> *tw_L,
                                           Cplx<Real> *shared) {
  dif_stages<Real, L1, L1>(x);
#pragma unroll
  for (int k1 = 0; k1 < L1; ++k1) {
    Cplx<Real> t = x[bit_reverse<L1>(k1)];
    if (L2 > 1 && k1 != 0 && b != 0) t = cmul(t, tw_L[b * k1]);
    shared[(L2 * k1 + b) * kPitch<Real> + g] = t;
  }
}

// Second step on column g: the L2-point FFT of shared rows L2 k1 + b (b < L2); output k1 + L1 k2 of the
// length-L FFT is y[bit_reverse<L2>(k2)].
template <class Real, int L1, int L2>
__device__ __forceinline__ void second_step(const Cplx<Real> *shared, int k1, unsigned g, Cplx<Real> (&y)[L2]) {
#pragma unroll
  for (int b = 0; b < L2; ++b) y[b] = shared[(L2 * k1 + b) * kPitch<Real> + g];
  dif_stages<Real, L2, L2>(y);
}

// acc[j] += sum over N entries of w e^{-2 pi i c v_j / C} (Runs: times the run's table at v_j): one exact
// twiddle per entry at v0, then its step. Plain: v_j = v0 + j, j < kGenCols. Mirrored (C even, M = C / 2): v_j =
// v0 + j for j < kMirrorCols and acc[kMirrorCols + j] the mirror column M - v0 - j, whose term (-1)^c conj(w
// e^{-2 pi i c (v0 + j) / C}) costs two additions and no twiddle (a run's: its table's mirror part). The N
// entries' loads and twiddles are issued together: a single one left the thread waiting on the entry load, then
// on the table load. A row's runs come first (FourStepRow::runs), so neither kind tests the other's case per
// column.
template <class Real, bool Mirror, bool Runs, int N>
__device__ __forceinline__ void add_entries(const FourStepArgs<Real> &a, const SharedTwiddles<Real> &split,
                                            const RowEntry<Real> *entries, uint64_t v0, Cplx<Real> (&acc)[kGenCols]) {
  constexpr unsigned run = Mirror ? kMirrorCols : kGenCols;
  RowEntry<Real> en[N];
  Cplx<Real> t[N];
  Real sign[N];
  const Cplx<Real> *table[N];  // Runs: the run's table at column v0 (its mirror part run_stride entries on)
#pragma unroll
  for (int i = 0; i < N; ++i) en[i] = entries[i];
#pragma unroll
  for (int i = 0; i < N; ++i) {
    if (Runs) table[i] = a.runs + static_cast<uint64_t>(en[i].table) * 2 * run_stride(a.W) + v0;
    // The phase index c v0 mod C: with C a power of two, a 32-bit product's low bits. With the 64-bit product
    // and Barrett reduction, pass 1 at 16384^2 took 1.70 / 1.28 ms on the suite's uniform / power-law rows
    // against 1.46 / 1.11 (H200).
    const uint64_t m = a.col_mask != 0 ? (static_cast<uint32_t>(en[i].col) * static_cast<uint32_t>(v0)) & a.col_mask
                                       : a.cols(static_cast<uint64_t>(en[i].col) * v0);
    t[i] = split.src != nullptr ? split(m) : a.tw_cols(m);
    t[i].x *= en[i].weight;
    t[i].y *= en[i].weight;
    sign[i] = (en[i].col & 1) != 0 ? Real(-1) : Real(1);
  }
#pragma unroll
  for (unsigned j = 0; j < run; ++j) {
#pragma unroll
    for (int i = 0; i < N; ++i) {
      if constexpr (!Runs) {
        acc[j].x += t[i].x;
        acc[j].y += t[i].y;
        if (Mirror) {
          acc[run + j].x = fma(sign[i], t[i].x, acc[run + j].x);
          acc[run + j].y = fma(-sign[i], t[i].y, acc[run + j].y);
        }
      } else {
        // Columns past the width read the tables' zeros (their sums are never stored).
        const Cplx<Real> lo = cmul(t[i], table[i][j]);
        acc[j].x += lo.x;
        acc[j].y += lo.y;
        if (Mirror) {
          const Cplx<Real> hi = cmul(t[i], table[i][run_stride(a.W) + j]);
          acc[run + j].x = fma(sign[i], hi.x, acc[run + j].x);
          acc[run + j].y = fma(-sign[i], hi.y, acc[run + j].y);
        }
      }
      if (j + 1 < run) t[i] = cmul(t[i], en[i].step);
    }
  }
}

// The output column of shared column g in pass-1 block bx, and whether that block stores it. Plain: the
// tile's columns below W. Mirrored (C even, M = W - 1): for g < G/2 the low column v = bx G/2 + g, stored when
// 2v <= M; else the mirror M - v of low column v = bx G/2 + g - G/2, stored when 2v < M: every column of
// [0, M] is stored by exactly one block.
template <class Real, bool Mirror>
__device__ __forceinline__ bool block_column(uint64_t bx, unsigned g, uint64_t W, uint64_t &col) {
  constexpr unsigned G = kTileCols<Real>;
  if constexpr (!Mirror) {
    col = bx * G + g;
    return col < W;
  } else {
    const uint64_t M = W - 1;
    if (g < G / 2) {
      col = bx * (G / 2) + g;
      return 2 * col <= M;
    }
    const uint64_t v = bx * (G / 2) + g - G / 2;
    col = M - v;
    return 2 * v < M;
  }
}

// Pass 1: block (column tile, r1). Generation of Y[r1 + P r2][v] for r2 < Q into shared memory, the Q-point
// FFT along r2, the twiddle e^{-2 pi i r1 u2 / R}, and the store to output row Q r1 + u2. With an even column
// count (Mirror) a block's tile is G/2 adjacent columns and their mirrors, so each nonzero's twiddles serve
// two columns. Shared memory (launch_rows sizes it): Q padded rows, the split twiddle tables, then Q twiddles
// e^{-2 pi i r1 u2 / R} and Q twiddles e^{-2 pi i m / Q}, staged while the tables load.
template <class Real, bool Mirror, int L1, int L2>
__global__ void __launch_bounds__(kThreads) four_step_rows(FourStepArgs<Real> a, Cplx<Real> *__restrict__ out) {
  using C = Cplx<Real>;
  constexpr int Q = L1 * L2;
  constexpr unsigned G = kTileCols<Real>, low = Mirror ? kMirrorCols : kGenCols, halves = (Mirror ? G / 2 : G) / low;
  extern __shared__ __align__(16) unsigned char dynamic_shared[];
  C *shared = reinterpret_cast<C *>(dynamic_shared);
  C *tw_u2 = shared + Q * kPitch<Real> + kFourStepSplitBytes / sizeof(C), *tw_Q = tw_u2 + Q;
  const uint64_t r1 = blockIdx.y, bx = blockIdx.x, M = a.W - 1;
  // Each task's row is loaded a task ahead, the first before the tables' loads and barrier: loaded after
  // them, each block began with three dependent round trips to memory (tables, row, entries), where ncu put a
  // third of pass 1's stall samples on banded rows.
  constexpr unsigned kTasks = Q * halves;
  FourStepRow next = threadIdx.x < kTasks ? a.rows[r1 * Q + threadIdx.x / halves] : FourStepRow{};
  if (threadIdx.x < Q) {
    tw_u2[threadIdx.x] = a.tw_rows[r1 * threadIdx.x];
    tw_Q[threadIdx.x] = a.tw_rows[a.P * threadIdx.x];
  }
  // Called whether or not the split table exists (without one it copies nothing), so that the lookups' pointers
  // are known to be shared memory: set only where the table existed, they were generic loads.
  SharedTwiddles<Real> split = a.split_cols;
  split.load(shared + Q * kPitch<Real>);
  for (unsigned task = threadIdx.x; task < kTasks; task += kThreads) {
    const FourStepRow row = next;
    if (task + kThreads < kTasks) next = a.rows[r1 * Q + (task + kThreads) / halves];
    const unsigned h = task % halves;
    const uint64_t v0 = bx * (Mirror ? G / 2 : G) + h * low;
    C acc[kGenCols];
#pragma unroll
    for (unsigned j = 0; j < kGenCols; ++j) acc[j] = C{Real(0), Real(0)};
    if (row.spectrum >= 0) {
      const C *s = a.spectra + static_cast<uint64_t>(row.spectrum) * a.W;
#pragma unroll
      for (unsigned j = 0; j < low; ++j) {
        if (v0 + j < a.W) acc[j] = s[v0 + j];
        if (Mirror && v0 + j <= M) acc[low + j] = s[M - v0 - j];
      }
    } else {
      const RowEntry<Real> *e = a.entries + row.begin;
      int32_t n = row.runs;
      for (; n >= 2; n -= 2, e += 2) add_entries<Real, Mirror, true, 2>(a, split, e, v0, acc);
      if (n > 0) add_entries<Real, Mirror, true, 1>(a, split, e++, v0, acc);
      for (n = row.count - row.runs; n >= 2; n -= 2, e += 2) add_entries<Real, Mirror, false, 2>(a, split, e, v0, acc);
      if (n > 0) add_entries<Real, Mirror, false, 1>(a, split, e, v0, acc);
    }
    C *out_row = shared + row.r2 * kPitch<Real>;
#pragma unroll
    for (unsigned j = 0; j < low; ++j) {
      out_row[h * low + j] = acc[j];
      if (Mirror) out_row[G / 2 + h * low + j] = acc[low + j];
    }
  }
  __syncthreads();
  for_tasks<L2 * G>([&](unsigned t) {
    const int b = static_cast<int>(t / G);
    const unsigned g = t % G;
    C x[L1];
#pragma unroll
    for (int i = 0; i < L1; ++i) x[i] = shared[(L2 * i + b) * kPitch<Real> + g];
    first_step<Real, L1, L2>(x, b, g, tw_Q, shared);
  });
  __syncthreads();
  for_tasks<L1 * G>([&](unsigned t) {
    const int k1 = static_cast<int>(t / G);
    const unsigned g = t % G;
    uint64_t v = 0;
    const bool stores = block_column<Real, Mirror>(bx, g, a.W, v);
    C y[L2];
    second_step<Real, L1, L2>(shared, k1, g, y);
    // Only the stores are conditional (predicated): with the twiddle's load and product inside the condition,
    // each element cost a divergent branch and its reconvergence, and its own 64-bit address.
    C *dst = out + (Q * r1 + static_cast<uint64_t>(k1)) * a.W + v;
    const uint64_t step = L1 * a.W;
#pragma unroll
    for (int k2 = 0; k2 < L2; ++k2) {
      const C z = cmul(y[bit_reverse<L2>(k2)], tw_u2[k1 + L1 * k2]);
      if (stores) dst[k2 * step] = z;
    }
  });
}

// Pass 2: block (column tile, u2). The P-point FFT of rows u2 + Q r1 (r1 < P), in place. When Q W is a
// multiple of G (every row count from 16 x 32 up), all of a block's rows start at the same offset within 256
// bytes, so the tiles are shifted by that offset (`shift`, from the output's address) and every row segment a
// block moves is 256 aligned bytes (unaligned, the L2 saw 1.19 sectors per sector of data); the grid has one
// tile more for the shifted end. Shared memory: P padded rows, then P twiddles e^{-2 pi i m / P}, staged while
// the first task's elements load.
template <class Real, int L1, int L2>
__global__ void __launch_bounds__(kThreads) four_step_columns(Cplx<Real> *__restrict__ out, uint64_t W, uint64_t Q,
                                                              const Cplx<Real> *__restrict__ tw_rows, bool aligned) {
  using C = Cplx<Real>;
  constexpr int P = L1 * L2;
  constexpr unsigned G = kTileCols<Real>;
  extern __shared__ __align__(16) unsigned char dynamic_shared[];
  C *shared = reinterpret_cast<C *>(dynamic_shared);
  C *tw_P = shared + P * kPitch<Real>;
  const uint64_t u2 = blockIdx.y;
  const uint64_t shift = aligned ? (reinterpret_cast<uintptr_t>(out) / sizeof(C) + u2 * W) % G : 0;
  // Column of g, when in [0, W) (the first tile starts `shift` columns before 0).
  const auto column = [&](unsigned g, uint64_t &v) {
    v = static_cast<uint64_t>(blockIdx.x) * G + g - shift;
    return static_cast<uint64_t>(blockIdx.x) * G + g >= shift && v < W;
  };
  const auto load = [&](unsigned t, C (&x)[L1]) {
    uint64_t v = 0;
    const bool live = column(t % G, v);
    const uint64_t b = t / G;
#pragma unroll
    for (int i = 0; i < L1; ++i) x[i] = live ? out[(u2 + Q * (L2 * i + b)) * W + v] : C{Real(0), Real(0)};
  };
  // Every load of the block is done before the second barrier, every store after it.
  C x[L1];
  if (threadIdx.x < L2 * G) load(threadIdx.x, x);
  if (threadIdx.x < P) tw_P[threadIdx.x] = tw_rows[Q * threadIdx.x];
  __syncthreads();
  if (threadIdx.x < L2 * G) first_step<Real, L1, L2>(x, static_cast<int>(threadIdx.x / G), threadIdx.x % G, tw_P, shared);
  if constexpr (L2 * G > kThreads) {
#pragma unroll 1
    for (unsigned t = threadIdx.x + kThreads; t < L2 * G; t += kThreads) {
      load(t, x);
      first_step<Real, L1, L2>(x, static_cast<int>(t / G), t % G, tw_P, shared);
    }
  }
  __syncthreads();
  for_tasks<L1 * G>([&](unsigned t) {
    const int k1 = static_cast<int>(t / G);
    const unsigned g = t % G;
    uint64_t v = 0;
    const bool live = column(g, v);
    C y[L2];
    second_step<Real, L1, L2>(shared, k1, g, y);
    if (live) {
#pragma unroll
      for (int k2 = 0; k2 < L2; ++k2)
        out[(u2 + Q * static_cast<uint64_t>(k1 + L1 * k2)) * W + v] = y[bit_reverse<L2>(k2)];
    }
  });
}

// Dynamic shared memory above the default 48 KiB needs the kernel's opt-in, set before each launch (cheap, and
// per device).
template <class Kernel>
void allow_shared(Kernel kernel, std::size_t bytes) {
  SFFT_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
}

// Pass 1's grid: tiles of G columns over [0, W), or (mirrored) of G/2 low columns over [0, M/2].
template <class Real, int L>
void launch_rows(const FourStepArgs<Real> &a, Cplx<Real> *out, cudaStream_t stream) {
  constexpr int L1 = L < 16 ? L : 16;
  constexpr uint64_t G = kTileCols<Real>;
  const std::size_t bytes = four_step_rows_shared_bytes(L, sizeof(Cplx<Real>));
  static_assert(four_step_rows_shared_bytes(L, sizeof(Cplx<Real>)) ==
                    rows_bytes<Real>(L) + kFourStepSplitBytes + 2 * L * sizeof(Cplx<Real>),
                "the cost model's pass-1 shared memory is the kernel's layout");
  if (a.mirror) {
    const uint64_t lows = (a.W - 1) / 2 + 1;
    const dim3 grid(static_cast<unsigned>((lows + G / 2 - 1) / (G / 2)), static_cast<unsigned>(a.P));
    const auto kernel = four_step_rows<Real, true, L1, L / L1>;
    allow_shared(kernel, bytes);
    kernel<<<grid, kThreads, bytes, stream>>>(a, out);
  } else {
    const dim3 grid(static_cast<unsigned>((a.W + G - 1) / G), static_cast<unsigned>(a.P));
    const auto kernel = four_step_rows<Real, false, L1, L / L1>;
    allow_shared(kernel, bytes);
    kernel<<<grid, kThreads, bytes, stream>>>(a, out);
  }
}

template <class Real, int L>
void launch_columns(const FourStepArgs<Real> &a, uint64_t Q, Cplx<Real> *out, cudaStream_t stream) {
  constexpr int L1 = L < 16 ? L : 16;
  constexpr uint64_t G = kTileCols<Real>;
  const bool aligned = (Q * a.W) % G == 0 && reinterpret_cast<uintptr_t>(out) % sizeof(Cplx<Real>) == 0;
  const dim3 grid(static_cast<unsigned>((a.W + (aligned ? G - 1 : 0) + G - 1) / G), static_cast<unsigned>(Q));
  const std::size_t bytes = rows_bytes<Real>(L) + L * sizeof(Cplx<Real>);
  const auto kernel = four_step_columns<Real, L1, L / L1>;
  allow_shared(kernel, bytes);
  kernel<<<grid, kThreads, bytes, stream>>>(out, a.W, Q, a.tw_rows, aligned);
}

}  // namespace

template <class Real>
void launch_four_step(const FourStepArgs<Real> &a, uint64_t R, Cplx<Real> *out, cudaStream_t stream,
                      cudaEvent_t between) {
  const uint64_t Q = R / a.P;
  switch (Q) {  // pass 1: length Q
    case 4:
      launch_rows<Real, 4>(a, out, stream);
      break;
    case 8:
      launch_rows<Real, 8>(a, out, stream);
      break;
    case 16:
      launch_rows<Real, 16>(a, out, stream);
      break;
    case 32:
      launch_rows<Real, 32>(a, out, stream);
      break;
    case 64:
      launch_rows<Real, 64>(a, out, stream);
      break;
    case 128:
      launch_rows<Real, 128>(a, out, stream);
      break;
    case 256:
      launch_rows<Real, 256>(a, out, stream);
      break;
    default:
      fail(SFFT_ERROR_INTERNAL, "spfft2d: four-step column pass planned for an unsupported row count");
  }
  SFFT_CUDA_CHECK_LAUNCH();
  if (between != nullptr) SFFT_CUDA_CHECK(cudaEventRecord(between, stream));
  switch (a.P) {  // pass 2: length P
    case 4:
      launch_columns<Real, 4>(a, Q, out, stream);
      break;
    case 8:
      launch_columns<Real, 8>(a, Q, out, stream);
      break;
    case 16:
      launch_columns<Real, 16>(a, Q, out, stream);
      break;
    case 32:
      launch_columns<Real, 32>(a, Q, out, stream);
      break;
    case 64:
      launch_columns<Real, 64>(a, Q, out, stream);
      break;
    case 128:
      launch_columns<Real, 128>(a, Q, out, stream);
      break;
    case 256:
      launch_columns<Real, 256>(a, Q, out, stream);
      break;
    default:
      fail(SFFT_ERROR_INTERNAL, "spfft2d: four-step column pass planned for an unsupported row count");
  }
  SFFT_CUDA_CHECK_LAUNCH();
}

template void launch_four_step<float>(const FourStepArgs<float> &, uint64_t, Cplx<float> *, cudaStream_t, cudaEvent_t);
template void launch_four_step<double>(const FourStepArgs<double> &, uint64_t, Cplx<double> *, cudaStream_t,
                                       cudaEvent_t);

}  // namespace sfft::spfft2d::gpu
