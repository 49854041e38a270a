#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# sfft quick start. On a fresh Debian/Ubuntu machine each command installs what is missing, configures,
# builds and runs:
#   ./run.sh demo    the main job: the `sfft` CLI on built-in data, every family (`sfft all`)
#   ./run.sh test    the test suite (CPU tests; GPU tests skip without a device), the Python package's tests
#                    (python/run-tests.sh), then the sanitizer and fuzz tiers
#   ./run.sh build   configure + build only
# Environment: BUILD_DIR (default build), SFFT_CMAKE_ARGS (extra configure arguments),
# JOBS (parallel build jobs, default: number of cores), SFFT_SKIP_SANITIZERS=1 (test: skip the sanitizer and fuzz stages).
set -euo pipefail
cd "$(dirname "$0")"
mode=${1:-demo}
build_dir=${BUILD_DIR:-build}
jobs=${JOBS:-$(nproc)}

configure_and_build() {
  local dir=$1; shift
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" ${SFFT_CMAKE_ARGS:-}
  cmake --build "$dir" -j "$jobs"
}

# CUDA compile coverage without a GPU: build for one architecture only when none is given.
cuda_args=()
if command -v nvcc >/dev/null || [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export PATH="/usr/local/cuda/bin:$PATH"
  [[ "${SFFT_CMAKE_ARGS:-}" == *CMAKE_CUDA_ARCHITECTURES* ]] || cuda_args=(-DCMAKE_CUDA_ARCHITECTURES=90)
fi

case $mode in
  demo)
    ./scripts/install-deps.sh
    configure_and_build "$build_dir" "${cuda_args[@]}" -DSFFT_BUILD_TESTS=OFF
    "$build_dir/apps/cli/sfft" all
    ;;
  build)
    ./scripts/install-deps.sh
    configure_and_build "$build_dir" "${cuda_args[@]}"
    ;;
  test)
    SFFT_WITH_SANITIZERS=1 ./scripts/install-deps.sh
    start=$SECONDS
    configure_and_build "$build_dir" "${cuda_args[@]}"
    ctest --test-dir "$build_dir" --output-on-failure -j "$jobs"
    echo "run.sh test: main tier took $((SECONDS - start)) s"
    ./python/run-tests.sh "$build_dir"
    if [[ "${SFFT_SKIP_SANITIZERS:-0}" != 1 ]]; then
      ./scripts/sanitizer-tier.sh
      ./scripts/fuzz-tier.sh
    fi
    echo "run.sh test: all stages took $((SECONDS - start)) s"
    ;;
  *)
    echo "usage: $0 demo|test|build" >&2
    exit 2
    ;;
esac
