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

// The scatter into real rows: real_rows[at[e]] = w_e, a thread per nonzero (`at`: each nonzero's index in the
// real rows, made when DENSE is planned), so no thread walks a hub row or column alone (a power-law matrix's
// hubs hold thousands of entries): the user's scatter of COO entries, with one index a nonzero instead of two.
template <class Real, bool kWeighted>
__global__ void scatter_at(const uint64_t *__restrict__ at, const Real *__restrict__ weight, uint64_t nnz,
                           Real *__restrict__ real_rows) {
  const uint64_t threads = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t e = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < nnz; e += threads)
    real_rows[at[e]] = kWeighted ? weight[e] : Real(1);
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
void launch_scatter_at(const uint64_t *at, const Real *weight, uint64_t nnz, Real *real_rows, cudaStream_t stream) {
  if (nnz == 0) return;
  constexpr unsigned block = 256;
  const unsigned grid = cuda::grid_for(static_cast<std::size_t>(nnz), block);
  if (weight == nullptr)
    scatter_at<Real, false><<<grid, block, 0, stream>>>(at, nullptr, nnz, real_rows);
  else
    scatter_at<Real, true><<<grid, block, 0, stream>>>(at, weight, nnz, real_rows);
  SFFT_CUDA_CHECK_LAUNCH();
}

#define SFFT_SPFFT2D_INSTANTIATE(Real)                                                                           \
  template void launch_row_sums<Real>(const int32_t *, const int64_t *, const int32_t *, const Real *, uint64_t, \
                                      const Cplx<Real> *, const Cplx<Real> *, uint64_t, uint64_t, Cplx<Real> *,  \
                                      cudaStream_t);                                                             \
  template void launch_scatter_at<Real>(const uint64_t *, const Real *, uint64_t, Real *, cudaStream_t);
SFFT_SPFFT2D_INSTANTIATE(float)
SFFT_SPFFT2D_INSTANTIATE(double)
#undef SFFT_SPFFT2D_INSTANTIATE

}  // namespace sfft::spfft2d::gpu
