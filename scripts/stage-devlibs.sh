#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copies the host runtime libraries that sfft's binaries need but a bare GPU machine may lack (FFTW, gfortran,
# GoogleTest if shared) into .devlibs/, so a build made here can run on a lent GPU machine (see device-run.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$root/.devlibs"
for pattern in 'libfftw3.so.3*' 'libfftw3f.so.3*' 'libfftw3_threads.so.3*' 'libfftw3f_threads.so.3*' \
               'libgfortran.so.5*' 'libquadmath.so.0*'; do
  for f in /usr/lib/x86_64-linux-gnu/$pattern; do
    [[ -e "$f" ]] && cp -L "$f" "$root/.devlibs/$(basename "$f")"
  done
done
du -sh "$root/.devlibs"
