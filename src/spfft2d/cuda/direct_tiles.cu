// SPDX-License-Identifier: Apache-2.0
// The DIRECT method's kernels: direct sparse sums down the columns for one tile of spectrum rows (before the
// row FFTs), and the fold of the transformed tile into output rows (Hermitian mirror for the lower half).
#include <algorithm>

#include "spfft2d/cuda/device.cuh"

namespace sfft::spfft2d::gpu {
namespace {

// acc[i] += sum_{e in [e0, e1)} w_e e^{-2 pi i row_e (u0 + i) / R} for i < kColumnRows.
template <class Real, class Twiddles>
__device__ __forceinline__ void column_sums(const ColumnEntry<Real> *__restrict__ entries, int64_t e0, int64_t e1,
                                            const Twiddles &tw, const Modulus &R, uint64_t u0, Cplx<Real> *acc) {
  constexpr int H = kRunRows / 2;
#pragma unroll 2
  for (int64_t e = e0; e < e1; ++e) {
    const ColumnEntry<Real> en = entries[e];
    // cs[i] = cos(i theta), sn[i] = sin(i theta) for the step s = e^{-i theta}.
    Real cs[H + 1], sn[H + 1];
    cs[1] = en.step.x;
    sn[1] = -en.step.y;
    cs[2] = cs[1] * cs[1] - sn[1] * sn[1];
    sn[2] = Real(2) * cs[1] * sn[1];
    cs[3] = cs[2] * cs[1] - sn[2] * sn[1];
    sn[3] = cs[2] * sn[1] + sn[2] * cs[1];
    cs[4] = cs[2] * cs[2] - sn[2] * sn[2];
    sn[4] = Real(2) * cs[2] * sn[2];
    Cplx<Real> anchor = tw(R(static_cast<uint64_t>(en.row) * (u0 + H)));
    anchor.x *= en.weight;
    anchor.y *= en.weight;
#pragma unroll
    for (int j = 0; j < kRuns<Real>; ++j) {
      if (j > 0) anchor = cmul(anchor, en.run_step);
      const int a = j * kRunRows + H;
      acc[a].x += anchor.x;
      acc[a].y += anchor.y;
#pragma unroll
      for (int i = 1; i <= H; ++i) {
        // anchor * s^-i = (x c - y s) + i (y c + x s); anchor * s^i = (x c + y s) + i (y c - x s).
        acc[a - i].x = fma(anchor.x, cs[i], fma(-anchor.y, sn[i], acc[a - i].x));
        acc[a - i].y = fma(anchor.y, cs[i], fma(anchor.x, sn[i], acc[a - i].y));
        if (i < H) {
          acc[a + i].x = fma(anchor.x, cs[i], fma(anchor.y, sn[i], acc[a + i].x));
          acc[a + i].y = fma(anchor.y, cs[i], fma(-anchor.x, sn[i], acc[a + i].y));
        }
      }
    }
  }
}

// z[t][c] = chirp[c] * sum_{e in column c} w_e e^{-2 pi i row_e (s0 + t) / R} for c < C (col_ptr: the C + 1
// offsets of every column into entries; chirp nullptr: 1), and 0 for the Bluestein padding C <= c < stride
// the grid covers (a pass with a pre-zeroed padded buffer launches over C columns only). One thread per
// (column, kColumnRows rows), so the writes of a warp are contiguous. A column of more than `heavy` entries
// is written as 0 here and summed by heavy_column_sums afterwards: a warp runs as long as its longest
// column, and a power-law matrix's hub columns made the whole pass 2-9x slower.
template <class Real, class Twiddles>
__global__ void __launch_bounds__(kColumnBlock)
    direct_tile(const int64_t *__restrict__ col_ptr, const ColumnEntry<Real> *__restrict__ entries, Twiddles tw,
                Modulus R, uint64_t C, uint64_t stride, const Cplx<Real> *__restrict__ chirp, int64_t heavy,
                uint64_t s0, uint64_t tile, Cplx<Real> *__restrict__ z) {
  constexpr int U = kColumnRows<Real>;
  extern __shared__ __align__(16) unsigned char shared[];
  tw.load(reinterpret_cast<Cplx<Real> *>(shared));
  const uint64_t c = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= stride) return;
  int64_t e0 = 0, e1 = 0;
  Cplx<Real> ch{Real(1), Real(0)};
  if (c < C) {
    e0 = col_ptr[c];
    e1 = col_ptr[c + 1];
    if (e1 - e0 > heavy) e1 = e0;
    if (chirp != nullptr) ch = chirp[c];
  }
  for (uint64_t t0 = static_cast<uint64_t>(blockIdx.y) * U; t0 < tile; t0 += static_cast<uint64_t>(gridDim.y) * U) {
    Cplx<Real> acc[U];
#pragma unroll
    for (int i = 0; i < U; ++i) acc[i] = {Real(0), Real(0)};
    column_sums(entries, e0, e1, tw, R, s0 + t0, acc);
#pragma unroll
    for (int i = 0; i < U; ++i)
      if (t0 + i < tile) z[(t0 + i) * stride + c] = cmul(acc[i], ch);
  }
}

// The columns direct_tile left to it (heavy_col, count of them): one warp per column, its lanes taking every
// 32nd entry, the lanes' sums combined by a butterfly of shuffles (a fixed order: the result does not depend
// on the run), then written like direct_tile's.
template <class Real, class Twiddles>
__global__ void __launch_bounds__(kColumnBlock)
    heavy_column_sums(const int64_t *__restrict__ col_ptr, const ColumnEntry<Real> *__restrict__ entries,
                      const int32_t *__restrict__ heavy_col, uint64_t count, Twiddles tw, Modulus R, uint64_t stride,
                      const Cplx<Real> *__restrict__ chirp, uint64_t s0, uint64_t tile, Cplx<Real> *__restrict__ z) {
  constexpr int U = kColumnRows<Real>;
  constexpr unsigned kLanes = 32;
  extern __shared__ __align__(16) unsigned char shared[];
  tw.load(reinterpret_cast<Cplx<Real> *>(shared));
  const unsigned lane = threadIdx.x % kLanes;
  const uint64_t h = static_cast<uint64_t>(blockIdx.x) * (blockDim.x / kLanes) + threadIdx.x / kLanes;
  if (h >= count) return;  // the whole warp: the shuffles below need all its lanes
  const auto c = static_cast<uint64_t>(heavy_col[h]);
  const int64_t e0 = col_ptr[c], e1 = col_ptr[c + 1];
  const Cplx<Real> ch = chirp != nullptr ? chirp[c] : Cplx<Real>{Real(1), Real(0)};
  for (uint64_t t0 = static_cast<uint64_t>(blockIdx.y) * U; t0 < tile; t0 += static_cast<uint64_t>(gridDim.y) * U) {
    Cplx<Real> acc[U];
#pragma unroll
    for (int i = 0; i < U; ++i) acc[i] = {Real(0), Real(0)};
    for (int64_t e = e0 + lane; e < e1; e += kLanes) column_sums(entries, e, e + 1, tw, R, s0 + t0, acc);
#pragma unroll
    for (int i = 0; i < U; ++i)
#pragma unroll
      for (unsigned o = kLanes / 2; o > 0; o /= 2) {
        acc[i].x += __shfl_xor_sync(0xffffffffu, acc[i].x, o);
        acc[i].y += __shfl_xor_sync(0xffffffffu, acc[i].y, o);
      }
    if (lane == 0) {
#pragma unroll
      for (int i = 0; i < U; ++i)
        if (t0 + i < tile) z[(t0 + i) * stride + c] = cmul(acc[i], ch);
    }
  }
}

// Output rows of a transformed tile into out (the chirp of Bluestein rows applied, when chirp is not nullptr):
// direct rows copy, mirrored rows u take conj(Z[R - u - s0][(C - v) mod C]).
template <class Real>
__global__ void fold_rows(const Cplx<Real> *__restrict__ z, uint64_t stride, uint64_t C, uint64_t W, uint64_t R,
                          uint64_t s0, uint64_t first, uint64_t count, bool mirrored,
                          const Cplx<Real> *__restrict__ chirp, Cplx<Real> *__restrict__ out) {
  const uint64_t v = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (v >= W) return;
  const uint64_t j = mirrored && v != 0 ? C - v : v;
  const Cplx<Real> ch = chirp != nullptr ? chirp[j] : Cplx<Real>{Real(1), Real(0)};
  for (uint64_t i0 = static_cast<uint64_t>(blockIdx.y) * kPassRows; i0 < count;
       i0 += static_cast<uint64_t>(gridDim.y) * kPassRows) {
    Cplx<Real> x[kPassRows];
#pragma unroll
    for (int i = 0; i < kPassRows; ++i) {
      const uint64_t u = first + i0 + i;
      if (i0 + i < count) x[i] = z[(mirrored ? R - u - s0 : u - s0) * stride + j];
    }
#pragma unroll
    for (int i = 0; i < kPassRows; ++i) {
      if (i0 + i >= count) continue;
      Cplx<Real> y = cmul(x[i], ch);
      if (mirrored) y.y = -y.y;
      out[(i0 + i) * W + v] = y;
    }
  }
}

}  // namespace

