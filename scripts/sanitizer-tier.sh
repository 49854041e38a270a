#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Second test stage: the CPU-only library and tests built with AddressSanitizer + UndefinedBehaviorSanitizer
# (clang), the whole ctest run under them; any report fails the stage.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${SANITIZER_BUILD_DIR:-build-asan}
jobs=${JOBS:-$(nproc)}
start=$SECONDS
CC=clang CXX=clang++ cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSFFT_ENABLE_CUDA=OFF \
  -DSFFT_SANITIZE=address,undefined -DSFFT_BUILD_BENCHMARKS=OFF -DSFFT_BUILD_CLI=OFF
cmake --build "$dir" -j "$jobs"
# allocator_may_return_null: a request too large for the machine must reach the library as a NULL from
# malloc (which it reports as SFFT_ERROR_OUT_OF_MEMORY), not abort the process inside ASan. (ASan's
# throwing operator new still aborts: large workspaces belong in HostBuffer, not std::vector.)
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1:allocator_may_return_null=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# Consumers build their own programs with the system compiler and would need the sanitizer runtime
# preloaded; they run unsanitized in the main tier.
ctest --test-dir "$dir" --output-on-failure -j "$jobs" -E '^consumer\.'
echo "sanitizer tier took $((SECONDS - start)) s"
