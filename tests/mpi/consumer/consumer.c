/* SPDX-License-Identifier: Apache-2.0
 * A C99 MPI program using the installed libsfft_mpi as users do: each rank builds its own block of a
 * two-tone signal, the distributed sparse FFT finds both tones on every rank, and a distributed fftshift
 * of 0..n0-1 gives NumPy's order. Exit status 0 on every rank on success. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <sfft/sfft_mpi.h>

static const double kPi = 3.14159265358979323846; /* M_PI is not C99 */

static int fail(const char *what, int rank) {
  fprintf(stderr, "rank %d: %s: %s\n", rank, what, sfft_mpi_last_error());
  return 1;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, bad = 0, any = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const uint64_t n = 4096, k = 2;
  uint64_t off = 0, len = 0;
  if (sfft_mpi_local_size(n, MPI_COMM_WORLD, &off, &len) != SFFT_SUCCESS) bad = fail("local_size", rank);
  /* X[100] = 1, X[777] = 0.5 (x = inverse DFT / n). */
  double complex *x = malloc((len ? len : 1) * sizeof *x);
  for (uint64_t i = 0; i < len; ++i) {
    const double t = (double)(off + i);
    x[i] = (cexp(2 * kPi * I * 100 * t / n) + 0.5 * cexp(2 * kPi * I * 777 * t / n)) / n;
  }
  sfft_options opts;
  sfft_options_init(&opts);
  opts.backend = SFFT_BACKEND_CPU;
  opts.threads = 1;
  opts.seed = 5;
  sfft_mpi_plan plan = NULL;
  uint64_t freqs[2] = {0, 0}, count = k;
  double complex values[2] = {0, 0};
  if (!bad && sfft_mpi_create(&plan, n, k, off, len, SFFT_COMPLEX128, &opts, NULL, MPI_COMM_WORLD) != SFFT_SUCCESS)
    bad = fail("create", rank);
  if (!bad && sfft_mpi_exec(plan, x, freqs, values, &count, SFFT_MPI_ALL_RANKS) != SFFT_SUCCESS)
    bad = fail("exec", rank);
  sfft_mpi_destroy(plan);
  if (!bad && !(count == 2 && freqs[0] == 100 && freqs[1] == 777 && cabs(values[0] - 1) < 1e-9 &&
                cabs(values[1] - 0.5) < 1e-9)) {
    fprintf(stderr, "rank %d: found %llu: %llu %llu\n", rank, (unsigned long long)count,
            (unsigned long long)freqs[0], (unsigned long long)freqs[1]);
    bad = 1;
  }
  /* fftshift of the rows 0..9 split evenly: row i lands at (i + 5) % 10. */
  const int64_t shape[1] = {10};
  uint64_t row0 = 0, rows = 0;
  sfft_mpi_local_size(10, MPI_COMM_WORLD, &row0, &rows);
  double a[10];
  for (uint64_t i = 0; i < rows; ++i) a[i] = (double)(row0 + i);
  if (!bad && sfft_mpi_fftshift(a, a, 1, shape, (int64_t)rows, (int64_t)row0, 0, SFFT_FLOAT64, NULL,
                                MPI_COMM_WORLD) != SFFT_SUCCESS)
    bad = fail("fftshift", rank);
  for (uint64_t i = 0; !bad && i < rows; ++i)
    if (a[i] != (double)((row0 + i + 5) % 10)) bad = 1;
  free(x);
  MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0 && !any) printf("libsfft_mpi consumer: tones found on every rank, fftshift in order\n");
  MPI_Finalize();
  return any;
}
