#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the MPI consumer (tests/mpi/consumer) against the *installed* libsfft_mpi, with pkg-config and the MPI
# compiler wrapper (kind pkgconfig) or with CMake's find_package(sfft COMPONENTS MPI) (kind cmake), and runs it
# on 2 ranks. Installs the build tree into $SFFT_INSTALL first. Exit 77: a tool it needs is missing.
set -euo pipefail
kind=$1
src=$SFFT_SOURCE/tests/mpi/consumer
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
need() { command -v "$1" > /dev/null || { echo "skipped: $1 not found"; exit 77; }; }
need mpiexec
cmake --install "$SFFT_BUILD" --prefix "$SFFT_INSTALL" > /dev/null
libdir=$(dirname "$(find "$SFFT_INSTALL" -name 'libsfft_mpi.so' | head -1)")
case $kind in
  pkgconfig)
    need mpicc; need pkg-config
    export PKG_CONFIG_PATH="$libdir/pkgconfig"
    mpicc -std=c99 -Wall -Wextra -Werror -pedantic "$src/consumer.c" -o "$work/consumer" \
      $(pkg-config --cflags --libs sfft_mpi) -lm
    ;;
  cmake)
    cmake -S "$src" -B "$work/build" -DCMAKE_PREFIX_PATH="$SFFT_INSTALL" > /dev/null
    cmake --build "$work/build" > /dev/null
    mv "$work/build/sfft_mpi_consumer" "$work/consumer"
    ;;
esac
LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  mpiexec -n 2 --oversubscribe -x LD_LIBRARY_PATH "$work/consumer"
