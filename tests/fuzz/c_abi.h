/* SPDX-License-Identifier: Apache-2.0 */
/* The fuzzers pass enum arguments as a C caller may: any int. In C an enum object holds any value of its
   underlying integer type, so these C shims take int and forward it; doing the same from C++ would itself
   be undefined behaviour (and UBSan would flag the harness, not the library). */
#ifndef SFFT_FUZZ_C_ABI_H
#define SFFT_FUZZ_C_ABI_H

#include "sfft/sfft.h"

#ifdef __cplusplus
extern "C" {
#endif

#if SFFT_TEST_FAMILY_shift
sfft_status fuzz_fftshift_nd(void *out, const void *in, int ndim, const int64_t *shape, uint32_t axes_mask, int dtype,
                             const sfft_options *opts);
sfft_status fuzz_ifftshift_nd(void *out, const void *in, int ndim, const int64_t *shape, uint32_t axes_mask, int dtype,
                              const sfft_options *opts);
#endif
#if SFFT_TEST_FAMILY_nufft3
sfft_status fuzz_nufft3_create(nufft3_plan *plan, int dim, int dtype, int sign, double tol, const sfft_options *opts);
#endif
#if SFFT_TEST_FAMILY_spfft2d
sfft_status fuzz_spfft2d_create(spfft2d_plan *plan, uint64_t rows, uint64_t cols, uint64_t nnz, const int64_t *row_idx,
                                const int64_t *col_idx, const double *values, int out_dtype, const sfft_options *opts);
sfft_status fuzz_spfft2d_create_from_mtx(spfft2d_plan *plan, const char *path, int binary, int out_dtype,
                                         const sfft_options *opts);
sfft_status fuzz_spfft2d_set_method(spfft2d_plan plan, int method);
#endif
#if SFFT_TEST_FAMILY_sparse
sfft_status fuzz_sfft_create_ex(sfft_plan *plan, uint64_t n, uint64_t k, int dtype, const sfft_options *opts,
                                const sfft_sparse_options *knobs);
#endif

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SFFT_FUZZ_C_ABI_H */
