#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copies this machine's OpenMPI runtime (Debian's openmpi-bin, libopenmpi3, openmpi-common, libpmix2, and the
# shared libraries they load that glibc/libstdc++ do not provide) into DIR (default build/openmpi-root), laid
# out as under / so that OpenMPI relocates to it (OPAL_PREFIX=DIR/usr), for a GPU machine without MPI that runs
# a build made here. tests/mpi/device-mpi.sh sets the environment and runs the MPI tests and benchmark.
set -euo pipefail
root=${1:-build/openmpi-root}
mkdir -p "$root"
root=$(cd "$root" && pwd)
for package in openmpi-bin openmpi-common libopenmpi3 libpmix2; do
  dpkg -L "$package" | while read -r f; do
    case "$f" in */share/doc/* | */share/man/* | */share/lintian/* | */include/* | *.a | *.la) continue ;; esac
    [[ -f "$f" ]] && (cd / && cp -a --parents "${f#/}" "$root")
  done
done
# mpiexec and mpirun are symlinks managed by update-alternatives: point them at the staged orterun.
for name in mpiexec mpirun; do ln -sf orterun "$root/usr/bin/$name"; done
# Shared libraries the staged binaries and components load, except the C/C++ runtime every machine has.
libdir="$root/usr/lib/x86_64-linux-gnu"
mkdir -p "$libdir"
find "$root" -type f \( -name '*.so*' -o -perm -u+x \) | while read -r elf; do
  ldd "$elf" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $3}'
done | sort -u | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so* | libm.so* | libpthread.so* | libdl.so* | librt.so* | libstdc++.so* | libgcc_s.so* | ld-linux*) continue ;;
  esac
  [[ "$lib" == /usr/lib/x86_64-linux-gnu/openmpi/* || "$lib" == /usr/lib/x86_64-linux-gnu/pmix2/* ]] && continue
  cp -L "$lib" "$libdir/$(basename "$lib")"
done
du -sh "$root"
