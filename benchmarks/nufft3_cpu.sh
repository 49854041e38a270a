#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The nufft3 CPU benchmark in one command: installs the pinned peers (benchmarks/requirements.txt: FINUFFT
# 2.5.1, NumPy) into a private virtual environment, builds libsfft if needed, and runs nufft3_bench.py on the
# CPU backend. Extra arguments go to the benchmark (e.g. --scale 0.05 --threads 2).
#   benchmarks/nufft3_cpu.sh --scale 0.05
# Environment: SFFT_BUILD (default build-nufft3-cpu), SFFT_BENCH_VENV (default ~/.cache/sfft/bench-venv).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${SFFT_BUILD:-$root/build-nufft3-cpu}
venv=${SFFT_BENCH_VENV:-$HOME/.cache/sfft/bench-venv}
if [[ ! -x $venv/bin/python ]]; then
  python3 -m venv "$venv"
fi
# pip skips what is already installed at the pinned version.
"$venv/bin/python" -m pip install -q -r "$root/benchmarks/requirements.txt"
# NumPy's OpenBLAS threads spin after each BLAS call of the reference sums, taking cores from both libraries'
# timed runs (3-6 % of a 2-core profile); one thread unless the caller says otherwise.
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
if [[ ! -f $build/libsfft.so ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSFFT_ENABLE_CUDA=OFF >/dev/null
fi
ninja -C "$build" sfft >/dev/null
exec "$venv/bin/python" "$root/benchmarks/nufft3_bench.py" --lib "$build/libsfft.so" --backend cpu "$@"
