#!/usr/bin/env bash
# Builds the libFuzzer harnesses (tests/fuzz) with clang, ASan and UBSan in build-fuzz and
# runs each for a bounded time, one after the other (issue 18 section 5: hostile input
# never crashes the gate).
#
# Usage: tools/fuzz.sh [SECONDS_PER_HARNESS]   (default 60)
# Env:   JOBS (build parallelism, default 2), CXX_FUZZ (default clang++),
#        FUZZ_ONLY="fuzz_npy fuzz_merge" (a subset of the harnesses),
#        FUZZ_RUNS=N (stop each harness after N executions, or at SECONDS, whichever first:
#        FUZZ_RUNS=1000000 tools/fuzz.sh 1800 is the campaign of issue 19's "Done when").
# Needs: tools/setup.sh --fuzz: clang, its libFuzzer/ASan/UBSan runtimes (Debian 12:
#        libclang-rt-14-dev, which provides /usr/lib/llvm-14/lib/clang/14*/lib/linux/
#        libclang_rt.fuzzer-*.a) and OpenMP for clang (libomp-dev).
# Corpus: build-fuzz/corpus/<harness>, seeded from tests/fuzz/corpus/<harness> (regression
#        inputs and hand-made seeds), the bundled cases/, golden/ and tests/data files, and
#        small .npy/.safetensors/worker replies written by normcheck_fuzz_seeds; it grows
#        across runs. Findings: build-fuzz/findings/<harness>-{crash,leak,timeout,oom}-*.
# Prints executions and findings per harness; exits 1 on any finding (crash, uncaught
# exception, sanitizer report, leak, timeout > 10 s, RSS > 2048 MB), 2 on a setup error.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
[[ "$secs" =~ ^[0-9]+$ ]] || { echo "usage: tools/fuzz.sh [SECONDS_PER_HARNESS]" >&2; exit 2; }
[[ "${FUZZ_RUNS:-0}" =~ ^[0-9]+$ ]] || { echo "fuzz: FUZZ_RUNS must be a count of executions" >&2; exit 2; }
cxx=${CXX_FUZZ:-clang++}
cc=${CXX_FUZZ:-clang++}
cc=${cc/clang++/clang}
if ! command -v "$cxx" >/dev/null; then
  echo "fuzz: $cxx not found (tools/setup.sh --fuzz installs clang libclang-rt-14-dev libomp-dev)" >&2
  exit 2
fi
if ! echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }' |
    "$cxx" -x c++ -fsanitize=fuzzer,address,undefined - -o /tmp/normcheck-fuzz-probe.$$ 2>/dev/null; then
  echo "fuzz: $cxx cannot link -fsanitize=fuzzer,address,undefined (tools/setup.sh --fuzz installs libclang-rt-14-dev)" >&2
  exit 2
fi
rm -f /tmp/normcheck-fuzz-probe.$$

b=build-fuzz
mkdir -p "$b"
cmake -S . -B "$b" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_C_COMPILER="$cc" \
  -DNORMCHECK_FUZZ=ON -DNORMCHECK_TESTS=OFF -DNORMCHECK_CUDA=OFF >"$b/configure.log" 2>&1 ||
  { cat "$b/configure.log"; exit 2; }
cmake --build "$b" -j "${JOBS:-2}" --target normcheck_fuzzers

# harness, -max_len, dictionary (- for none)
harnesses=(
  "fuzz_case_file 8192 toml.dict"
  "fuzz_npy 4096 npy.dict"
  "fuzz_safetensors 4096 json.dict"
  "fuzz_merge 16384 json.dict"
  "fuzz_worker_reply 4096 json.dict"
  "fuzz_plugin_frame 4096 -"
)

# Seed corpus.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
gen="$b/seeds"
rm -rf "$gen"
"$b/tests/fuzz/normcheck_fuzz_seeds" "$gen" >/dev/null
for h in "${harnesses[@]}"; do
  read -r name _ _ <<<"$h"
  mkdir -p "$b/corpus/$name" "$b/findings"
  short=${name#fuzz_}
  [ -d "tests/fuzz/corpus/$short" ] && cp -f tests/fuzz/corpus/"$short"/* "$b/corpus/$name/" 2>/dev/null || true
  case $short in
    case_file) find cases tests/data -name '*.toml' -size -8k -exec cp -f {} "$b/corpus/$name/" \; ;;
    npy) cp -f "$gen"/npy/* "$b/corpus/$name/"
         find cases -name '*.npy' -size -4k -exec cp -f {} "$b/corpus/$name/" \; ;;
    safetensors) cp -f "$gen"/safetensors/* "$b/corpus/$name/" ;;
    merge) find golden cases -name '*.json' -size -16k -exec cp -f {} "$b/corpus/$name/" \; ;;
    worker_reply) cp -f "$gen"/worker_reply/* "$b/corpus/$name/" ;;
    plugin_frame) cp -f "$gen"/plugin_frame/* "$b/corpus/$name/" ;;
  esac
done

# Run.
only=${FUZZ_ONLY:-}
summary=()
failed=0
for h in "${harnesses[@]}"; do
  read -r name maxlen dict <<<"$h"
  if [ -n "$only" ] && [[ " $only " != *" $name "* ]]; then continue; fi
  log="$b/findings/$name.log"
  extra_args=()
  [ -n "${FUZZ_RUNS:-}" ] && extra_args+=("-runs=$FUZZ_RUNS")
  [ "$dict" != - ] && extra_args+=("-dict=$PWD/tests/fuzz/$dict")
  before=$(ls "$b/findings" | grep -c "^$name-" || true)
  echo "fuzz: $name for ${secs}s (-max_len=$maxlen)"
  rc=0
  # Absolute paths: fuzz_worker_reply changes its working directory during each input.
  "$b/tests/fuzz/$name" "$PWD/$b/corpus/$name" -max_total_time="$secs" -max_len="$maxlen" -rss_limit_mb=2048 \
    -timeout=10 "${extra_args[@]}" -print_final_stats=1 -artifact_prefix="$PWD/$b/findings/$name-" \
    >"$log" 2>&1 || rc=$?
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || true)
  after=$(ls "$b/findings" | grep -c "^$name-" || true)
  found=$((after - before))
  if [ "$rc" -ne 0 ] && [ "$found" -eq 0 ]; then found=1; fi  # died without an artifact: still a finding
  summary+=("$(printf '%-20s %12s executions  %d findings  (exit %d)' "$name" "${execs:-?}" "$found" "$rc")")
  if [ "$found" -ne 0 ]; then
    failed=1
    echo "fuzz: $name FOUND something (log: $log):"
    grep -E 'ERROR: |SUMMARY: |runtime error|uncaught|Test unit written' "$log" | head -20 || tail -30 "$log"
  fi
done
echo
echo "fuzz summary (${secs}s${FUZZ_RUNS:+ or $FUZZ_RUNS executions} per harness; rerun a finding: $b/tests/fuzz/<harness> <file>):"
printf '  %s\n' "${summary[@]}"
exit "$failed"