template <class Real>
void launch_direct_tile(const int64_t *col_ptr, const ColumnEntry<Real> *entries, const ColumnTwiddles<Real> &tw,
                        const HeavyColumns &heavy, uint64_t R, uint64_t C, uint64_t stride, uint64_t grid_cols,
                        const Cplx<Real> *chirp, uint64_t s0, uint64_t tile, Cplx<Real> *z, cudaStream_t stream) {
  constexpr unsigned block = kColumnBlock;
  const uint64_t groups = (tile + kColumnRows<Real> - 1) / kColumnRows<Real>;
  const unsigned row_groups = static_cast<unsigned>(std::min<uint64_t>(groups, 65535));
  dim3 grid(static_cast<unsigned>((grid_cols + block - 1) / block), row_groups);
  dim3 heavy_grid(static_cast<unsigned>((heavy.count + block / 32 - 1) / (block / 32)), row_groups);
  const Modulus mod(R);
  auto launch = [&](auto twiddles, std::size_t shared_bytes) {
    direct_tile<Real><<<grid, block, shared_bytes, stream>>>(col_ptr, entries, twiddles, mod, C, stride, chirp,
                                                             heavy.limit, s0, tile, z);
    if (heavy.count > 0)
      heavy_column_sums<Real><<<heavy_grid, block, shared_bytes, stream>>>(col_ptr, entries, heavy.col, heavy.count,
                                                                           twiddles, mod, stride, chirp, s0, tile, z);
  };
  if (tw.split != nullptr)
    launch(SharedTwiddles<Real>{tw.split, tw.split_lo, tw.split_hi, tw.bits},
           (tw.split_lo + tw.split_hi) * sizeof(Cplx<Real>));
  else
    launch(DeviceTwiddles<Real>{tw.lo, tw.hi}, 0);
  SFFT_CUDA_CHECK_LAUNCH();
}

