#!/usr/bin/env bash
# Builds normcheck and its tests with AddressSanitizer and UndefinedBehaviorSanitizer in
# build-asan (g++, CUDA off) and runs their ctest (issue 18 section 5).
#
# Usage: tools/sanitize.sh [extra ctest arguments, e.g. -R npy]
# Env:   JOBS (build and ctest parallelism, default 2), CXX (default g++).
# Flags: -fsanitize=address,undefined -fno-omit-frame-pointer at -O0 -g1 (line tables: reports
#        name file and line), with
#        _GLIBCXX_ASSERTIONS (bounds checks in std::string/vector operator[], back(), front():
#        the out-of-range string access of issue 19 stays inside an SSO buffer, where ASan
#        alone cannot see it) and assert() on (nlohmann's JSON_ASSERT included).
# Every sanitizer report ends the process: UBSAN_OPTIONS=halt_on_error=1 (the first UB is
# an error), ASAN_OPTIONS=detect_leaks=1. tests/cli/*.sh run the sanitized binary too.
set -euo pipefail
cd "$(dirname "$0")/.."
b=build-asan
mkdir -p "$b"
jobs=${JOBS:-2}
san="-fsanitize=address,undefined -fno-omit-frame-pointer"
# One instruction-set tier of the CPU row kernel (NORMCHECK_NO_CPU_DISPATCH): cpu_rows_fast.cpp
# compiles the same source once per tier (x86-64-v4, -v3, baseline), each inlined whole
# (flatten): under ASan + UBSan its three tiers had not compiled after 31 minutes on this
# 2-core machine (CI has 90 minutes for everything). The sanitizers check the source's memory
# accesses and arithmetic, which are the same at each tier; the instruction-specific helpers
# (F16C, AVX-512 and streaming stores, AVX512-BF16) are still built and taken where the CPU
# has them. This build's tier tests: x86-64-v3 is Skipped, x86-64 is left out below (the
# release build's ctest runs every tier).
# -O0 -g1, not -O1 -g, and no flatten (NORMCHECK_NO_FLATTEN) in cpu_rows_fast.cpp: the build is
# most of this script's time, and at -O1 -g under the sanitizers it took 38 minutes on the
# 2-core CI machine (the reference's MPFR templates: 1-2.5 minutes per op file; -O0 compiles
# them 15x faster). The sanitizers see more at -O0, where nothing is optimized away; the
# tests run slower, which the volume exclusions below pay for.
tier="-DNORMCHECK_NO_CPU_DISPATCH -DNORMCHECK_NO_FLATTEN"
# C++ only: the C plugins in tools/plugins are the third-party code the plugin tests contain,
# some crashing on purpose (UBSan would stop libnc_fault_segfault's null store before the
# SIGSEGV that tests/cli/backends_test.sh expects); they run inside the sanitized host.
cmake -S . -B "$b" -DCMAKE_BUILD_TYPE=Debug -DNORMCHECK_CUDA=OFF -DCMAKE_CXX_COMPILER="${CXX:-g++}" \
  -DCMAKE_CXX_FLAGS_DEBUG="-O0 -g1 -D_GLIBCXX_ASSERTIONS" -DCMAKE_C_FLAGS_DEBUG="-O0 -g1" \
  -DCMAKE_CXX_FLAGS="$san $tier" -DCMAKE_C_FLAGS="" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
  >"$b/configure.log" 2>&1 ||
  { cat "$b/configure.log"; exit 2; }
# Catch2's test discovery runs the test binary at build time: under the same options.
# handle_segv=0: a plugin that segfaults on purpose inside the sanitized worker must die of
# SIGSEGV, as it does in a normal build, not exit 1 through ASan's handler: the tests check
# that the crash is reported by its signal.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:handle_segv=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
cmake --build "$b" -j "$jobs"
cd "$b"
# Left out here, run by the release ctest (README's test command), because what they add is
# volume: the same code over more inputs, checked for bit-for-bit agreement, which the
# sanitizers do not check and the release build does:
# - adapters_onnxruntime_suite: the default suite through ONNX Runtime against its findings
#   list (the worker protocol it uses is sanitized by adapters_numpy and the cli tests);
# - reference_fast_path_no_fma: every "reference fast path" test again with Dekker's
#   TwoProduct instead of the FMA (scalar binary64 arithmetic: nothing for ASan to see);
# - "reference fast path: every bundled ...": the certified path against MPFR on every
#   bundled case (the reference, its certified path and MPFR where that falls back, runs
#   under the sanitizers on every bundled case in "bundled cases: reference and cpu pass
#   every case" and the cli tests; the MPFR path alone in the "reference:" tests);
# - cpu_fast_rows_x86_64: "cpu fast rows" at the baseline tier, which is the only tier of
#   this build (NORMCHECK_NO_CPU_DISPATCH): the same run twice.
# The random equivalence tests draw 300 rows per kind here (NORMCHECK_EQUIV_ROWS; 3000 in the
# release ctest).
export NORMCHECK_EQUIV_ROWS=${NORMCHECK_EQUIV_ROWS:-300}
ctest --output-on-failure -j "$jobs" \
  -E '^(adapters_onnxruntime_suite|reference_fast_path_no_fma|cpu_fast_rows_x86_64|reference fast path: every bundled .*)$' "$@"
