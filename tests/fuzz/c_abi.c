/* SPDX-License-Identifier: Apache-2.0 */
/* C shims of c_abi.h: forward an int to the enum parameter, as any C caller may. */
#include "c_abi.h"

#if SFFT_TEST_FAMILY_shift
sfft_status fuzz_fftshift_nd(void *out, const void *in, int ndim, const int64_t *shape, uint32_t axes_mask, int dtype,
                             const sfft_options *opts) {
  return fftshift_nd(out, in, ndim, shape, axes_mask, (sfft_dtype)dtype, opts);
}
sfft_status fuzz_ifftshift_nd(void *out, const void *in, int ndim, const int64_t *shape, uint32_t axes_mask, int dtype,
                              const sfft_options *opts) {
  return ifftshift_nd(out, in, ndim, shape, axes_mask, (sfft_dtype)dtype, opts);
}
#endif

#if SFFT_TEST_FAMILY_nufft3
sfft_status fuzz_nufft3_create(nufft3_plan *plan, int dim, int dtype, int sign, double tol, const sfft_options *opts) {
  return nufft3_create(plan, dim, (sfft_dtype)dtype, sign, tol, opts);
}
#endif

#if SFFT_TEST_FAMILY_spfft2d
sfft_status fuzz_spfft2d_create(spfft2d_plan *plan, uint64_t rows, uint64_t cols, uint64_t nnz, const int64_t *row_idx,
                                const int64_t *col_idx, const double *values, int out_dtype, const sfft_options *opts) {
  return spfft2d_create(plan, rows, cols, nnz, row_idx, col_idx, values, (sfft_dtype)out_dtype, opts);
}
sfft_status fuzz_spfft2d_create_from_mtx(spfft2d_plan *plan, const char *path, int binary, int out_dtype,
                                         const sfft_options *opts) {
  return spfft2d_create_from_mtx(plan, path, binary, (sfft_dtype)out_dtype, opts);
}
sfft_status fuzz_spfft2d_set_method(spfft2d_plan plan, int method) {
  return spfft2d_set_method(plan, (spfft2d_method)method);
}
#endif

#if SFFT_TEST_FAMILY_sparse
sfft_status fuzz_sfft_create_ex(sfft_plan *plan, uint64_t n, uint64_t k, int dtype, const sfft_options *opts,
                                const sfft_sparse_options *knobs) {
  return sfft_create_ex(plan, n, k, (sfft_dtype)dtype, opts, knobs);
}
#endif
