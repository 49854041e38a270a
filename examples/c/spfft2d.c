/* SPDX-License-Identifier: Apache-2.0 */
/* Sparse-input 2-D FFT: the real-to-complex 2-D DFT of a matrix given by its nonzeros (COO), without building
   the dense grid. The output is FFTW's r2c half spectrum, rows x (cols/2 + 1). Build: see Makefile. */
#include <sfft/sfft.h>
#include <complex.h>
#include <math.h>
#include <stdio.h>

enum { ROWS = 64, COLS = 48, HALF = COLS / 2 + 1, NNZ = 4 };

int main(void) {
  const int64_t row_idx[NNZ] = {0, 5, 5, 63}; /* 0-based coordinates */
  const int64_t col_idx[NNZ] = {0, 7, 40, 47};
  const double values[NNZ] = {1.0, 2.5, -1.0, 0.25}; /* NULL instead: a 0/1 pattern */

  spfft2d_plan plan;
  if (spfft2d_create(&plan, ROWS, COLS, NNZ, row_idx, col_idx, values, SFFT_COMPLEX128, NULL) != SFFT_SUCCESS) {
    fprintf(stderr, "spfft2d_create: %s\n", sfft_last_error());
    return 1;
  }
  static double complex Y[ROWS][HALF];
  if (spfft2d_exec(plan, Y) != SFFT_SUCCESS) {
    fprintf(stderr, "spfft2d_exec: %s\n", sfft_last_error());
    return 1;
  }
  spfft2d_destroy(plan);

  /* Y[u][v] = sum over nonzeros w exp(-2 pi i (r u / ROWS + c v / COLS)). */
  const double pi = acos(-1.0);
  double worst = 0;
  for (int u = 0; u < ROWS; ++u)
    for (int v = 0; v < HALF; ++v) {
      double complex exact = 0;
      for (int e = 0; e < NNZ; ++e)
        exact += values[e] * cexp(-2 * pi * I * ((double)row_idx[e] * u / ROWS + (double)col_idx[e] * v / COLS));
      worst = fmax(worst, cabs(Y[u][v] - exact));
    }
  const int ok = worst <= 1e-12;
  printf("spfft2d: %dx%d matrix, %d nonzeros: max error of the %dx%d half spectrum vs direct DFT %.1e: %s\n", ROWS,
         COLS, NNZ, ROWS, HALF, worst, ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
