#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds and runs one consumer of the installed sfft (kind = $1). Installs the build tree into
# $SFFT_INSTALL first. Exit 77 = the tool this consumer needs is not present (CTest reports a skip).
set -euo pipefail
kind=$1
src=$SFFT_SOURCE/tests/consumers
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
need() { command -v "$1" >/dev/null || { echo "skipped: $1 not found"; exit 77; }; }
install_sfft() { cmake --install "$SFFT_BUILD" --prefix "$SFFT_INSTALL" >/dev/null; }
libdir() { local d; for d in lib lib64 lib/x86_64-linux-gnu; do [[ -e $SFFT_INSTALL/$d/libsfft.so ]] && { echo "$SFFT_INSTALL/$d"; return; }; done; }

case $kind in
  header_c99)
    need gcc
    gcc -std=c99 -Wall -Wextra -Werror -pedantic -fsyntax-only -I"$SFFT_SOURCE/include" -x c - <<<'#include <sfft/sfft.h>
int main(void) { return 0; }'
    ;;
  header_cxx)
    need g++
    g++ -std=c++11 -Wall -Wextra -Werror -pedantic -fsyntax-only -I"$SFFT_SOURCE/include" -x c++ - <<<'#include <sfft/sfft.h>
int main() { return 0; }'
    ;;
  pkgconfig_c99)
    need gcc; need pkg-config
    install_sfft
    export PKG_CONFIG_PATH="$(libdir)/pkgconfig"
    gcc -std=c99 -Wall -Wextra -Werror -pedantic "$src/consumer.c" -o "$work/consumer" $(pkg-config --cflags --libs sfft)
    LD_LIBRARY_PATH="$(libdir)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$work/consumer"
    ;;
  cmake_package)
    need cmake
    install_sfft
    cmake -S "$src/cmake_consumer" -B "$work/build" -DCMAKE_PREFIX_PATH="$SFFT_INSTALL" >/dev/null
    cmake --build "$work/build" >/dev/null
    LD_LIBRARY_PATH="$(libdir)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$work/build/cmake_consumer"
    ;;
  fortran)
    need gfortran
    install_sfft
    # The installed module source, compiled with the program (the route for any Fortran compiler). It is
    # installed only by a build of every family.
    [[ -f $SFFT_INSTALL/include/sfft/sfft.f90 ]] || { echo "skipped: no Fortran module (not every family built)"; exit 77; }
    gfortran -std=f2018 -Wall -J "$work" "$SFFT_INSTALL/include/sfft/sfft.f90" "$src/consumer.f90" -o "$work/fconsumer" \
      -L"$(libdir)" -lsfft -Wl,-rpath,"$(libdir)"
    "$work/fconsumer"
    ;;
  python_ctypes)
    need python3
    install_sfft
    SFFT_LIBRARY="$(libdir)/libsfft.so" python3 "$src/consumer.py"
    ;;
  cpu_only_host)
    # The dynamic loader with its cache ignored and a search path of the install and the system's own
    # library directories, so the CUDA runtime and cuFFT (in the toolkit's directories) cannot be found.
    need gcc; need pkg-config; need python3
    install_sfft
    loader=
    for candidate in /lib64/ld-linux-*.so.* /lib/ld-linux-*.so.*; do [[ -x $candidate ]] && { loader=$candidate; break; }; done
    [[ -n $loader ]] || { echo "skipped: no glibc dynamic loader found"; exit 77; }
    multiarch=$(gcc -print-multiarch)
    search="$(libdir):/lib/$multiarch:/usr/lib/$multiarch:/lib:/usr/lib"
    export PKG_CONFIG_PATH="$(libdir)/pkgconfig"
    gcc -std=c99 -Wall -Wextra -Werror -pedantic "$src/build_info.c" -o "$work/build_info" $(pkg-config --cflags --libs sfft)
    gcc -std=c99 -Wall -Wextra -Werror -pedantic "$src/consumer.c" -o "$work/consumer" $(pkg-config --cflags --libs sfft)
    if [[ $SFFT_HAVE_CUDA == 1 ]] &&
       "$loader" --inhibit-cache --library-path "$search" --list "$(libdir)/libsfft_cuda.so.0" 2>&1 | grep -q 'libcudart.*=> /'; then
      echo "the CUDA runtime is in a system library directory here: cannot hide it"; exit 77
    fi
    if "$loader" --inhibit-cache --library-path "$search" --list "$(libdir)/libsfft.so" 2>&1 | grep -qi 'cud'; then
      echo "libsfft.so depends on a CUDA library:"; readelf -d "$(libdir)/libsfft.so" | grep NEEDED; exit 1
    fi
    hidden() { "$loader" --inhibit-cache --library-path "${search}" "$@"; }
    EXPECT_NO_CUDA_LIBS=$SFFT_HAVE_CUDA hidden "$work/build_info"
    hidden "$work/consumer"
    # The interpreter itself (not a launcher script), with its own library directory (libpython).
    read -r python python_libdir < <(python3 -c 'import sys, sysconfig; print(sys.executable, sysconfig.get_config_var("LIBDIR"))')
    search="$search:$python_libdir" SFFT_LIBRARY="$(libdir)/libsfft.so" hidden "$python" "$src/consumer.py"
    ;;
  installed_cli)
    # bin/sfft finds libsfft through its relative RUNPATH, also after the whole prefix is moved.
    install_sfft
    [[ -x $SFFT_INSTALL/bin/sfft ]] || { echo "skipped: the CLI is not built"; exit 77; }
    readelf -d "$SFFT_INSTALL/bin/sfft" | grep -q 'R.*PATH.*\$ORIGIN/\.\./' ||
      { echo "bin/sfft has no \$ORIGIN-relative RUNPATH:"; readelf -d "$SFFT_INSTALL/bin/sfft" | grep PATH; exit 1; }
    cp -a "$SFFT_INSTALL" "$work/moved"
    for prefix in "$SFFT_INSTALL" "$work/moved"; do
      env -u LD_LIBRARY_PATH "$prefix/bin/sfft" --version
      env -u LD_LIBRARY_PATH "$prefix/bin/sfft" shift >/dev/null
    done
    ;;
  *) echo "unknown consumer kind $kind"; exit 2 ;;
esac
