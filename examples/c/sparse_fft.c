/* SPDX-License-Identifier: Apache-2.0 */
/* Sparse FFT: the k largest DFT coefficients of a long signal made of a few tones, in sublinear time.
   X[f] = sum_t x[t] exp(-2 pi i f t / n), FFTW's forward sign and scale. Build: see Makefile. */
#include <sfft/sfft.h>
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define N (1u << 16)
#define K 3

int main(void) {
  const double pi = acos(-1.0);
  const uint64_t tones[K] = {17, 4242, 60000};
  const double complex amplitude[K] = {1.0, 0.5 - 2.0 * I, -3.0 * I};

  /* x[t] = sum_j a_j exp(2 pi i f_j t / n), so X[f_j] = n a_j and X is zero elsewhere. */
  double complex *x = malloc(N * sizeof *x);
  if (!x) return 1;
  for (uint64_t t = 0; t < N; ++t) {
    x[t] = 0;
    for (int j = 0; j < K; ++j) x[t] += amplitude[j] * cexp(2 * pi * I * (double)((tones[j] * t) % N) / N);
  }

  /* The plan does all the setup (filters, FFTW plans, workspace); exec is cheap and can run many times. */
  sfft_options opts;
  sfft_options_init(&opts);
  opts.seed = 42; /* the algorithm is randomised: the same seed gives the same plan */
  sfft_plan plan;
  if (sfft_create(&plan, N, K, SFFT_COMPLEX128, &opts) != SFFT_SUCCESS) {
    fprintf(stderr, "sfft_create: %s\n", sfft_last_error());
    return 1;
  }
  uint64_t freqs[K];
  double complex values[K];
  uint64_t count = K; /* capacity in, number found out */
  if (sfft_exec(plan, x, freqs, values, &count) != SFFT_SUCCESS) {
    fprintf(stderr, "sfft_exec: %s\n", sfft_last_error());
    return 1;
  }
  sfft_destroy(plan);
  free(x);

  /* Coefficients come ordered by decreasing |X|. */
  int found = 0;
  for (uint64_t i = 0; i < count; ++i)
    for (int j = 0; j < K; ++j)
      if (freqs[i] == tones[j] && cabs(values[i] - N * amplitude[j]) <= 1e-9 * N * cabs(amplitude[j])) ++found;
  printf("sparse FFT: n = %u, k = %d: found %d of %d tones with their values", N, K, found, K);
  for (uint64_t i = 0; i < count; ++i) printf(" X[%llu]", (unsigned long long)freqs[i]);
  printf(": %s\n", found == K ? "ok" : "WRONG");
  return found == K ? 0 : 1;
}
