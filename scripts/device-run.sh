#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs a command on a lent GPU machine over a copy of this checkout that carried a build directory made on the
# development machine: links /work/main to the copy (CMake/CTest files hold absolute paths), puts .devlibs/ on
# the library path, prints the GPU, then runs "$@".
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [[ "$root" != /work/main ]]; then
  mkdir -p /work
  [[ -e /work/main ]] || ln -s "$root" /work/main
fi
export LD_LIBRARY_PATH="$root/.devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="/usr/local/cuda/bin:$PATH"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
cd /work/main
bash -c "$*"
