// SPDX-License-Identifier: Apache-2.0
// Per-call cost of small transforms on the CUDA backend, where the library's own overhead (argument checks,
// pointer-kind queries, backend dispatch through the CUDA plugin) is a visible share of the time: fftshift
// of a 4 KiB device array and sfft_exec at n = 2^14. Uses only the public C API, so the same source builds
// against any sfft version for a before/after comparison in one run. Also times the first call that loads
// the CUDA backend.
#include <cuda_runtime.h>

#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench_support.hpp"
#include "sfft/sfft.h"

namespace {

void check(sfft_status s, const char *what) {
  if (s != SFFT_SUCCESS) {
    std::fprintf(stderr, "%s: %s\n", what, sfft_last_error());
    std::exit(1);
  }
}

// Median over `rounds` of the mean time of `calls` back-to-back calls, the stream synchronised once per round.
template <class Fn>
double per_call_us(Fn &&fn, int calls, int rounds) {
  std::vector<double> t;
  for (int r = 0; r < rounds + 1; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) fn();
    BENCH_CUDA(cudaDeviceSynchronize());
    if (r > 0)
      t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / calls);
  }
  return bench::median(t);
}

}  // namespace

int main(int argc, char **argv) {
  const char *label = argc > 1 ? argv[1] : "sfft";
  auto t0 = std::chrono::steady_clock::now();
  const int devices = sfft_cuda_device_count();
  const double first_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (devices == 0) {
    std::printf("%s: no CUDA device\n", label);
    return 0;
  }

  // fftshift of 1024 floats, device to device, odd extent (the cycle path is not involved out of place).
  const int64_t shape[1] = {1023};
  float *d_in = nullptr, *d_out = nullptr;
  BENCH_CUDA(cudaMalloc(&d_in, 1024 * sizeof(float)));
  BENCH_CUDA(cudaMalloc(&d_out, 1024 * sizeof(float)));
  BENCH_CUDA(cudaMemset(d_in, 0, 1024 * sizeof(float)));
  const double shift_us = per_call_us(
      [&] { check(fftshift_nd(d_out, d_in, 1, shape, 0u, SFFT_FLOAT32, nullptr), "fftshift_nd"); }, 20000, 7);

  // sfft_exec, EXACT complex64, n = 2^14, k = 8 planted tones, device input and outputs.
  const uint64_t n = uint64_t{1} << 14, k = 8;
  std::vector<std::complex<float>> x(n);
  for (uint64_t t = 0; t < n; ++t)
    for (uint64_t j = 0; j < k; ++j) x[t] += std::polar(1.0f / n, static_cast<float>(2 * M_PI * (97 * j + 5) * t / n));
  std::complex<float> *d_x = nullptr, *d_values = nullptr;
  uint64_t *d_freqs = nullptr;
  BENCH_CUDA(cudaMalloc(&d_x, n * sizeof *d_x));
  BENCH_CUDA(cudaMalloc(&d_values, k * sizeof *d_values));
  BENCH_CUDA(cudaMalloc(&d_freqs, k * sizeof *d_freqs));
  BENCH_CUDA(cudaMemcpy(d_x, x.data(), n * sizeof *d_x, cudaMemcpyHostToDevice));
  sfft_options opts;
  sfft_options_init(&opts);
  opts.backend = SFFT_BACKEND_CUDA;
  sfft_sparse_options knobs;
  sfft_sparse_options_init(&knobs);
  knobs.variant = SFFT_SPARSE_EXACT;
  sfft_plan plan = nullptr;
  check(sfft_create_ex(&plan, n, k, SFFT_COMPLEX64, &opts, &knobs), "sfft_create_ex");
  uint64_t found = 0;
  const double exec_us = per_call_us(
      [&] {
        found = k;
        check(sfft_exec(plan, d_x, d_freqs, d_values, &found), "sfft_exec");
      },
      2000, 7);
  sfft_destroy(plan);
  cudaFree(d_x);
  cudaFree(d_values);
  cudaFree(d_freqs);
  cudaFree(d_in);
  cudaFree(d_out);

  std::printf(
      "%-10s first CUDA query %8.2f ms | fftshift_nd 1023 f32 %7.2f us/call | sfft_exec 2^14 k=8 c64 %7.2f us/call "
      "(found %llu)\n",
      label, first_ms, shift_us, exec_us, static_cast<unsigned long long>(found));
  return 0;
}
