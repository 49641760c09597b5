#!/usr/bin/env bash
# tools/gpu-check.sh RESULTS_DIR
#
# The checks of the CUDA backend (issue 8) that need a GPU, as one script for a machine
# with an NVIDIA H100/H200 (sm_90), the CUDA toolkit and normcheck's build dependencies:
#   1. environment (nvidia-smi, nvcc, torch) -> RESULTS_DIR/env.txt
#   2. build for sm_90 (cmake + make) into $BUILD_DIR (default: <repo>/build-gpu)
#   3. ctest: unit tests, incl. "the device matches the emulation bit for bit", and the CLI
#   4. normcheck run --backend cuda --strict over the bundled cases: 0 failures required
#   5. the PyTorch adapter on cuda, when tools/adapters/torch_backend.py exists
#   6. normcheck_bench: layer_norm / rms_norm forward, rows 16384, d 768..16384, bf16 and
#      f32, GB/s vs a cudaMemcpy D2D of the same bytes and vs torch (when importable)
# Every step's output goes to RESULTS_DIR; the step summary and the benchmark table are
# printed last. Exit status: 0 when every required step passed, 1 otherwise.
#
# Environment: BUILD_DIR, JOBS (default nproc), CUDA_ARCHS (default "90-real;90-virtual"),
# BENCH_ROWS (16384), BENCH_D (768,4096,8192,16384), BENCH_ITERS (30), PYTHON (python3).
set -uo pipefail

if [ $# -ne 1 ] || [ "$1" = "-h" ] || [ "$1" = "--help" ]; then
  sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
mkdir -p "$1" || exit 2
RESULTS=$(cd "$1" && pwd)
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD_DIR:-$ROOT/build-gpu}
JOBS=${JOBS:-$(nproc)}
ARCHS=${CUDA_ARCHS:-90-real;90-virtual}
ROWS=${BENCH_ROWS:-16384}
DS=${BENCH_D:-768,4096,8192,16384}
ITERS=${BENCH_ITERS:-30}
PY=${PYTHON:-python3}
export PATH="$PATH:/usr/local/cuda/bin"

declare -a SUMMARY=()
FAILED=0
record() {  # record STEP STATUS NOTE
  SUMMARY+=("$(printf '%-34s %-8s %s' "$1" "$2" "$3")")
  [ "$2" = "FAIL" ] && FAILED=1
  return 0
}
banner() { printf '\n==== %s ====\n' "$1"; }

# 1. environment --------------------------------------------------------------------------
banner "environment"
{
  date -u
  echo "repo: $ROOT ($(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null) $(git -C "$ROOT" rev-parse --abbrev-ref HEAD 2>/dev/null))"
  nvidia-smi 2>&1 || echo "nvidia-smi: not available"
  nvcc --version 2>&1 || echo "nvcc: not found"
  cmake --version 2>&1 | head -1
  $PY -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "device:", torch.cuda.is_available() and torch.cuda.get_device_name(0))' 2>&1 || echo "torch: not importable"
} > "$RESULTS/env.txt" 2>&1
cat "$RESULTS/env.txt"

# 2. build --------------------------------------------------------------------------------
banner "build ($BUILD, CUDA architectures $ARCHS)"
start=$(date +%s)
if cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DNORMCHECK_CUDA=ON "-DCMAKE_CUDA_ARCHITECTURES=$ARCHS" \
     > "$RESULTS/build.txt" 2>&1 &&
   timeout 540 make -C "$BUILD" -j"$JOBS" >> "$RESULTS/build.txt" 2>&1; then
  if [ -x "$BUILD/normcheck_bench" ]; then
    record "build" "PASS" "$(( $(date +%s) - start )) s"
  else
    record "build" "FAIL" "built without CUDA (nvcc not found by CMake?): see build.txt"
  fi
else
  record "build" "FAIL" "see build.txt"
