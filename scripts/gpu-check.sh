#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# GPU sanitizer check, on a machine with a CUDA device:
#   scripts/gpu-check.sh BUILD_DIR
# BUILD_DIR is an existing CUDA build with tests (e.g. cmake -B build -DCMAKE_CUDA_ARCHITECTURES=90 && cmake
# --build build). Runs the full ctest (GPU tests included), then compute-sanitizer --tool memcheck, racecheck,
# initcheck and synccheck over the GPU cases of every test binary present, prints one summary line per tool,
# and exits non-zero if ctest failed or any tool reported an error.
# Each binary gets a gtest filter that keeps a sanitizer run short (sanitizers slow kernels 10-100x); override
# one with SFFT_GPU_CHECK_FILTER_<binary>=... (for every tool), e.g. SFFT_GPU_CHECK_FILTER_shift_test='*cuda*'.
# SFFT_GPU_CHECK_TIMEOUT (seconds per binary and tool, default 300); SFFT_GPU_CHECK_LOGS (default
# BUILD_DIR/gpu-check) keeps every log; SFFT_GPU_CHECK_SKIP_CTEST=1 skips the ctest stage;
# SFFT_GPU_CHECK_TOOLS (default "memcheck racecheck initcheck synccheck") picks the tools, so a limited
# lease can split the run.
set -uo pipefail
if [[ $# -ne 1 || ! -d "$1" ]]; then
  echo "usage: $0 BUILD_DIR   (an existing CUDA build directory with tests)" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
logs=${SFFT_GPU_CHECK_LOGS:-$build/gpu-check}
limit=${SFFT_GPU_CHECK_TIMEOUT:-300}
export PATH="/usr/local/cuda/bin:$PATH"
command -v compute-sanitizer >/dev/null || { echo "gpu-check: compute-sanitizer not found" >&2; exit 2; }
nvidia-smi -L >/dev/null 2>&1 || { echo "gpu-check: no CUDA device visible (nvidia-smi -L failed)" >&2; exit 2; }
mkdir -p "$logs"
status=0

if [[ "${SFFT_GPU_CHECK_SKIP_CTEST:-0}" != 1 ]]; then
  if ctest --test-dir "$build" --output-on-failure -j 4 --timeout 300 >"$logs/ctest.log" 2>&1; then
    ctest_line="ctest: PASS ($(grep -oE '[0-9]+% tests passed.* out of [0-9]+' "$logs/ctest.log" | tail -1))"
  else
    ctest_line="ctest: FAIL ($(grep -o '[0-9]*% tests passed, [0-9]* tests failed out of [0-9]*' "$logs/ctest.log" | tail -1)); see $logs/ctest.log"
    status=1
  fi
  skipped=$(grep -c '\*\*\*Skipped' "$logs/ctest.log" || true)
  ctest_line+=", $skipped skipped"
  echo "$ctest_line"
fi

# Small, GPU-only subsets per binary: each covers the family's kernels, host staging and user streams.
declare -A filter=(
  [shift_test]='*ShiftTest.MatchesNumpyDefinition/cuda_device_dtype1:*ShiftTest.MatchesNumpyDefinition/cuda_device_dtype3:ShiftCuda.UnalignedBuffers:*ShiftTest.MatchesNumpyDefinition/cuda_staged_host_dtype4:ShiftRoundTrip.*'
  [nufft3_test]='*Nufft3.DegenerateExtentsAndSinglePoints/Cuda*:*Nufft3.BatchMatchesDirectSumPerVector/Cuda*:*Nufft3.GaussianSchemeMeetsTolerances/Cuda*:*Nufft3.FewSourcesMeetToleranceInEveryDim/Cuda*:nufft3Cuda.*'
  [spfft2d_test]='*Spfft2d.EmptyRowsAndColumnsSingleNonzeroAllZero/Cuda_*:*Spfft2d.FailedCallsLeaveOutputUntouchedAndPlanUsable/Cuda_*:Spfft2dArgs.CpuPlanRejectsDeviceOutput'
  [spfft2d_direct_test]='*Spfft2d.TiledRowsAndStreamAreBitIdenticalToOneShot/Cuda_c64_*:*Spfft2d.AutoWholeSpectrumAsOneDirectTile/Cuda_c64_deviceout_auto:*Spfft2d.HubColumnsAgainstFftw/Cuda_c64_deviceout_direct'
  [spfft2d_whole_test]='*Spfft2d.SparseRowsOfEveryKind/Cuda_*_pruned:*Spfft2d.PowerOfTwoRowsOfEveryFourStepSplit/Cuda_c*_deviceout_pruned'
  [sparse_test]='*SparseFft.TopKOfListMuchLongerThanK/CudaDevice_c128:*SparseFft.TopKOfListLongerThanOneRankChunk/CudaDevice_c64:*SparseFft.EqualMagnitudesKeepTheirOrder/CudaDevice_c128:*SparseFft.NonPowerOfTwoLengths/CudaDevice_c128:*SparseFft.NonPowerOfTwoLengths/CudaHost_c64:*SparseFft.ExactlySparseAcrossSizes/CudaDevice_c64:*SparseFft.NanInputRejectedPlanStillUsable/Cuda*:*SparseFft.CapacityTooSmall/CudaHost_c64:*SparseFft.AutoChoosesExactOrRobust/CudaDevice_c64'
  [sparse_comb_test]='*SparseFft.CombApprovesOnlyLargestResidues/Cuda*:*SparseFft.CombNoisySpectra/CudaDevice_c64'
  [sparse_api_test]='sparse_cuda.*'
  [sparse_batch_test]='sparse_batch/SparseBatch.*/Cuda*:sparse_batch_cuda.*'
  [sparse_noise_test]='*/Cuda*:-*RecallDownTo3dB*'
  [threads_test]='*ThreadsTest.AllFamiliesTogether/cuda'
  [limits_test]='DeviceLimits.*'
)
# racecheck slows nufft3_test's cases with 5e4 points to minutes each; they run the kernels of the other cases
# (every spreading method is in EverySpreadingMethodMatchesTiles), so racecheck leaves them out.
declare -A racecheck_filter=(
  [nufft3_test]='*Nufft3.DegenerateExtentsAndSinglePoints/Cuda*:*Nufft3.BatchMatchesDirectSumPerVector/CudaEs:*Nufft3.GaussianSchemeMeetsTolerances/CudaEs:nufft3Cuda.*:-nufft3Cuda.HostPointersAreStaged:nufft3Cuda.PrunedFftMatchesFullTransformAndDirectSum'
)
binaries=()
for b in shift_test nufft3_test spfft2d_test spfft2d_direct_test spfft2d_whole_test sparse_test sparse_comb_test sparse_api_test sparse_batch_test sparse_noise_test threads_test limits_test; do
  [[ -x "$build/tests/$b" ]] && binaries+=("$b")
done
[[ ${#binaries[@]} -gt 0 ]] || { echo "gpu-check: no test binaries under $build/tests" >&2; exit 2; }

# limits_test's DeviceLimits cases make cudaMalloc fail on purpose; memcheck would report those API errors.
declare -A binary_args=(
  [limits_test]='--report-api-errors no'
)
declare -A tool_args=(
  [memcheck]='--tool memcheck --leak-check full'
  [racecheck]='--tool racecheck --racecheck-report all'
  [initcheck]='--tool initcheck'
  [synccheck]='--tool synccheck'
)
summaries=()
for tool in ${SFFT_GPU_CHECK_TOOLS:-memcheck racecheck initcheck synccheck}; do
  [[ -n "${tool_args[$tool]:-}" ]] || { echo "gpu-check: unknown tool '$tool'" >&2; exit 2; }
  parts=()
  tool_ok=1
  for b in "${binaries[@]}"; do
    override="SFFT_GPU_CHECK_FILTER_$b"
    default_filter=${filter[$b]:-*cuda*:*Cuda*}
    [[ $tool == racecheck && -n "${racecheck_filter[$b]:-}" ]] && default_filter=${racecheck_filter[$b]}
    f=${!override:-$default_filter}
    log="$logs/$tool.$b.log"
    # shellcheck disable=SC2086
    SFFT_TEST_ROUNDS=1 SFFT_TEST_THREADS=2 timeout "$limit" compute-sanitizer ${tool_args[$tool]} ${binary_args[$b]:-} \
      --error-exitcode 99 --print-limit 20 \
      "$build/tests/$b" --gtest_filter="$f" --gtest_brief=1 >"$log" 2>&1
    rc=$?
    # memcheck/initcheck/synccheck: "ERROR SUMMARY: N errors"; racecheck: "hazards displayed (N errors, ...".
    errors=$(grep -oE 'ERROR SUMMARY: [0-9]+ error|hazards displayed \([0-9]+ error' "$log" | tail -1 |
      grep -oE '[0-9]+ error' | grep -oE '[0-9]+' || true)
    ran=$(grep -o '\[==========\] [0-9]* tests\? from' "$log" | tail -1 | grep -o '[0-9]*' || true)
    skipped=$(grep -o '\[  SKIPPED \] [0-9]* test' "$log" | tail -1 | grep -o '[0-9]*' || true)
    skipped=${skipped:-0}
    if [[ $rc -eq 124 ]]; then
      parts+=("$b TIMEOUT(${limit}s)")
      tool_ok=0
    elif [[ -z "$ran" || "$ran" -le "$skipped" ]]; then
      parts+=("$b NO-TESTS (the filter matched nothing, or every case skipped)")
      tool_ok=0
    elif [[ $rc -ne 0 || "${errors:-0}" -ne 0 ]]; then
      parts+=("$b FAIL (${errors:-?} errors, rc $rc, $ran tests)")
      tool_ok=0
    else
      parts+=("$b ok ($ran tests, $skipped skipped)")
    fi
  done
  verdict=PASS
  [[ $tool_ok -eq 1 ]] || { verdict=FAIL; status=1; }
  summaries+=("compute-sanitizer $tool: $verdict - $(IFS=';'; echo "${parts[*]}" | sed 's/;/; /g')")
  echo "${summaries[-1]}"  # as it happens, in case the caller's time runs out before the summary
done

echo "==== gpu-check summary ($(date -u +%Y-%m-%d), $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1))"
[[ -n "${ctest_line:-}" ]] && echo "$ctest_line"
printf '%s\n' "${summaries[@]}"
echo "logs: $logs"
exit $status
