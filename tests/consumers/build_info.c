/* SPDX-License-Identifier: Apache-2.0 */
/* A C99 user asking what the installed library provides. With EXPECT_NO_CUDA_LIBS=1 (the CUDA libraries
   made unfindable) a CUDA build must still load, run the CPU backend, report why CUDA is unavailable and
   refuse the CUDA backend with SFFT_ERROR_NO_DEVICE naming what is missing. */
#include <sfft/sfft.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
  sfft_build_info info;
  float in[5] = {0, 1, 2, 3, 4}, out[5];
  int64_t shape[1] = {5};
  sfft_options opts;
  const char *no_cuda_libs = getenv("EXPECT_NO_CUDA_LIBS");
  const int expect_no_cuda_libs = no_cuda_libs != NULL && strcmp(no_cuda_libs, "1") == 0;
  sfft_status s;

  if (sfft_get_build_info(&info, sizeof info) != SFFT_SUCCESS) {
    fprintf(stderr, "sfft_get_build_info: %s\n", sfft_last_error());
    return 1;
  }
  printf("sfft %d: families 0x%x, %s, CUDA compiled %d loaded %d (%s)\n", info.version, info.families, info.fft_library,
         info.cuda_compiled, info.cuda_loaded, info.cuda_unavailable);
  if (info.version != SFFT_VERSION_NUMBER || (info.families & SFFT_FAMILY_SHIFT) == 0) return 1;
  if (strncmp(info.fft_library, "fftw-", 5) != 0) return 1;
  if (expect_no_cuda_libs && info.cuda_loaded) {
    fprintf(stderr, "the CUDA backend loaded although its libraries were made unfindable\n");
    return 1;
  }
  if (info.cuda_loaded == 0 && info.cuda_unavailable[0] == '\0') return 1;

  sfft_options_init(&opts);
  if (fftshift_nd(out, in, 1, shape, 0u, SFFT_FLOAT32, &opts) != SFFT_SUCCESS || out[0] != 3 || out[2] != 0) {
    fprintf(stderr, "CPU fftshift failed: %s\n", sfft_last_error());
    return 1;
  }
  opts.backend = SFFT_BACKEND_CUDA;
  s = fftshift_nd(out, in, 1, shape, 0u, SFFT_FLOAT32, &opts);
  if (!info.cuda_loaded) {
    const sfft_status want = info.cuda_compiled ? SFFT_ERROR_NO_DEVICE : SFFT_ERROR_UNSUPPORTED;
    if (s != want || strstr(sfft_last_error(), info.cuda_compiled ? "libcud" : "without CUDA") == NULL) {
      fprintf(stderr, "CUDA backend without its libraries: status %d, \"%s\"\n", (int)s, sfft_last_error());
      return 1;
    }
  }
  printf("build-info consumer OK: %s\n", s == SFFT_SUCCESS ? "CUDA ran" : sfft_last_error());
  return 0;
}