template <class Real>
void launch_fold(const Cplx<Real> *z, uint64_t stride, uint64_t C, uint64_t W, uint64_t R, uint64_t s0, uint64_t first,
                 uint64_t count, bool mirrored, const Cplx<Real> *chirp, Cplx<Real> *out, cudaStream_t stream) {
  constexpr unsigned block = 256;
  dim3 grid(static_cast<unsigned>((W + block - 1) / block),
            static_cast<unsigned>(std::min<uint64_t>((count + kPassRows - 1) / kPassRows, 65535)));
  fold_rows<Real><<<grid, block, 0, stream>>>(z, stride, C, W, R, s0, first, count, mirrored, chirp, out);
  SFFT_CUDA_CHECK_LAUNCH();
}

#define SFFT_SPFFT2D_INSTANTIATE(Real)                                                                             \
  template void launch_direct_tile<Real>(const int64_t *, const ColumnEntry<Real> *, const ColumnTwiddles<Real> &, \
                                         const HeavyColumns &, uint64_t, uint64_t, uint64_t, uint64_t,             \
                                         const Cplx<Real> *, uint64_t, uint64_t, Cplx<Real> *, cudaStream_t);      \
  template void launch_fold<Real>(const Cplx<Real> *, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t,  \
                                  uint64_t, bool, const Cplx<Real> *, Cplx<Real> *, cudaStream_t);
SFFT_SPFFT2D_INSTANTIATE(float)
SFFT_SPFFT2D_INSTANTIATE(double)
#undef SFFT_SPFFT2D_INSTANTIATE

}  // namespace sfft::spfft2d::gpu
