/* SPDX-License-Identifier: Apache-2.0 */
/* Every family with CUDA device pointers: the same sfft calls as with host memory; the library sees that the
   pointers are device memory and runs the CUDA backend (asynchronously on opts.stream where the header says
   so: synchronise before reading results). Each result is compared with the CPU backend's on host copies.
   Needs the CUDA runtime (C API, no nvcc); exits 77 ("skipped") on a machine without a usable GPU. */
#include <sfft/sfft.h>
#include <cuda_runtime_api.h>
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define SFFT_CHECK(call)                                            \
  do {                                                              \
    if ((call) != SFFT_SUCCESS) {                                   \
      fprintf(stderr, "%s failed: %s\n", #call, sfft_last_error()); \
      exit(1);                                                      \
    }                                                               \
  } while (0)
#define CUDA_CHECK(call)                                                 \
  do {                                                                   \
    cudaError_t e_ = (call);                                             \
    if (e_ != cudaSuccess) {                                             \
      fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(e_)); \
      exit(1);                                                           \
    }                                                                    \
  } while (0)

/* A device copy of n bytes of host data. */
static void *to_device(const void *host, size_t bytes) {
  void *dev;
  CUDA_CHECK(cudaMalloc(&dev, bytes));
  CUDA_CHECK(cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice));
  return dev;
}

static double max_diff(const double complex *a, const double complex *b, size_t n) {
  double worst = 0;
  for (size_t i = 0; i < n; ++i) worst = fmax(worst, cabs(a[i] - b[i]));
  return worst;
}

static int report(const char *what, double diff, double limit) {
  printf("device pointers: %s: max difference from the CPU backend %.1e: %s\n", what, diff,
         diff <= limit ? "ok" : "WRONG");
  return diff <= limit ? 0 : 1;
}

