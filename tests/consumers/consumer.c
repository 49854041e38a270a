/* SPDX-License-Identifier: Apache-2.0 */
/* A C99 user of the installed library (pkg-config): fftshift of a 3x4 int-valued float array. */
#include <sfft/sfft.h>
#include <stdio.h>

int main(void) {
  float in[12], out[12];
  int64_t shape[2] = {3, 4};
  /* numpy: fftshift(arange(12).reshape(3,4)) = [[10,11,8,9],[2,3,0,1],[6,7,4,5]] */
  const float want[12] = {10, 11, 8, 9, 2, 3, 0, 1, 6, 7, 4, 5};
  sfft_options opts;
  int i;
  for (i = 0; i < 12; ++i) in[i] = (float)i;
  sfft_options_init(&opts);
  opts.backend = SFFT_BACKEND_CPU;
  if (fftshift_nd(out, in, 2, shape, 0u, SFFT_FLOAT32, &opts) != SFFT_SUCCESS) {
    fprintf(stderr, "fftshift_nd failed: %s\n", sfft_last_error());
    return 1;
  }
  for (i = 0; i < 12; ++i)
    if (out[i] != want[i]) {
      fprintf(stderr, "out[%d] = %g, want %g\n", i, out[i], want[i]);
      return 1;
    }
  if (fftshift_nd(out, in, 0, shape, 0u, SFFT_FLOAT32, NULL) != SFFT_ERROR_INVALID_ARGUMENT) return 1;
  printf("C99 consumer OK (sfft %s): %s\n", sfft_version_string(), sfft_last_error());
  return 0;
}
