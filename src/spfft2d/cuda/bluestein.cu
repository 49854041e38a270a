// SPDX-License-Identifier: Apache-2.0
// Bluestein rows for the DIRECT method: rows of an FFT-unfriendly length C are transformed as a circular
// convolution of length L = bluestein_length(C) (2^a 3^b >= 2C - 1): cuFFT's own transform of 4110 rows of the
// prime length 8219 took 2.35 ms on the H100, this pass 1.40 ms at L = 17496. The column sums are written
// premultiplied by the chirp into rows of length L (direct_tiles.cu), then forward FFT, the product with the
// kernel's spectrum (here), inverse FFT, and the fold applies the chirp again.
#include <algorithm>
#include <cmath>
#include <vector>

#include "spfft2d/cuda/device.cuh"

namespace sfft::spfft2d::gpu {
namespace {

// z[t][k] *= kernel[k] for the count rows of length L of a tile (the Bluestein convolution's product).
template <class Real>
__global__ void multiply_rows(Cplx<Real> *__restrict__ z, const Cplx<Real> *__restrict__ kernel, uint64_t L,
                              uint64_t count) {
  const uint64_t k = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= L) return;
  const Cplx<Real> h = kernel[k];
  for (uint64_t t0 = static_cast<uint64_t>(blockIdx.y) * kPassRows; t0 < count;
       t0 += static_cast<uint64_t>(gridDim.y) * kPassRows) {
    Cplx<Real> x[kPassRows];
#pragma unroll
    for (int i = 0; i < kPassRows; ++i)
      if (t0 + i < count) x[i] = z[(t0 + i) * L + k];
#pragma unroll
    for (int i = 0; i < kPassRows; ++i)
      if (t0 + i < count) z[(t0 + i) * L + k] = cmul(x[i], h);
  }
}


}  // namespace

// chirp[c] = e^{-pi i c^2 / C} from the exact integer c^2 mod 2C, and kernel = FFT_L(b) / L of
// b[k] = conj(chirp[|k|]) on the circular indices -C < k < C (zero elsewhere), computed once in double.
template <class Real>
Bluestein<Real> make_bluestein(uint64_t n, cudaStream_t stream) {
  using C = Cplx<Real>;
  const uint64_t L = bluestein_length(n);
  const long double pi = 3.141592653589793238462643383279502884L;
  std::vector<C> chirp(n);
  std::vector<double2> b(L, double2{0.0, 0.0});
  for (uint64_t c = 0; c < n; ++c) {
    const long double a = pi * static_cast<long double>(c * c % (2 * n)) / static_cast<long double>(n);
    const double re = static_cast<double>(std::cos(a)), im = static_cast<double>(std::sin(a));
    chirp[c] = C{static_cast<Real>(re), static_cast<Real>(-im)};
    b[c] = double2{re, im};
    if (c != 0) b[L - c] = b[c];
  }
  DeviceBuffer<double2> d = upload(b.data(), b.size());
  cuda::CufftPlan fft;
  long long len = static_cast<long long>(L);
  fft.make_many(1, &len, nullptr, 1, len, nullptr, 1, len, CUFFT_Z2Z, 1);
  fft.set_stream(stream);
  cuda::exec_c2c(fft, d.get(), d.get(), CUFFT_FORWARD);
  SFFT_CUDA_CHECK(cudaMemcpyAsync(b.data(), d.get(), d.bytes(), cudaMemcpyDeviceToHost, stream));
  SFFT_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<C> kernel(L);
  for (uint64_t k = 0; k < L; ++k)
    kernel[k] =
        C{static_cast<Real>(b[k].x / static_cast<double>(L)), static_cast<Real>(b[k].y / static_cast<double>(L))};
  Bluestein<Real> out;
  out.length = L;
  out.chirp = upload(chirp.data(), chirp.size());
  out.kernel = upload(kernel.data(), kernel.size());
  return out;
}

template <class Real>
void launch_multiply_rows(Cplx<Real> *z, const Cplx<Real> *kernel, uint64_t L, uint64_t count, cudaStream_t stream) {
  constexpr unsigned block = 256;
  dim3 grid(static_cast<unsigned>((L + block - 1) / block),
            static_cast<unsigned>(std::min<uint64_t>((count + kPassRows - 1) / kPassRows, 65535)));
  multiply_rows<Real><<<grid, block, 0, stream>>>(z, kernel, L, count);
  SFFT_CUDA_CHECK_LAUNCH();
}

template Bluestein<float> make_bluestein<float>(uint64_t, cudaStream_t);
template Bluestein<double> make_bluestein<double>(uint64_t, cudaStream_t);
template void launch_multiply_rows<float>(Cplx<float> *, const Cplx<float> *, uint64_t, uint64_t, cudaStream_t);
template void launch_multiply_rows<double>(Cplx<double> *, const Cplx<double> *, uint64_t, uint64_t, cudaStream_t);

}  // namespace sfft::spfft2d::gpu
