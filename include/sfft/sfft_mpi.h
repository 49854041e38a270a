/* SPDX-License-Identifier: Apache-2.0
 *
 * sfft_mpi.h: libsfft_mpi, the distributed companion of libsfft (FFTW-MPI convention).
 *
 * A signal too large for one process is block-distributed over the ranks of an MPI communicator: rank r
 * holds the samples [local_offset_r, local_offset_r + local_length_r), the blocks in rank order and tiling
 * [0, n) (a block may be empty). sfft_mpi_local_size proposes the even split.
 *
 * Every function taking a communicator is collective: every rank of comm calls it, with the same global
 * arguments (n, k, dtype, knobs, seed, shape, ...). The library checks that they agree (one small
 * collective of a descriptor) and that the blocks tile the signal, so a mismatch or a bad argument on any
 * rank gives an error on every rank, never a hang: the rank at fault reports its own detail, the others name
 * that rank. What no collective can reach: a plan handle that is not live, or comm itself unusable
 * (MPI_COMM_NULL, an inter-communicator, MPI not initialised) is reported on the ranks that pass it only.
 *
 * The caller initialises MPI (MPI_Init or MPI_Init_thread) before the first call and finalises it after
 * destroying every plan; libsfft itself never depends on MPI. Plans duplicate comm (MPI_Comm_dup) and
 * set MPI_ERRORS_RETURN on the duplicate, so an MPI failure inside the library comes back as a status.
 * Errors: the status codes of sfft.h; the detail is in sfft_mpi_last_error() (thread-local, like
 * sfft_last_error). Handles are used by one thread at a time.
 *
 * Backends: the plan's backend follows sfft.h's rule for calls that receive no arrays (CPU or CUDA as asked;
 * AUTO: CUDA when opts->device is a usable GPU), and must come out the same on every rank. GPU ranks (one GPU
 * per rank, or ranks sharing one) fold their block on the device and sum the folds over MPI through pinned
 * host memory (host staging; any MPI). The shift takes host memory.
 */
#ifndef SFFT_SFFT_MPI_H
#define SFFT_SFFT_MPI_H

#include <mpi.h>

#include "sfft/sfft.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Exec's root argument: every rank receives the coefficients. */
#define SFFT_MPI_ALL_RANKS (-1)

/* The even split of n samples (or rows) over the ranks of comm: the first n % size ranks get n / size + 1,
   the others n / size, in rank order. Local (reads comm's size and rank only). */
SFFT_API sfft_status sfft_mpi_local_size(uint64_t n, MPI_Comm comm, uint64_t *local_offset, uint64_t *local_length);

/* ---------------------------------- distributed sparse FFT ---------------------------------- */

typedef struct sfft_mpi_plan_s *sfft_mpi_plan;

/* Collective. The plan of sfft_create_ex(n, k, dtype, opts, knobs) for a signal distributed over comm, this
   rank holding [local_offset, local_offset + local_length). Every rank draws the same permutations from
   opts->seed, so the result is that of the single-process plan with the same seed on the gathered signal,
   up to the rounding of the summed partial folds (each rank sums its taps, then the ranks' sums are added:
   a different order of the same additions; see docs/distributed.md). As for sfft_exec_batch: the values
   agree up to rounding, except where rounding flips a decoding decision (EXACT's peeling), which can move a
   value by up to the plan's accuracy, as sfft_exec's result moves when its input changes by one ulp
   (measured with AUTO, k = 1000: up to 1.1e-4 of the largest |X| in complex64, 3.4e-10 in complex128).
   Hence every coefficient whose magnitude exceeds the k-th largest by more than that accuracy is in both
   results with values within it, and only coefficients within it of each other (near-ties, or near the k-th
   magnitude) may come in another order or be exchanged at the cut-off. EXACT, ROBUST and AUTO; complex64
   and complex128. */
SFFT_API sfft_status sfft_mpi_create(sfft_mpi_plan *plan, uint64_t n, uint64_t k, uint64_t local_offset,
                                     uint64_t local_length, sfft_dtype dtype, const sfft_options *opts,
                                     const sfft_sparse_options *knobs, MPI_Comm comm);

