#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds and runs the examples of one kind ($1: c, cpp_cmake, fortran, python_numpy, python_cupy) the way a user
# does: examples/<dir> copied out of the tree, built against sfft installed into $SFFT_INSTALL. Every example
# checks its results and exits non-zero on a wrong one. Exit 77 = skipped (a tool, a Python package or a GPU is
# missing; the reason is printed).
set -euo pipefail
kind=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
skip() { echo "skipped: $*"; exit 77; }
need() { command -v "$1" >/dev/null || skip "$1 not found"; }
libdir() { local d; for d in lib lib64 lib/x86_64-linux-gnu; do [[ -e $SFFT_INSTALL/$d/libsfft.so ]] && { echo "$SFFT_INSTALL/$d"; return; }; done; }
cmake --install "$SFFT_BUILD" --prefix "$SFFT_INSTALL" >/dev/null
cp -r "$SFFT_SOURCE/examples/." "$work/"

# Runs one example program; a 77 from it (no GPU) is reported and passed over.
run() {
  local status=0
  "$@" || status=$?
  if (( status == 77 )); then echo "($1 skipped itself)"; elif (( status != 0 )); then echo "FAILED: $1 exited $status"; exit 1; fi
}

case $kind in
  c)
    need make; need pkg-config
    make -C "$work/c" SFFT_PREFIX="$SFFT_INSTALL"
    for program in shift sparse_fft nufft3 spfft2d device_pointers; do
      if [[ -x $work/c/$program ]]; then
        run "$work/c/$program"
      else
        [[ $program == device_pointers ]] || { echo "FAILED: $program was not built"; exit 1; }
        echo "(device_pointers not built: no CUDA runtime headers)"
      fi
    done
    ;;
  cpp_cmake)
    need cmake
    cmake -S "$work/cpp_cmake" -B "$work/cpp_build" -DCMAKE_PREFIX_PATH="$SFFT_INSTALL" >/dev/null
    cmake --build "$work/cpp_build" >/dev/null
    run "$work/cpp_build/sfft_cpp_example"
    ;;
  fortran)
    need gfortran
    [[ ${SFFT_HAVE_FORTRAN:-0} == 1 ]] || skip "sfft was configured without the Fortran module"
    cmake -S "$work/fortran" -B "$work/fortran_build" -DCMAKE_PREFIX_PATH="$SFFT_INSTALL" >/dev/null
    cmake --build "$work/fortran_build" >/dev/null
    run "$work/fortran_build/sfft_fortran_example"
    ;;
  python_numpy)
    need python3
    python3 -c 'import numpy' 2>/dev/null || skip "NumPy is not installed (pip install numpy)"
    SFFT_LIBRARY="$(libdir)/libsfft.so" run python3 "$work/python/numpy_example.py"
    ;;
  python_cupy)
    need python3
    python3 -c 'import numpy, cupy' 2>/dev/null || skip "CuPy is not installed (pip install cupy-cuda13x)"
    SFFT_LIBRARY="$(libdir)/libsfft.so" run python3 "$work/python/cupy_example.py"
    ;;
  *) echo "unknown example kind $kind"; exit 2 ;;
esac