fi
tail -5 "$RESULTS/build.txt"
NC="$BUILD/normcheck"
if [ ! -x "$NC" ] || [ ! -x "$BUILD/normcheck_bench" ]; then
  banner "summary"
  printf '%s\n' "${SUMMARY[@]}"
  echo "build failed: nothing else can run (RESULTS: $RESULTS)"
  exit 1
fi

# 3. ctest --------------------------------------------------------------------------------
banner "ctest"
if (cd "$BUILD" && timeout 600 ctest --output-on-failure -j"$JOBS") > "$RESULTS/ctest.txt" 2>&1; then
  record "ctest" "PASS" "$(grep -E 'tests passed' "$RESULTS/ctest.txt" | tail -1)"
else
  record "ctest" "FAIL" "$(grep -E 'tests passed|tests failed' "$RESULTS/ctest.txt" | tail -1); see ctest.txt"
fi
# The bit-for-bit comparison of device and emulation, on its own for the record.
timeout 300 "$BUILD/tests/normcheck_tests" "[device]" -s > "$RESULTS/device_vs_emulation.txt" 2>&1
rc=$?
if [ $rc -eq 0 ] && ! grep -q "no device, not checked" "$RESULTS/device_vs_emulation.txt"; then
  record "device == emulation (bitwise)" "PASS" "$(grep -E '^All tests passed' "$RESULTS/device_vs_emulation.txt" | tail -1)"
else
  record "device == emulation (bitwise)" "FAIL" "rc=$rc; see device_vs_emulation.txt"
fi
tail -3 "$RESULTS/ctest.txt"

# 4. the bundled cases on the cuda backend -------------------------------------------------
banner "normcheck run --backend cuda --strict"
(cd "$ROOT" && timeout 300 "$NC" run --backend cuda --strict --no-color) > "$RESULTS/cuda_run.txt" 2>&1
rc=$?
(cd "$ROOT" && "$NC" run --backend cpu,cuda --format junit -o "$RESULTS/cuda_run_junit.xml" --no-color) > /dev/null 2>&1
(cd "$ROOT" && "$NC" run --backend cpu,cuda --format json -o "$RESULTS/cuda_run.json" --no-color) > /dev/null 2>&1
tail -4 "$RESULTS/cuda_run.txt"
if [ $rc -eq 0 ]; then
  record "run --backend cuda --strict" "PASS" "$(tail -1 "$RESULTS/cuda_run.txt")"
else
  record "run --backend cuda --strict" "FAIL" "exit $rc: $(tail -1 "$RESULTS/cuda_run.txt")"
fi

# 5. the PyTorch adapter on cuda -----------------------------------------------------------
banner "PyTorch adapter"
ADAPTER="$ROOT/tools/adapters/torch_backend.py"
if [ ! -f "$ADAPTER" ]; then
  echo "NOTE: $ADAPTER does not exist in this tree: adapter step skipped"
  record "torch adapter (cuda)" "SKIPPED" "tools/adapters/torch_backend.py not in this tree"
elif ! $PY -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' > /dev/null 2>&1; then
  echo "NOTE: torch with CUDA not importable: adapter step skipped"
  record "torch adapter (cuda)" "SKIPPED" "torch with CUDA not importable"
else
  # Assumed interface: the adapter is the backend named "torch" and reads its device from
  # NORMCHECK_TORCH_DEVICE. Adjust here if the adapter's branch settled on another one.
  (cd "$ROOT" && NORMCHECK_TORCH_DEVICE=cuda timeout 300 "$NC" run --backend torch --strict --no-color) \
    > "$RESULTS/torch_adapter_run.txt" 2>&1
  rc=$?
  tail -4 "$RESULTS/torch_adapter_run.txt"
  if [ $rc -eq 0 ]; then record "torch adapter (cuda)" "PASS" "$(tail -1 "$RESULTS/torch_adapter_run.txt")"
  else record "torch adapter (cuda)" "FAIL" "exit $rc; see torch_adapter_run.txt (interface assumed: --backend torch)"; fi
fi

