// SPDX-License-Identifier: Apache-2.0
// The whole-spectrum methods' kernels: DIRECT_ROWS = direct sums along each nonempty row in the output layout
// itself (then an in-place strided cuFFT C2C down the columns), DENSE = every nonzero scattered into real rows
// (then cuFFT's R2C); the engine (engine.cu) plans and runs the FFTs.
#include <algorithm>

#include "spfft2d/cuda/device.cuh"

namespace sfft::spfft2d::gpu {
namespace {

// b[r][v] = sum_e w_e e^{-2 pi i col_e v / C} for v < W, one block per nonempty row r = row_id[j];
// thread t of a block computes v = v0 + t + i * blockDim.x, i < U, so the writes of each i are coalesced.
template <class Real, bool kWeighted>
__global__ void row_sums(const int32_t *__restrict__ row_id, const int64_t *__restrict__ row_start,
                         const int32_t *__restrict__ col, const Real *__restrict__ weight, DeviceTwiddles<Real> tw,
                         uint64_t C, uint64_t W, Cplx<Real> *__restrict__ b) {
  constexpr int U = kRowsPerThread<Real>;
  const uint64_t j = blockIdx.x, r = static_cast<uint64_t>(row_id[j]);
  const int64_t e0 = row_start[j], e1 = row_start[j + 1];
  const uint64_t chunk = static_cast<uint64_t>(blockDim.x) * U;
  for (uint64_t v0 = static_cast<uint64_t>(blockIdx.y) * chunk + threadIdx.x; v0 < W;
       v0 += static_cast<uint64_t>(gridDim.y) * chunk) {
    Cplx<Real> acc[U];
#pragma unroll
    for (int i = 0; i < U; ++i) acc[i] = {Real(0), Real(0)};
    for (int64_t e = e0; e < e1; ++e) {
      const uint64_t c = static_cast<uint64_t>(col[e]);
      uint64_t phase = c * v0 % C;
      const uint64_t step = c * blockDim.x % C;
      const Real w = kWeighted ? weight[e] : Real(1);
#pragma unroll
      for (int i = 0; i < U; ++i) {
        const Cplx<Real> t = tw(phase);
        acc[i].x += w * t.x;
        acc[i].y += w * t.y;
        phase += step;
        phase -= phase >= C ? C : 0;
      }
    }
#pragma unroll
    for (int i = 0; i < U; ++i) {
      const uint64_t v = v0 + static_cast<uint64_t>(i) * blockDim.x;
      if (v < W) b[r * W + v] = acc[i];
    }
  }
}

// Real rows of `pitch` reals: real_rows[row][col] = w for every nonzero. A warp per
// nonempty row, its lanes over the row's nonzeros, so a warp's stores are runs of one row and no thread walks a
// hub column alone: the thread-per-column scatter this replaces kept the power-law matrices' DENSE 0.11-0.19 ms
// behind a user's scatter at 8192^2-16384^2 (H200), and left most of the GPU idle at 1024^2 (one thread per
// column).
template <class Real, bool kWeighted>
__global__ void scatter_rows(const int32_t *__restrict__ row_id, const int64_t *__restrict__ row_start,
                             const int32_t *__restrict__ col, const Real *__restrict__ weight, uint64_t nrows,
                             uint64_t pitch, Real *__restrict__ real_rows) {
  const unsigned lane = threadIdx.x % 32;
  const uint64_t warps = static_cast<uint64_t>(gridDim.x) * (blockDim.x / 32);
  for (uint64_t j = (static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32; j < nrows; j += warps) {
    Real *dst = real_rows + static_cast<uint64_t>(row_id[j]) * pitch;
    for (int64_t e = row_start[j] + lane; e < row_start[j + 1]; e += 32) dst[col[e]] = kWeighted ? weight[e] : Real(1);
  }
}

}  // namespace

template <class Real>
void launch_row_sums(const int32_t *row_id, const int64_t *row_start, const int32_t *col, const Real *weight,
                     uint64_t nrows, const Cplx<Real> *tw_lo, const Cplx<Real> *tw_hi, uint64_t C, uint64_t W,
                     Cplx<Real> *b, cudaStream_t stream) {
  if (nrows == 0) return;
  constexpr unsigned block = 128;
  const uint64_t chunks = (W + block * kRowsPerThread<Real> - 1) / (block * kRowsPerThread<Real>);
  dim3 grid(static_cast<unsigned>(nrows), static_cast<unsigned>(std::min<uint64_t>(chunks, 65535)));
  DeviceTwiddles<Real> tw{tw_lo, tw_hi};
  if (weight == nullptr)
    row_sums<Real, false><<<grid, block, 0, stream>>>(row_id, row_start, col, nullptr, tw, C, W, b);
  else
    row_sums<Real, true><<<grid, block, 0, stream>>>(row_id, row_start, col, weight, tw, C, W, b);
  SFFT_CUDA_CHECK_LAUNCH();
}

template <class Real>
void launch_scatter_rows(const int32_t *row_id, const int64_t *row_start, const int32_t *col, const Real *weight,
                         uint64_t nrows, uint64_t pitch, Real *real_rows, cudaStream_t stream) {
  if (nrows == 0) return;
  constexpr unsigned block = 256;
  const unsigned grid = cuda::grid_for(static_cast<std::size_t>(nrows) * 32, block);
  if (weight == nullptr)
    scatter_rows<Real, false><<<grid, block, 0, stream>>>(row_id, row_start, col, nullptr, nrows, pitch, real_rows);
  else
    scatter_rows<Real, true><<<grid, block, 0, stream>>>(row_id, row_start, col, weight, nrows, pitch, real_rows);
  SFFT_CUDA_CHECK_LAUNCH();
}

#define SFFT_SPFFT2D_INSTANTIATE(Real)                                                                               \
  template void launch_row_sums<Real>(const int32_t *, const int64_t *, const int32_t *, const Real *, uint64_t,     \
                                      const Cplx<Real> *, const Cplx<Real> *, uint64_t, uint64_t, Cplx<Real> *,      \
                                      cudaStream_t);                                                                 \
  template void launch_scatter_rows<Real>(const int32_t *, const int64_t *, const int32_t *, const Real *, uint64_t, \
                                          uint64_t, Real *, cudaStream_t);
SFFT_SPFFT2D_INSTANTIATE(float)
SFFT_SPFFT2D_INSTANTIATE(double)
#undef SFFT_SPFFT2D_INSTANTIATE

}  // namespace sfft::spfft2d::gpu
