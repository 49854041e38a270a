#!/usr/bin/env bash
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
    gfortran -std=f2008 -Wall "$src/consumer.f90" -o "$work/fconsumer" -L"$(libdir)" -lsfft -Wl,-rpath,"$(libdir)"
    "$work/fconsumer"
    ;;
  python_ctypes)
    need python3
    install_sfft
    SFFT_LIBRARY="$(libdir)/libsfft.so" python3 "$src/consumer.py"
    ;;
  *) echo "unknown consumer kind $kind"; exit 2 ;;
esac
