#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The multi-GPU part of the GPU machine's check (a machine with 2 or more GPUs, one rank per GPU): libsfft_mpi's
# tests, the scaling benchmark against the single-process plan at a size one GPU holds, then weak scaling from
# 2^32 samples on one GPU to 2^33 on two and the 2^34-sample signal that no single GPU holds (no peer there:
# each result is checked against the planted tones). Usage: tests/mpi/device-multigpu.sh BUILD_DIR [OPENMPI_ROOT]
set -euo pipefail
build=$(cd "$1" && pwd)
source "$(dirname "$0")/mpiexec-env.sh" "$build" "${2:-}"
gpus=$(nvidia-smi --list-gpus | wc -l)
if (( gpus < 2 )); then
  echo "device-multigpu.sh: $gpus GPU(s) here; this check needs 2 or more" >&2
  exit 1
fi
mpi=(mpiexec -n 2 --mca btl self,vader --mca pml ob1 -x LD_LIBRARY_PATH -x OMP_NUM_THREADS=4)
echo "== mpiexec: $(command -v mpiexec), $gpus GPUs"
# Rank r drives GPU r (device = rank % visible GPUs).
"${mpi[@]}" "$build/tests/mpi_test"
"${mpi[@]}" "$build/benchmarks/bench_mpi" --gpu --log2n-rank 26 --log2n-strong 27 --k 1000 --repeats 7
"${mpi[@]}" "$build/benchmarks/bench_mpi" --gpu --no-peer --log2n-rank 32 --log2n-strong 33 --k 1000 --repeats 7
"${mpi[@]}" "$build/benchmarks/bench_mpi" --gpu --no-peer --log2n-rank 33 --log2n-strong 0 --k 1000 --repeats 7
