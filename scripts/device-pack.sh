#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Packs a build made on the development machine for a lent GPU machine whose transfer is limited in size:
#   scripts/device-pack.sh BUILD_DIR PACK_DIR [NAME=LIB_DIR ...]
# PACK_DIR (inside the checkout, git-ignored, e.g. build-pack) receives
#   build.tar.xz    BUILD_DIR without object files and CMake's internals, but with what `cmake --install` reads
#                   (CMakeFiles/Export, the installed static archives), so the packaging tests run there too;
#   devlibs.tar.xz  .devlibs/ (scripts/stage-devlibs.sh), when present;
#   ab/NAME/        libsfft.so.0 and libsfft_cuda.so.0 of each LIB_DIR, compressed: other builds of the library for
#                   same-process A/B runs (LD_LIBRARY_PATH=PACK_DIR/ab/NAME; the CUDA plugin loads beside libsfft);
#   unpack.sh       run there from the checkout's root: restores .devlibs/, unpacks the build as BUILD_DIR's
#                   name and decompresses the A/B libraries.
# Then, on the GPU machine: bash PACK_DIR/unpack.sh && scripts/device-run.sh 'COMMAND' (device-run.sh links the
# checkout to /work/main, where the build's CMake/CTest files and RUNPATHs point).
set -euo pipefail
if [[ $# -lt 2 || ! -d "$1" ]]; then
  echo "usage: $0 BUILD_DIR PACK_DIR [NAME=LIB_DIR ...]" >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$1" && pwd)
pack=$2
shift 2
[[ "$build" == "$root"/* ]] || { echo "device-pack: BUILD_DIR must lie inside the checkout ($root)" >&2; exit 2; }
rm -rf "$pack"
mkdir -p "$pack"
pack=$(cd "$pack" && pwd)
name=${build#"$root"/}

# Static archives that an install copies (the rest are internal to the build).
mapfile -t installed < <(cd "$build" && find . -name cmake_install.cmake -exec grep -ohE '"[^"]*\.a"' {} + |
                         tr -d '"' | sed "s|^$build/|./|" | sort -u | while read -r f; do [[ -f "$f" ]] && echo "$f"; done)
(cd "$build" && tar --exclude=CMakeFiles --exclude='*.o' --exclude='*.a' --exclude=./gpu-check \
   --exclude=./consumer-install -cf "$pack/build.tar" . && tar -rf "$pack/build.tar" ./CMakeFiles/Export "${installed[@]}")
xz -T0 -6 "$pack/build.tar"
[[ -d "$root/.devlibs" ]] && tar -C "$root" -cJf "$pack/devlibs.tar.xz" .devlibs

for spec in "$@"; do
  ab=${spec%%=*} dir=${spec#*=}
  [[ "$ab" != "$spec" && -f "$dir/libsfft.so.0" ]] || { echo "device-pack: $spec is not NAME=DIR with libsfft.so.0" >&2; exit 2; }
  mkdir -p "$pack/ab/$ab"
  for lib in libsfft.so.0 libsfft_cuda.so.0; do
    [[ -e "$dir/$lib" ]] && xz -T0 -c "$dir/$lib" >"$pack/ab/$ab/$lib.xz"
  done
done

cat >"$pack/unpack.sh" <<EOF
#!/usr/bin/env bash
# Written by scripts/device-pack.sh: unpacks ${pack#"$root"/} into the checkout (run from its root).
set -euo pipefail
[[ -d .devlibs || ! -f ${pack#"$root"/}/devlibs.tar.xz ]] || tar -xJf ${pack#"$root"/}/devlibs.tar.xz
rm -rf $name && mkdir -p $name && tar -xJf ${pack#"$root"/}/build.tar.xz -C $name
for f in ${pack#"$root"/}/ab/*/*.xz; do [[ -e "\$f" ]] && xz -df "\$f"; done
true
EOF
du -sh "$pack"
