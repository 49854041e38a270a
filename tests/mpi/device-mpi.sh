#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The MPI part of the GPU machine's check: libsfft_mpi's tests on 2 ranks sharing GPU 0 (host staging), then
# the scaling benchmark on 1..2 CPU ranks and on 1..2 GPU ranks, and with SFFT_MPI_SANITIZE=1 the GPU tests under
# compute-sanitizer. Usage: tests/mpi/device-mpi.sh BUILD_DIR [OPENMPI_ROOT]
# Uses the machine's own mpiexec when it has one, else the OpenMPI staged by tests/mpi/stage-openmpi.sh.
set -euo pipefail
build=$(cd "$1" && pwd)
root=${2:-$build/openmpi-root}
if ! mpiexec --version > /dev/null 2>&1; then  # none, or a broken one
  root=$(cd "$root" && pwd)
  export OPAL_PREFIX="$root/usr"
  export PATH="$root/usr/bin:$PATH"
  export LD_LIBRARY_PATH="$root/usr/lib/x86_64-linux-gnu/openmpi/lib:$root/usr/lib/x86_64-linux-gnu/pmix2/lib:$root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export PMIX_INSTALL_PREFIX="$root/usr/lib/x86_64-linux-gnu/pmix2"
  export PMIX_MCA_mca_base_component_path="$root/usr/lib/x86_64-linux-gnu/pmix2/lib/pmix"
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
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
