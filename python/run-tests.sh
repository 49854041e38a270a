#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Python tier of ./run.sh test: a fresh virtual environment under the build directory, the test
# requirements from the package index, `pip install ./python` (CUDA off: the CUDA code is compiled by the
# main tier, and CI has no GPU; GPU tests skip), then pytest and the NumPy example program. Skips, saying so, only when the package index
# cannot be reached; any other failure fails.
# Usage: python/run-tests.sh [BUILD_DIR]   (default build; JOBS = parallel compile jobs, default all cores)
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
build_dir=${1:-build}
mkdir -p "$build_dir"
build_dir=$(cd "$build_dir" && pwd)
venv=$build_dir/python-venv
rm -rf "$venv"
python3 -m venv "$venv"
py=$venv/bin/python
export PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1 CMAKE_BUILD_PARALLEL_LEVEL=${JOBS:-$(nproc)}
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
if ! "$py" -m pip download -q --no-deps --timeout 30 --retries 2 -d "$probe" pytest >/dev/null 2>&1; then
  echo "python tier: SKIPPED: the package index cannot be reached (pip download pytest failed)"
  exit 0
fi
"$py" -m pip install -q -r python/requirements-test.txt
# finufft is a reference only: where it has no wheel and does not build, its comparisons skip.
"$py" -m pip install -q finufft || echo "python tier: finufft did not install; its comparison tests skip"
"$py" -m pip install -q ./python --config-settings=cmake.define.SFFT_ENABLE_CUDA=OFF \
  --config-settings=build-dir="$build_dir/python-build"
"$py" -m pytest python/tests -q -rs
# The NumPy example program of examples/python (its ctest skips where the system Python has no NumPy), with
# this environment's NumPy and the library the package bundles.
lib=$("$py" -c 'import os, sfft; print(os.path.join(os.path.dirname(sfft.__file__), "lib", "libsfft.so.0"))')
SFFT_LIBRARY=$lib "$py" examples/python/numpy_example.py
echo "python tier: took $((SECONDS - start)) s"