# 6. benchmark ----------------------------------------------------------------------------
banner "benchmark"
TORCH_CSV=""
if $PY -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' > /dev/null 2>&1; then
  TORCH_CSV="$RESULTS/torch_bench.csv"
  timeout 300 "$PY" - "$ROWS" "$DS" "$ITERS" 5 "$TORCH_CSV" > "$RESULTS/torch_bench.txt" 2>&1 <<'PYEOF'
# torch's native forward kernels, timed like normcheck_bench: CUDA events around each call,
# a 256 MiB L2 flush before each, warm-up, median. Prints which rms_norm it timed.
import sys
import torch
import torch.nn.functional as F

rows, ds, iters, warm, out = int(sys.argv[1]), [int(v) for v in sys.argv[2].split(",")], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")

def median_us(f):
    for _ in range(warm):
        f()
    ts = []
    for i in range(iters):
        flush.fill_(i & 0xFF)
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); f(); b.record(); b.synchronize()
        ts.append(a.elapsed_time(b) * 1e3)
    ts.sort()
    return ts[len(ts) // 2]

has_rms = hasattr(F, "rms_norm")
print("torch", torch.__version__, "| rms_norm:", "F.rms_norm" if has_rms else "not available (torch < 2.4)")
with open(out, "w") as fo:
    fo.write("op,dtype,rows,d,median_us\n")
    for name, dt in (("bf16", torch.bfloat16), ("f32", torch.float32)):
        for d in ds:
            x = torch.randn(rows, d, device="cuda", dtype=dt)
            w = torch.randn(d, device="cuda", dtype=dt)
            b = torch.randn(d, device="cuda", dtype=dt)
            t = median_us(lambda: F.layer_norm(x, (d,), w, b, 1e-5))
            fo.write(f"layer_norm,{name},{rows},{d},{t:.3f}\n")
            print(f"layer_norm {name} {rows}x{d}: {t:.2f} us")
            if has_rms:
                t = median_us(lambda: F.rms_norm(x, (d,), w, 1e-5))
                fo.write(f"rms_norm,{name},{rows},{d},{t:.3f}\n")
                print(f"rms_norm {name} {rows}x{d}: {t:.2f} us")
            del x
PYEOF
  rc=$?
  cat "$RESULTS/torch_bench.txt"
  if [ $rc -ne 0 ]; then
    record "torch timings" "FAIL" "exit $rc; see torch_bench.txt (benchmark runs without them)"
    TORCH_CSV=""
  else
    record "torch timings" "PASS" "$(head -1 "$RESULTS/torch_bench.txt")"
  fi
else
  echo "NOTE: torch with CUDA not importable: no torch column"
  record "torch timings" "SKIPPED" "torch with CUDA not importable"
fi
# shellcheck disable=SC2054  # the commas are the option values d1,d2,...
BENCH_ARGS=(--rows "$ROWS" --d "$DS" --dtypes bf16,f32 --iters "$ITERS" --out "$RESULTS/bench.csv")
[ -n "$TORCH_CSV" ] && BENCH_ARGS+=(--torch-csv "$TORCH_CSV")
timeout 420 "$BUILD/normcheck_bench" "${BENCH_ARGS[@]}" > "$RESULTS/bench.txt" 2>&1
rc=$?
if [ $rc -eq 0 ]; then record "normcheck_bench" "PASS" "bench.csv, bench.txt"
else record "normcheck_bench" "FAIL" "exit $rc (1: NaN in outputs, 3: CUDA error); see bench.txt"; fi

# summary ---------------------------------------------------------------------------------
banner "summary (full results in $RESULTS)"
printf '%s\n' "${SUMMARY[@]}" | tee "$RESULTS/summary.txt"
banner "benchmark"
sed -n '/^op /,$p' "$RESULTS/bench.txt"
[ -s "$RESULTS/bench.txt" ] && ! grep -q '^op ' "$RESULTS/bench.txt" && tail -5 "$RESULTS/bench.txt"
exit $FAILED
