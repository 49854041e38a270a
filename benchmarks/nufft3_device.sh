#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One device session for nufft3 (run through scripts/device-run.sh from the repository root): builds the
# cuFINUFFT peer from the carried sdist in the background (if present), runs the nufft3 tests with the GPU,
# compute-sanitizer memcheck/racecheck on small GPU cases, the CLI on the CUDA backend, and the benchmark.
# Logs go to $OUT when set. A device command runs at most 10 minutes, so the parts can run in separate calls on
# the same warm machine: NUFFT3_CHECKS=0 skips tests, sanitizers and CLI; NUFFT3_BENCH=0 skips the benchmark;
# a peer built by an earlier call (in /tmp/site) is kept. Extra arguments go to the benchmark, e.g.
#   SFFT_BUILD=build-h18 NUFFT3_BENCH=0 benchmarks/nufft3_device.sh
#   SFFT_BUILD=build-h18 NUFFT3_CHECKS=0 benchmarks/nufft3_device.sh --prec double
set -uo pipefail
checks=${NUFFT3_CHECKS:-1}
bench=${NUFFT3_BENCH:-1}
out=${OUT:-/tmp/nufft3-out}
mkdir -p "$out"
build=${SFFT_BUILD:-build-nufft3}  # a build with SFFT_ENABLE_CUDA=ON (targets sfft, nufft3_test, sfft_cli)
site=/tmp/site
mkdir -p $site
peer_build_pid=
# cuFINUFFT from its sdist: the CUDA-13 toolkit's CCCL stands in for CPM's downloads (the device is offline).
# Put the sdist there first: python3 -m pip download --no-deps --no-binary=cufinufft -d .whl cufinufft==2.5.1
if ls .whl/cufinufft-*.tar.gz >/dev/null 2>&1 && ! ls $site/cufinufft/libcufinufft.so* >/dev/null 2>&1; then
  mkdir -p /tmp/cpmcache/cpm
  cat > /tmp/cpmcache/cpm/CPM_0.42.0.cmake <<'CPM'
macro(CPMAddPackage)
  cmake_parse_arguments(CPMARG "" "NAME;GIT_REPOSITORY;GIT_TAG;VERSION" "" ${ARGN})
  find_package(${CPMARG_NAME} CONFIG REQUIRED PATHS /usr/local/cuda/lib64/cmake)
endmacro()
CPM
  (set -e; rm -rf /tmp/cuf; mkdir -p /tmp/cuf
   tar xzf .whl/cufinufft-*.tar.gz -C /tmp/cuf --strip-components=1
   cmake -S /tmp/cuf -B /tmp/cuf/b -G Ninja -DFINUFFT_USE_CUDA=ON -DFINUFFT_USE_CPU=OFF \
     -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release -DCPM_SOURCE_CACHE=/tmp/cpmcache \
     -DFINUFFT_STATIC_LINKING=OFF
   nice cmake --build /tmp/cuf/b -j12 --target cufinufft
   mkdir -p $site/cufinufft; cp /tmp/cuf/python/cufinufft/cufinufft/*.py $site/cufinufft/
   find /tmp/cuf/b -name 'libcufinufft.so*' -exec cp {} $site/cufinufft/ \;) > "$out/peer_build.log" 2>&1 &
  peer_build_pid=$!
fi
python3 -m pip install -q --no-index --no-deps --no-compile --target $site .whl/packaging-*.whl >/dev/null 2>&1
export PYTHONPATH=$site
if [[ $checks == 1 ]]; then
# The test binary directly (ctest's PRE_TEST discovery calls the build host's cmake, absent here).
$build/tests/nufft3_test 2>&1 | tee "$out/tests.log" | grep -E "^\[ *(OK|FAILED|PASSED|SKIPPED) *\]|Failure" | tail -60
compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 $build/tests/nufft3_test \
  --gtest_filter='*Degenerate*/Cuda*:*Batch*/Cuda*:*NewPoints*/Cuda*:*Curve*/Cuda*:nufft3Cuda.*' 2>&1 | tee "$out/memcheck.log" |
  grep -E "OK \]|FAILED|SUMMARY"
compute-sanitizer --tool racecheck --error-exitcode 9 $build/tests/nufft3_test \
  --gtest_filter='*Degenerate*/Cuda*:*Batch*/Cuda*:*NewPoints*/Cuda*:*Curve*/Cuda*:nufft3Cuda.*' 2>&1 | tee "$out/racecheck.log" |
  grep -E "OK \]|FAILED|SUMMARY"
$build/apps/cli/sfft nufft3 --backend cuda 2>&1 | tee "$out/cli.log"
$build/apps/cli/sfft nufft3 --backend cuda --single --kernel gaussian --tol 1e-4 2>&1 | tee -a "$out/cli.log"
$build/apps/cli/sfft nufft3 --backend cuda --kernel pswf 2>&1 | tee -a "$out/cli.log"
fi
if [[ -n "$peer_build_pid" ]]; then wait "$peer_build_pid"; echo "peer build rc $?"; tail -3 "$out/peer_build.log"; fi
# The time-versus-achieved-error suite against cuFINUFFT (extra arguments go to the benchmark, e.g. --cases).
[[ $bench == 1 ]] || exit 0
PYTHONUNBUFFERED=1 python3 benchmarks/nufft3_bench.py --lib $build/libsfft.so --backend cuda "$@" 2>&1 |
  tee "$out/bench.log"
