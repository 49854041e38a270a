/* SPDX-License-Identifier: Apache-2.0 */
/* fftshift_nd / ifftshift_nd: move the zero frequency of a 2-D spectrum to the centre and back (NumPy's
   np.fft.fftshift / np.fft.ifftshift). Build: see Makefile. */
#include <sfft/sfft.h>
#include <complex.h>
#include <stdio.h>

enum { ROWS = 4, COLS = 5 };

int main(void) {
  float complex in[ROWS][COLS], out[ROWS][COLS], back[ROWS][COLS];
  for (int r = 0; r < ROWS; ++r)
    for (int c = 0; c < COLS; ++c) in[r][c] = (float)(10 * r + c) + (float)r * I;

  /* C-order shape; axes_mask 0 = shift every axis; opts NULL = defaults (CPU for host memory). */
  const int64_t shape[2] = {ROWS, COLS};
  if (fftshift_nd(out, in, 2, shape, 0, SFFT_COMPLEX64, NULL) != SFFT_SUCCESS ||
      ifftshift_nd(back, out, 2, shape, 0, SFFT_COMPLEX64, NULL) != SFFT_SUCCESS) {
    fprintf(stderr, "shift failed: %s\n", sfft_last_error());
    return 1;
  }

  /* Along an axis of extent n, fftshift moves element i to (i + n/2) % n. */
  int wrong = 0;
  for (int r = 0; r < ROWS; ++r)
    for (int c = 0; c < COLS; ++c) {
      wrong += out[(r + ROWS / 2) % ROWS][(c + COLS / 2) % COLS] != in[r][c];
      wrong += back[r][c] != in[r][c];
    }
  printf("shift: fftshift of a %dx%d complex64 array puts in[0][0] at out[%d][%d]; ifftshift restores it: %s\n", ROWS,
         COLS, ROWS / 2, COLS / 2, wrong ? "WRONG" : "ok");
  return wrong ? 1 : 0;
}