int main(void) {
  if (sfft_cuda_device_count() == 0) {
    printf("device pointers: skipped, no usable CUDA device\n");
    return 77;
  }
  sfft_options cpu;
  sfft_options_init(&cpu);
  cpu.backend = SFFT_BACKEND_CPU;
  int failures = 0;

  { /* fftshift of a 3-D array */
    enum { A = 6, B = 7, C = 9, TOTAL = A * B * C };
    static double complex in[TOTAL], out[TOTAL], expected[TOTAL];
    for (int i = 0; i < TOTAL; ++i) in[i] = i - 0.5 * i * I;
    const int64_t shape[3] = {A, B, C};
    void *d_in = to_device(in, sizeof in), *d_out;
    CUDA_CHECK(cudaMalloc(&d_out, sizeof out));
    SFFT_CHECK(fftshift_nd(d_out, d_in, 3, shape, 0, SFFT_COMPLEX128, NULL)); /* asynchronous */
    CUDA_CHECK(cudaMemcpy(out, d_out, sizeof out, cudaMemcpyDeviceToHost));   /* waits for it */
    SFFT_CHECK(fftshift_nd(expected, in, 3, shape, 0, SFFT_COMPLEX128, &cpu));
    failures += report("fftshift_nd 6x7x9 complex128", max_diff(out, expected, TOTAL), 0);
    cudaFree(d_in);
    cudaFree(d_out);
  }

  { /* sparse FFT: input and outputs on the device */
    enum { N = 1 << 14, K = 2 };
    static double complex x[N];
    const double pi = acos(-1.0);
    for (int t = 0; t < N; ++t) /* X[3] = N, X[999] = -2N */
      x[t] = cexp(2 * pi * I * (double)((3 * t) % N) / N) - 2 * cexp(2 * pi * I * (double)((999 * t) % N) / N);
    void *d_x = to_device(x, sizeof x), *d_values;
    uint64_t *d_freqs, freqs[K], cpu_freqs[K], count = K, cpu_count = K;
    double complex values[K], cpu_values[K];
    CUDA_CHECK(cudaMalloc((void **)&d_freqs, sizeof freqs));
    CUDA_CHECK(cudaMalloc(&d_values, sizeof values));
    sfft_plan gpu_plan, cpu_plan;
    SFFT_CHECK(sfft_create(&gpu_plan, N, K, SFFT_COMPLEX128, NULL)); /* AUTO: CUDA when a GPU is usable */
    SFFT_CHECK(sfft_exec(gpu_plan, d_x, d_freqs, d_values, &count));
    CUDA_CHECK(cudaMemcpy(freqs, d_freqs, sizeof freqs, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(values, d_values, sizeof values, cudaMemcpyDeviceToHost));
    SFFT_CHECK(sfft_create(&cpu_plan, N, K, SFFT_COMPLEX128, &cpu));
    SFFT_CHECK(sfft_exec(cpu_plan, x, cpu_freqs, cpu_values, &cpu_count));
    int same = count == cpu_count;
    for (uint64_t i = 0; same && i < count; ++i) same = freqs[i] == cpu_freqs[i];
    failures += report("sfft_exec n = 2^14, k = 2", same ? max_diff(values, cpu_values, K) : INFINITY, 1e-6 * N);
    sfft_destroy(gpu_plan);
    sfft_destroy(cpu_plan);
    cudaFree(d_x);
    cudaFree(d_freqs);
    cudaFree(d_values);
  }

  { /* type-3 NUFFT: coordinates, strengths and outputs on the device */
    enum { NSRC = 1000, NTRG = 800 };
    static double x[NSRC], s[NTRG];
    static double complex f[NSRC], F[NTRG], expected[NTRG];
    for (int i = 0; i < NSRC; ++i) x[i] = 5 * sin(1.1 * i), f[i] = cos(0.3 * i) + I;
    for (int k = 0; k < NTRG; ++k) s[k] = 40 * cos(0.7 * k);
    void *d_x = to_device(x, sizeof x), *d_s = to_device(s, sizeof s), *d_f = to_device(f, sizeof f), *d_F;
    CUDA_CHECK(cudaMalloc(&d_F, sizeof F));
    nufft3_plan gpu_plan, cpu_plan;
    SFFT_CHECK(nufft3_create(&gpu_plan, 1, SFFT_COMPLEX128, -1, 1e-10, NULL));
    SFFT_CHECK(nufft3_setpts(gpu_plan, NSRC, d_x, NULL, NULL, NTRG, d_s, NULL, NULL)); /* device points: CUDA plan */
    SFFT_CHECK(nufft3_exec(gpu_plan, d_f, d_F));
    CUDA_CHECK(cudaMemcpy(F, d_F, sizeof F, cudaMemcpyDeviceToHost));
    SFFT_CHECK(nufft3_create(&cpu_plan, 1, SFFT_COMPLEX128, -1, 1e-10, &cpu));
    SFFT_CHECK(nufft3_setpts(cpu_plan, NSRC, x, NULL, NULL, NTRG, s, NULL, NULL));
    SFFT_CHECK(nufft3_exec(cpu_plan, f, expected));
    double norm = 0;
    for (int k = 0; k < NTRG; ++k) norm = fmax(norm, cabs(expected[k]));
    failures += report("nufft3 1-D, 1000 -> 800 points", max_diff(F, expected, NTRG), 1e-8 * norm);
    nufft3_destroy(gpu_plan);
    nufft3_destroy(cpu_plan);
    cudaFree(d_x);
    cudaFree(d_s);
    cudaFree(d_f);
    cudaFree(d_F);
  }

  { /* sparse-input 2-D FFT: COO arrays and the spectrum on the device */
    enum { ROWS = 128, COLS = 96, HALF = COLS / 2 + 1, NNZ = 3 };
    const int64_t rows[NNZ] = {0, 17, 127}, cols[NNZ] = {5, 0, 95};
    static double complex Y[ROWS * HALF], expected[ROWS * HALF];
    void *d_rows = to_device(rows, sizeof rows), *d_cols = to_device(cols, sizeof cols), *d_Y;
    CUDA_CHECK(cudaMalloc(&d_Y, sizeof Y));
    spfft2d_plan gpu_plan, cpu_plan;
    SFFT_CHECK(spfft2d_create(&gpu_plan, ROWS, COLS, NNZ, d_rows, d_cols, NULL, SFFT_COMPLEX128, NULL)); /* 0/1 */
    SFFT_CHECK(spfft2d_exec(gpu_plan, d_Y));
    CUDA_CHECK(cudaMemcpy(Y, d_Y, sizeof Y, cudaMemcpyDeviceToHost));
    SFFT_CHECK(spfft2d_create(&cpu_plan, ROWS, COLS, NNZ, rows, cols, NULL, SFFT_COMPLEX128, &cpu));
    SFFT_CHECK(spfft2d_exec(cpu_plan, expected));
    failures += report("spfft2d 128x96, 3 nonzeros", max_diff(Y, expected, ROWS * HALF), 1e-12);
    spfft2d_destroy(gpu_plan);
    spfft2d_destroy(cpu_plan);
    cudaFree(d_rows);
    cudaFree(d_cols);
    cudaFree(d_Y);
  }
  return failures ? 1 : 0;
}
