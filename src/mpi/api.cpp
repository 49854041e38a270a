// SPDX-License-Identifier: Apache-2.0
// C entry points of libsfft_mpi (sfft/sfft_mpi.h): argument checks that need no other rank, then one call
// into the distributed plan or shift. The error boundary is capi/boundary.hpp's, with this library's own
// thread-local detail (sfft_mpi_last_error).
#include <memory>
#include <string>

#include "boundary.hpp"
#include "mpi/collective.hpp"
#include "mpi/shift.hpp"
#include "mpi/sparse_plan.hpp"
#include "sfft/sfft_mpi.h"

namespace {

sfft::capi::HandleRegistry<sfft_mpi_plan, sfft::mpi::SparsePlan> &registry() {
  static sfft::capi::HandleRegistry<sfft_mpi_plan, sfft::mpi::SparsePlan> r;
  return r;
}

}  // namespace

extern "C" {

SFFT_API sfft_status sfft_mpi_local_size(uint64_t n, MPI_Comm comm, uint64_t *local_offset, uint64_t *local_length) {
  return sfft::capi::guarded("sfft_mpi_local_size", [&] {
    sfft::require(local_offset != nullptr && local_length != nullptr, "local_offset or local_length is NULL");
    sfft::mpi::require_usable(comm, "comm");
    int rank = 0, size = 1;
    sfft::mpi::check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
    sfft::mpi::check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
    const uint64_t base = n / static_cast<uint64_t>(size), extra = n % static_cast<uint64_t>(size);
    const uint64_t r = static_cast<uint64_t>(rank);
    *local_length = base + (r < extra ? 1 : 0);
    *local_offset = r * base + (r < extra ? r : extra);
  });
}

SFFT_API sfft_status sfft_mpi_create(sfft_mpi_plan *plan, uint64_t n, uint64_t k, uint64_t local_offset,
                                     uint64_t local_length, sfft_dtype dtype, const sfft_options *opts,
                                     const sfft_sparse_options *knobs, MPI_Comm comm) {
  return sfft::capi::guarded("sfft_mpi_create", [&] {
    auto checks = [&] { sfft::require(plan != nullptr, "plan (the output handle pointer) is NULL"); };
    *plan = registry().add(
        std::make_unique<sfft::mpi::SparsePlan>(n, k, local_offset, local_length, dtype, opts, knobs, comm, checks));
  });
}

SFFT_API sfft_status sfft_mpi_exec(sfft_mpi_plan plan, const void *x_local, uint64_t *freqs, void *values,
                                   uint64_t *count, int root) {
  return sfft::capi::guarded("sfft_mpi_exec",
                             [&] { registry().acquire(plan, "plan")->exec(x_local, freqs, values, count, root); });
}

SFFT_API sfft_status sfft_mpi_destroy(sfft_mpi_plan plan) {
  return sfft::capi::guarded("sfft_mpi_destroy", [&] { registry().destroy(plan, "plan"); });
}

SFFT_API sfft_status sfft_mpi_fftshift(void *out, const void *in, int ndim, const int64_t *shape, int64_t local_rows,
                                       int64_t local_start, uint32_t axes_mask, sfft_dtype dtype,
                                       const sfft_options *opts, MPI_Comm comm) {
  return sfft::capi::guarded("sfft_mpi_fftshift", [&] {
    sfft::mpi::shift_slabs(out, in, ndim, shape, local_rows, local_start, axes_mask, dtype, opts, comm, false);
  });
}

SFFT_API sfft_status sfft_mpi_ifftshift(void *out, const void *in, int ndim, const int64_t *shape, int64_t local_rows,
                                        int64_t local_start, uint32_t axes_mask, sfft_dtype dtype,
                                        const sfft_options *opts, MPI_Comm comm) {
  return sfft::capi::guarded("sfft_mpi_ifftshift", [&] {
    sfft::mpi::shift_slabs(out, in, ndim, shape, local_rows, local_start, axes_mask, dtype, opts, comm, true);
  });
}

SFFT_API sfft_status sfft_mpi_local_size_f(uint64_t n, MPI_Fint comm, uint64_t *local_offset, uint64_t *local_length) {
  return sfft_mpi_local_size(n, MPI_Comm_f2c(comm), local_offset, local_length);
}

SFFT_API sfft_status sfft_mpi_create_f(sfft_mpi_plan *plan, uint64_t n, uint64_t k, uint64_t local_offset,
                                       uint64_t local_length, sfft_dtype dtype, const sfft_options *opts,
                                       const sfft_sparse_options *knobs, MPI_Fint comm) {
  return sfft_mpi_create(plan, n, k, local_offset, local_length, dtype, opts, knobs, MPI_Comm_f2c(comm));
}

SFFT_API sfft_status sfft_mpi_fftshift_f(void *out, const void *in, int ndim, const int64_t *shape, int64_t local_rows,
                                         int64_t local_start, uint32_t axes_mask, sfft_dtype dtype,
                                         const sfft_options *opts, MPI_Fint comm) {
  return sfft_mpi_fftshift(out, in, ndim, shape, local_rows, local_start, axes_mask, dtype, opts, MPI_Comm_f2c(comm));
}

SFFT_API sfft_status sfft_mpi_ifftshift_f(void *out, const void *in, int ndim, const int64_t *shape, int64_t local_rows,
                                          int64_t local_start, uint32_t axes_mask, sfft_dtype dtype,
                                          const sfft_options *opts, MPI_Fint comm) {
  return sfft_mpi_ifftshift(out, in, ndim, shape, local_rows, local_start, axes_mask, dtype, opts, MPI_Comm_f2c(comm));
}

SFFT_API const char *sfft_mpi_last_error(void) { return sfft::capi::last_error_message(); }

}  // extern "C"