/* Collective. x_local: this rank's local_length samples (NULL allowed when local_length = 0), host memory, or
   device/managed memory for a CUDA plan; freqs and values are host memory. One
   reduction of the folded bucket sums (on the GPUs, through CUDA IPC, when the ranks' CUDA plans are on one
   node and their GPUs can read each other's memory; through host memory and MPI otherwise; plus one of the
   comb samples when ROBUST's comb pre-pass is on), then every rank decodes the same buckets. root = SFFT_MPI_ALL_RANKS: every rank writes the coefficients
   (rank 0's, broadcast: the same bits everywhere) as sfft_exec does, *count being each rank's capacity in and number written out;
   root = r: only rank r reads *count and writes freqs, values and *count; the others may pass NULL for all
   three. root must be the same on every rank. */
SFFT_API sfft_status sfft_mpi_exec(sfft_mpi_plan plan, const void *x_local, uint64_t *freqs, void *values,
                                   uint64_t *count, int root);

/* Local: frees the plan and its duplicate communicator (MPI_Comm_free; call it before MPI_Finalize).
   NULL is a no-op. */
SFFT_API sfft_status sfft_mpi_destroy(sfft_mpi_plan plan);

/* ---------------------------------- distributed fftshift ---------------------------------- */

/* Collective. fftshift_nd / ifftshift_nd of a C-order array of global extents shape[0..ndim-1], distributed
   along its first axis (the FFTW-MPI slab layout): this rank holds the rows [local_start, local_start +
   local_rows) of axis 0, each row shape[1] * ... * shape[ndim-1] elements, the slabs in rank order and tiling
   [0, shape[0]). Output in the same distribution. axes_mask as in fftshift_nd (0 = every axis). When axis 0
   is shifted, the rows travel by point-to-point exchanges with the (at most two ranks per destination
   range) ranks that own their destinations; other axes are shifted locally by fftshift_nd. out == in
   shifts in place (a local_rows slab of scratch is allocated for the exchange); any other overlap is an
   error. Host memory. */
SFFT_API sfft_status sfft_mpi_fftshift(void *out, const void *in, int ndim, const int64_t *shape, int64_t local_rows,
                                       int64_t local_start, uint32_t axes_mask, sfft_dtype dtype,
                                       const sfft_options *opts, MPI_Comm comm);
SFFT_API sfft_status sfft_mpi_ifftshift(void *out, const void *in, int ndim, const int64_t *shape, int64_t local_rows,
                                        int64_t local_start, uint32_t axes_mask, sfft_dtype dtype,
                                        const sfft_options *opts, MPI_Comm comm);

/* ---------------------------------- Fortran handles ---------------------------------- */

/* The same calls taking the communicator's Fortran integer handle (MPI_Comm_c2f), for bind(C) interfaces. */
SFFT_API sfft_status sfft_mpi_local_size_f(uint64_t n, MPI_Fint comm, uint64_t *local_offset, uint64_t *local_length);
SFFT_API sfft_status sfft_mpi_create_f(sfft_mpi_plan *plan, uint64_t n, uint64_t k, uint64_t local_offset,
                                       uint64_t local_length, sfft_dtype dtype, const sfft_options *opts,
                                       const sfft_sparse_options *knobs, MPI_Fint comm);
SFFT_API sfft_status sfft_mpi_fftshift_f(void *out, const void *in, int ndim, const int64_t *shape, int64_t local_rows,
                                         int64_t local_start, uint32_t axes_mask, sfft_dtype dtype,
                                         const sfft_options *opts, MPI_Fint comm);
SFFT_API sfft_status sfft_mpi_ifftshift_f(void *out, const void *in, int ndim, const int64_t *shape,
                                          int64_t local_rows, int64_t local_start, uint32_t axes_mask,
                                          sfft_dtype dtype, const sfft_options *opts, MPI_Fint comm);

/* Detail of the last error of this thread's libsfft_mpi call ("" after a success). */
SFFT_API const char *sfft_mpi_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* SFFT_SFFT_MPI_H */
