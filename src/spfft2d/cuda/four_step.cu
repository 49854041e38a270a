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
// (FourStepArgs::order), since a warp sums as long as its longest row.
// Each length-L FFT of a block (L = Q or P, at most 256) is L1 x L2 (L1 = min(L, 16)): an L1-point FFT in
// registers on every L2-th element, a twiddle, one exchange through shared memory, an L2-point FFT in
// registers. A block covers 128 bytes of each row (16 complex64 or 8 complex128 columns; pass 1 with mirrors:
// two runs of 64 bytes), which the odd row width leaves unaligned to sectors in most rows.
#include <algorithm>

#include "spfft2d/cuda/device.cuh"

namespace sfft::spfft2d::gpu {
namespace {

// Columns of a block: 128 bytes of a row. Threads: one per (column, L1 or L2 sub-FFT) at L = 256.
template <class Real>
constexpr unsigned kTileCols = 128 / sizeof(Cplx<Real>);
template <class Real>
constexpr unsigned kThreads = 16 * kTileCols<Real>;
// Shared rows padded by one element: the generation's threads write 8 adjacent elements of different rows,
// which without the pad fell on the same banks.
template <class Real>
constexpr unsigned kPitch = kTileCols<Real> + 1;
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
// tw_rows: e^{-2 pi i m / R}, so the twiddle is entry b k1 R / L = b k1 tw_stride.
template <class Real, int L1, int L2>
__device__ __forceinline__ void first_step(Cplx<Real> (&x)[L1], int b, unsigned g, const Cplx<Real> *tw_rows,
                                           uint64_t tw_stride, Cplx<Real> *shared) {
  dif_stages<Real, L1, L1>(x);
#pragma unroll
  for (int k1 = 0; k1 < L1; ++k1) {
    Cplx<Real> t = x[bit_reverse<L1>(k1)];
    if (L2 > 1 && k1 != 0 && b != 0) t = cmul(t, __ldg(tw_rows + static_cast<uint64_t>(b * k1) * tw_stride));
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

// acc[j] += sum over N nonzeros of w e^{-2 pi i c v_j / C}: one exact twiddle per nonzero at v0, then its
// step. Plain: v_j = v0 + j, j < kGenCols. Mirrored (C even, M = C / 2): v_j = v0 + j for j < kMirrorCols and
// acc[kMirrorCols + j] the mirror column M - v0 - j, whose term (-1)^c conj(w e^{-2 pi i c (v0 + j) / C}) costs
// two additions and no twiddle. The N nonzeros' loads and twiddles are issued together: a single one left the
// thread waiting on the entry load, then on the table load.
template <class Real, bool Mirror, int N>
__device__ __forceinline__ void add_entries(const FourStepArgs<Real> &a, const SharedTwiddles<Real> &split,
                                            const RowEntry<Real> *entries, uint64_t v0, Cplx<Real> (&acc)[kGenCols]) {
  constexpr unsigned run = Mirror ? kMirrorCols : kGenCols;
  RowEntry<Real> en[N];
  Cplx<Real> t[N];
  Real sign[N];
#pragma unroll
  for (int i = 0; i < N; ++i) en[i] = entries[i];
#pragma unroll
  for (int i = 0; i < N; ++i) {
    const uint64_t m = a.cols(static_cast<uint64_t>(en[i].col) * v0);
    t[i] = split.src != nullptr ? split(m) : a.tw_cols(m);
    t[i].x *= en[i].weight;
    t[i].y *= en[i].weight;
    sign[i] = (en[i].col & 1) != 0 ? Real(-1) : Real(1);
  }
#pragma unroll
  for (unsigned j = 0; j < run; ++j) {
#pragma unroll
    for (int i = 0; i < N; ++i) {
      if (en[i].table < 0) {
        acc[j].x += t[i].x;
        acc[j].y += t[i].y;
        if (Mirror) {
          acc[run + j].x = fma(sign[i], t[i].x, acc[run + j].x);
          acc[run + j].y = fma(-sign[i], t[i].y, acc[run + j].y);
        }
      } else {
        // A run: t D_len(v), and for the mirror (-1)^col conj(t E_len(v)) (FourStepArgs::runs). Columns past
        // the width read the last one (their sums are never stored).
        const Cplx<Real> *d = a.runs + static_cast<uint64_t>(en[i].table) * 2 * a.W;
        const uint64_t v = min(v0 + j, a.W - 1);
        const Cplx<Real> lo = cmul(t[i], d[v]);
        acc[j].x += lo.x;
        acc[j].y += lo.y;
        if (Mirror) {
          const Cplx<Real> hi = cmul(t[i], d[a.W + v]);
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
// two columns.
template <class Real, bool Mirror, int L1, int L2>
__global__ void __launch_bounds__(kThreads<Real>) four_step_rows(FourStepArgs<Real> a, Cplx<Real> *__restrict__ out) {
  using C = Cplx<Real>;
  constexpr int Q = L1 * L2;
  constexpr unsigned G = kTileCols<Real>, low = Mirror ? kMirrorCols : kGenCols, halves = (Mirror ? G / 2 : G) / low;
  __shared__ C shared[Q * kPitch<Real>];
  __shared__ C split_tables[kFourStepSplitBytes / sizeof(C)];
  SharedTwiddles<Real> split = a.split_cols;
  if (split.src != nullptr) split.load(split_tables);
  const uint64_t r1 = blockIdx.y, bx = blockIdx.x, M = a.W - 1;
  for (unsigned task = threadIdx.x; task < Q * halves; task += kThreads<Real>) {
    const unsigned r2 = a.order[r1 * Q + task / halves], h = task % halves;
    const uint64_t v0 = bx * (Mirror ? G / 2 : G) + h * low;
    C acc[kGenCols];
#pragma unroll
    for (unsigned j = 0; j < kGenCols; ++j) acc[j] = C{Real(0), Real(0)};
    const int32_t slot = a.row_slot[r1 + a.P * r2];
    if (slot >= 0 && static_cast<uint64_t>(slot) < a.fft_slots) {
      const C *s = a.spectra + static_cast<uint64_t>(slot) * a.W;
#pragma unroll
      for (unsigned j = 0; j < low; ++j) {
        if (v0 + j < a.W) acc[j] = s[v0 + j];
        if (Mirror && v0 + j <= M) acc[low + j] = s[M - v0 - j];
      }
    } else if (slot >= 0) {
      const uint64_t d = static_cast<uint64_t>(slot) - a.fft_slots;
      const int64_t end = a.start[d + 1];
      int64_t e = a.start[d];
      for (; e + 1 < end; e += 2) add_entries<Real, Mirror, 2>(a, split, a.entries + e, v0, acc);
      if (e < end) add_entries<Real, Mirror, 1>(a, split, a.entries + e, v0, acc);
    }
    C *row = shared + r2 * kPitch<Real>;
#pragma unroll
    for (unsigned j = 0; j < low; ++j) {
      row[h * low + j] = acc[j];
      if (Mirror) row[G / 2 + h * low + j] = acc[low + j];
    }
  }
  __syncthreads();
  const unsigned g = threadIdx.x % G;
  if (threadIdx.x < L2 * G) {
    const int b = static_cast<int>(threadIdx.x / G);
    C x[L1];
#pragma unroll
    for (int i = 0; i < L1; ++i) x[i] = shared[(L2 * i + b) * kPitch<Real> + g];
    first_step<Real, L1, L2>(x, b, g, a.tw_rows, a.P, shared);
  }
  __syncthreads();
  uint64_t v = 0;
  const bool stores = block_column<Real, Mirror>(bx, g, a.W, v);
  if (threadIdx.x < L1 * G) {
    const int k1 = static_cast<int>(threadIdx.x / G);
    C y[L2];
    second_step<Real, L1, L2>(shared, k1, g, y);
#pragma unroll
    for (int k2 = 0; k2 < L2; ++k2) {
      const uint64_t u2 = static_cast<uint64_t>(k1 + L1 * k2);
      C t = y[bit_reverse<L2>(k2)];
      if (r1 != 0 && u2 != 0) t = cmul(t, __ldg(a.tw_rows + r1 * u2));
      if (stores) out[(Q * r1 + u2) * a.W + v] = t;
    }
  }
}

// Pass 2: block (column tile, u2). The P-point FFT of rows u2 + Q r1 (r1 < P), in place.
template <class Real, int L1, int L2>
__global__ void __launch_bounds__(kThreads<Real>)
    four_step_columns(Cplx<Real> *__restrict__ out, uint64_t W, uint64_t Q, const Cplx<Real> *__restrict__ tw_rows) {
  using C = Cplx<Real>;
  constexpr unsigned G = kTileCols<Real>;
  __shared__ C shared[L1 * L2 * kPitch<Real>];
  const unsigned g = threadIdx.x % G;
  const uint64_t u2 = blockIdx.y, v = static_cast<uint64_t>(blockIdx.x) * G + g;
  const bool live = v < W;
  // Every load of the block is done before the barrier, every store after it.
  if (threadIdx.x < L2 * G) {
    const int b = static_cast<int>(threadIdx.x / G);
    C x[L1];
#pragma unroll
    for (int i = 0; i < L1; ++i)
      x[i] = live ? out[(u2 + Q * static_cast<uint64_t>(L2 * i + b)) * W + v] : C{Real(0), Real(0)};
    first_step<Real, L1, L2>(x, b, g, tw_rows, Q, shared);
  }
  __syncthreads();
  if (threadIdx.x < L1 * G) {
    const int k1 = static_cast<int>(threadIdx.x / G);
    C y[L2];
    second_step<Real, L1, L2>(shared, k1, g, y);
    if (live) {
#pragma unroll
      for (int k2 = 0; k2 < L2; ++k2)
        out[(u2 + Q * static_cast<uint64_t>(k1 + L1 * k2)) * W + v] = y[bit_reverse<L2>(k2)];
    }
  }
}

// Pass 1's grid: tiles of G columns over [0, W), or (mirrored) of G/2 low columns over [0, M/2].
template <class Real, int L>
void launch_rows(const FourStepArgs<Real> &a, Cplx<Real> *out, cudaStream_t stream) {
  constexpr int L1 = L < 16 ? L : 16;
  constexpr uint64_t G = kTileCols<Real>;
  if (a.mirror) {
    const uint64_t lows = (a.W - 1) / 2 + 1;
    const dim3 grid(static_cast<unsigned>((lows + G / 2 - 1) / (G / 2)), static_cast<unsigned>(a.P));
    four_step_rows<Real, true, L1, L / L1><<<grid, kThreads<Real>, 0, stream>>>(a, out);
  } else {
    const dim3 grid(static_cast<unsigned>((a.W + G - 1) / G), static_cast<unsigned>(a.P));
    four_step_rows<Real, false, L1, L / L1><<<grid, kThreads<Real>, 0, stream>>>(a, out);
  }
}

template <class Real, int L>
void launch_columns(const FourStepArgs<Real> &a, uint64_t Q, Cplx<Real> *out, cudaStream_t stream) {
  constexpr int L1 = L < 16 ? L : 16;
  const dim3 grid(static_cast<unsigned>((a.W + kTileCols<Real> - 1) / kTileCols<Real>), static_cast<unsigned>(Q));
  four_step_columns<Real, L1, L / L1><<<grid, kThreads<Real>, 0, stream>>>(out, a.W, Q, a.tw_rows);
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
