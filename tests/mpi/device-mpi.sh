#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The MPI part of the GPU machine's check: libsfft_mpi's tests on 2 ranks sharing GPU 0 (host staging), then
# the scaling benchmark on 1..2 CPU ranks and on 1..2 GPU ranks, and with SFFT_MPI_SANITIZE=1 the GPU tests under
# compute-sanitizer. Usage: tests/mpi/device-mpi.sh BUILD_DIR [OPENMPI_ROOT]
# Uses the machine's own mpiexec when it has one, else the OpenMPI staged by tests/mpi/stage-openmpi.sh.
set -euo pipefail
build=$(cd "$1" && pwd)
source "$(dirname "$0")/mpiexec-env.sh" "$build" "${2:-}"
# One host, shared memory only: no network transports to probe on a machine without them.
mpi=(mpiexec --oversubscribe --mca btl self,vader --mca pml ob1 -x LD_LIBRARY_PATH -x OMP_NUM_THREADS=4)
echo "== mpiexec: $(command -v mpiexec)"
"${mpi[@]}" -n 2 "$build/tests/mpi_test"
"${mpi[@]}" -n 3 "$build/tests/mpi_test" --gtest_filter='-SparseMpiGpu.*'
"${mpi[@]}" -n 2 "$build/benchmarks/bench_mpi" --log2n-rank 24 --log2n-strong 25 --k 1000 --repeats 7
# GPU ranks: both share GPU 0 here (device = rank % visible GPUs), device-resident samples.
"${mpi[@]}" -n 2 "$build/benchmarks/bench_mpi" --gpu --log2n-rank 26 --log2n-strong 27 --k 1000 --repeats 7
# SFFT_MPI_SANITIZE=1: each rank's GPU tests under compute-sanitizer memcheck, then racecheck.
if [[ "${SFFT_MPI_SANITIZE:-0}" == 1 ]]; then
  for tool in memcheck racecheck; do
    "${mpi[@]}" -n 2 compute-sanitizer --tool "$tool" --error-exitcode 1 "$build/tests/mpi_test" \
      --gtest_filter='SparseMpiGpu.*'
  done
fi
