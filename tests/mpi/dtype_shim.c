/* SPDX-License-Identifier: Apache-2.0 */
/* C shims for mpi_test: forward an int to the sfft_dtype parameter, as any C (or Fortran) caller may. Passing an
 * out-of-range enumerator from C++ would itself be undefined, so the out-of-range cases go through here. */
#include "sfft/sfft_mpi.h"

sfft_status mpi_test_create_with_dtype(sfft_mpi_plan *plan, uint64_t n, uint64_t k, uint64_t local_offset,
                                       uint64_t local_length, int dtype, const sfft_options *opts, MPI_Comm comm) {
  return sfft_mpi_create(plan, n, k, local_offset, local_length, (sfft_dtype)dtype, opts, NULL, comm);
}

sfft_status mpi_test_fftshift_with_dtype(void *out, const void *in, int ndim, const int64_t *shape, int64_t local_rows,
                                         int64_t local_start, int dtype, MPI_Comm comm) {
  return sfft_mpi_fftshift(out, in, ndim, shape, local_rows, local_start, 0, (sfft_dtype)dtype, NULL, comm);
}
