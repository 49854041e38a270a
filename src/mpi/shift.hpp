// SPDX-License-Identifier: Apache-2.0
// The distributed fftshift / ifftshift of an N-d array in the slab layout (first axis block-distributed):
// rows travel point-to-point to the ranks owning their destinations, the other axes shift locally through
// libsfft's fftshift_nd.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>

#include "sfft/sfft.h"

namespace sfft::mpi {

// Collective over comm. inverse: ifftshift. Arguments as sfft_mpi_fftshift (sfft_mpi.h).
void shift_slabs(void *out, const void *in, int ndim, const int64_t *shape, int64_t local_rows, int64_t local_start,
                 uint32_t axes_mask, const sfft_dtype &dtype, const sfft_options *opts, MPI_Comm comm, bool inverse);

}  // namespace sfft::mpi
