#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Third test stage: the libFuzzer targets of tests/fuzz (clang, AddressSanitizer + UndefinedBehaviorSanitizer,
# CPU-only), one per C entry-point family plus the Matrix Market reader, each run from its seed corpus. Any
# crash, sanitizer report, leak, timeout or contract violation fails the stage; the input that triggered it is
# kept under $dir/fuzz-artifacts/.
# By default (CI) it has two parts. The gate replays every input of tests/fuzz/corpus (seeds and the
# regression-* inputs of every fixed finding) once: deterministic, any violation fails the stage. Then a bounded
# exploration (fixed seed and input counts, one OpenMP thread) mutates from there; what it turns up is printed
# and kept under $dir/fuzz-artifacts/ as a finding to triage into tests/fuzz/open-findings, without failing the
# stage: coverage-guided exploration depends on the exact binary (even its build path), so its findings would
# make CI pass or fail by chance. SFFT_FUZZ_SECONDS=N instead fuzzes N seconds per target from a random seed and
# fails on any finding (release checks: 3600).
# Environment: FUZZ_BUILD_DIR (default build-fuzz), SFFT_FUZZ_SECONDS, SFFT_FUZZ_SEED (default 1),
# JOBS (targets run at once and build jobs, default: number of cores).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${FUZZ_BUILD_DIR:-build-fuzz}
seconds=${SFFT_FUZZ_SECONDS:-}
# Inputs per target for the reproducible run (a few seconds each; open findings: tests/fuzz/open-findings).
declare -A runs_of=([mtx]=15000 [nufft3]=1200 [shift]=30000 [sparse]=400 [spfft2d]=8000)
jobs=${JOBS:-$(nproc)}
start=$SECONDS
CC=clang CXX=clang++ cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSFFT_ENABLE_CUDA=OFF \
  -DSFFT_SANITIZE=address,undefined -DSFFT_BUILD_FUZZERS=ON -DSFFT_BUILD_TESTS=OFF -DSFFT_BUILD_BENCHMARKS=OFF \
  -DSFFT_BUILD_CLI=OFF >/dev/null
cmake --build "$dir" -j "$jobs" --target sfft_fuzzers

# Huge requests must come back as SFFT_ERROR_OUT_OF_MEMORY, so a failed allocation returns NULL as malloc
# does; libFuzzer's own limits still catch real memory blow-ups (rss) and hangs (timeout).
export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1:strict_string_checks=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=suppressions=$PWD/tests/fuzz/lsan.supp  # libomp's own team memory, see there
mkdir -p "$dir/fuzz-logs" "$dir/fuzz-artifacts"
targets=()
for exe in "$dir"/tests/fuzz/fuzz_*; do
  [[ -x "$exe" && -f "$exe" ]] && targets+=("$(basename "$exe" | sed 's/^fuzz_//')")
done
[[ ${#targets[@]} -gt 0 ]] || { echo "fuzz tier: no fuzz targets were built" >&2; exit 1; }

run_target() {
  local name=$1 corpus="$dir/fuzz-corpus/$1" budget
  if [[ -n "$seconds" ]]; then
    budget=(-max_total_time="$seconds")
  else  # reproducible: fresh corpus, fixed seed and input count, a generous time cap as a safety net
    rm -rf "$corpus"
    budget=(-seed="${SFFT_FUZZ_SEED:-1}" -runs="${runs_of[$name]:-5000}" -max_total_time=600)
    export OMP_NUM_THREADS=1
  fi
  mkdir -p "$corpus"
  "$dir/tests/fuzz/fuzz_$name" "$corpus" "tests/fuzz/corpus/$name" "${budget[@]}" -timeout=25 \
    -rss_limit_mb=3072 -malloc_limit_mb=1048576 -max_len=4096 -print_final_stats=1 \
    -artifact_prefix="$dir/fuzz-artifacts/$name-" >"$dir/fuzz-logs/$name.log" 2>&1
}

# The gate: every corpus input once, deterministic.
gate_failed=()
for name in "${targets[@]}"; do
  inputs=(tests/fuzz/corpus/"$name"/*)
  if ! "$dir/tests/fuzz/fuzz_$name" "${inputs[@]}" -runs=1 >"$dir/fuzz-logs/$name.replay.log" 2>&1; then
    gate_failed+=("$name")
    echo "---- fuzz_$name: a corpus input violates the contract; last lines of $dir/fuzz-logs/$name.replay.log:" >&2
    tail -n 30 "$dir/fuzz-logs/$name.replay.log" >&2
  else
    echo "fuzz tier: fuzz_$name replayed ${#inputs[@]} corpus inputs, all clean"
  fi
done
if [[ ${#gate_failed[@]} -gt 0 ]]; then
  echo "fuzz tier: FAILED (corpus replay: ${gate_failed[*]})" >&2
  exit 1
fi

failed=()
pids=()
names=()
for name in "${targets[@]}"; do
  run_target "$name" &
  pids+=($!)
  names+=("$name")
  if [[ ${#pids[@]} -ge $jobs ]]; then
    wait "${pids[0]}" || failed+=("${names[0]}")
    pids=("${pids[@]:1}")
    names=("${names[@]:1}")
  fi
done
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || failed+=("${names[$i]}")
done

for name in "${targets[@]}"; do
  runs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$dir/fuzz-logs/$name.log" | grep -o '[0-9]*$' || echo '?')
  cov=$(grep -o 'cov: [0-9]*' "$dir/fuzz-logs/$name.log" | tail -1 | grep -o '[0-9]*$' || echo '?')
  verdict=clean
  [[ " ${failed[*]:-} " == *" $name "* ]] && verdict="FOUND SOMETHING"
  echo "fuzz tier: fuzz_$name $verdict after $runs inputs (${seconds:+limit $seconds s}${seconds:-seed ${SFFT_FUZZ_SEED:-1}}), coverage $cov edges"
done
if [[ ${#failed[@]} -gt 0 ]]; then
  for name in "${failed[@]}"; do
    echo "---- fuzz_$name found something; last lines of $dir/fuzz-logs/$name.log:" >&2
    grep -E 'CONTRACT VIOLATION|ERROR: |runtime error' "$dir/fuzz-logs/$name.log" | head -5 >&2
  done
  echo "fuzz tier: exploration findings (${failed[*]}): inputs in $dir/fuzz-artifacts/; replay with" \
       "$dir/tests/fuzz/fuzz_<name> <artifact>, fix, and add them to tests/fuzz/corpus as regression-*" >&2
  if [[ -n "$seconds" ]]; then
    echo "fuzz tier: FAILED" >&2
    exit 1
  fi
fi
echo "fuzz tier: corpus replay clean for ${#targets[@]} targets; took $((SECONDS - start)) s"
