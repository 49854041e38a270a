// SPDX-License-Identifier: Apache-2.0
#include "bench_mpi_signal.hpp"

#include <cuda_runtime.h>

#include "bench_support.hpp"

namespace bench_mpi {
namespace {

constexpr int kSamplesPerThread = 32;  // one sincospi per tone and thread, then a rotation per sample
constexpr int kThreads = 128;

struct DeviceTone {
  uint64_t f;
  double re, im;            // value / n
  double step_re, step_im;  // e^{2 pi i f / n}: one sample further
};

// f * t mod n without 128-bit division: the quotient from a double estimate is off by a few at most, and the
// remainder computed modulo 2^64 is then off by that multiple of n, which the loops remove.
__device__ uint64_t mul_mod(uint64_t f, uint64_t t, uint64_t n, double inverse_n) {
  const uint64_t lo = f * t, hi = __umul64hi(f, t);
  const double product = static_cast<double>(hi) * 18446744073709551616.0 + static_cast<double>(lo);
  const auto quotient = static_cast<uint64_t>(product * inverse_n);
  auto r = static_cast<int64_t>(lo - quotient * n);
  while (r < 0) r += static_cast<int64_t>(n);
  while (r >= static_cast<int64_t>(n)) r -= static_cast<int64_t>(n);
  return static_cast<uint64_t>(r);
}

__global__ void __launch_bounds__(kThreads)
    tones_kernel(float2 *x, uint64_t n, uint64_t offset, uint64_t length, const DeviceTone *tones, int count) {
  const uint64_t first = (blockIdx.x * static_cast<uint64_t>(kThreads) + threadIdx.x) * kSamplesPerThread;
  if (first >= length) return;
  const double inverse_n = 1.0 / static_cast<double>(n);
  const uint64_t t0 = (offset + first) % n;
  double re[kSamplesPerThread] = {}, im[kSamplesPerThread] = {};
  for (int j = 0; j < count; ++j) {
    const DeviceTone tone = tones[j];
    double s, c;
    sincospi(2.0 * static_cast<double>(mul_mod(tone.f, t0, n, inverse_n)) * inverse_n, &s, &c);
    double pr = tone.re * c - tone.im * s, pi = tone.re * s + tone.im * c;
#pragma unroll
    for (int u = 0; u < kSamplesPerThread; ++u) {
      re[u] += pr;
      im[u] += pi;
      const double next = pr * tone.step_re - pi * tone.step_im;
      pi = pr * tone.step_im + pi * tone.step_re;
      pr = next;
    }
  }
#pragma unroll
  for (int u = 0; u < kSamplesPerThread; ++u)
    if (first + u < length) x[first + u] = make_float2(static_cast<float>(re[u]), static_cast<float>(im[u]));
}

}  // namespace

void tones_block_on_device(std::complex<float> *x, uint64_t n, uint64_t offset, uint64_t length,
                           const std::vector<Tone> &tones) {
  if (length == 0) return;
  std::vector<DeviceTone> host(tones.size());
  for (std::size_t j = 0; j < tones.size(); ++j) {
    const double turns = static_cast<double>(tones[j].f % n) / static_cast<double>(n);
    host[j] = {tones[j].f % n, tones[j].value.real() / static_cast<double>(n),
               tones[j].value.imag() / static_cast<double>(n), std::cos(2 * M_PI * turns), std::sin(2 * M_PI * turns)};
  }
  DeviceTone *device = nullptr;
  BENCH_CUDA(cudaMalloc(&device, host.size() * sizeof(DeviceTone)));
  BENCH_CUDA(cudaMemcpy(device, host.data(), host.size() * sizeof(DeviceTone), cudaMemcpyHostToDevice));
  const uint64_t threads = (length + kSamplesPerThread - 1) / kSamplesPerThread;
  const uint64_t blocks = (threads + kThreads - 1) / kThreads;
  tones_kernel<<<static_cast<unsigned>(blocks), kThreads>>>(reinterpret_cast<float2 *>(x), n, offset, length, device,
                                                            static_cast<int>(host.size()));
  BENCH_CUDA(cudaGetLastError());
  BENCH_CUDA(cudaDeviceSynchronize());
  BENCH_CUDA(cudaFree(device));
}

}  // namespace bench_mpi
