#!/bin/sh
# The default suite (bundled case files and matrix:quick) through ONNX Runtime
# (tools/adapters/onnxruntime_backend.py) against its recorded findings
# (tools/adapters/onnxruntime_expected_failures.toml, README "Findings"): a failure that is not
# a recorded finding, or an ERROR, fails; an unexpected pass (XPASS) or a stale entry is printed.
# A case added to the suite that ONNX Runtime fails is caught here, by README's test command,
# and not first by CI (stop 42: three new matrix points failed only in .ci/run).
# Usage, from anywhere: tests/adapters/test_onnxruntime_suite.sh [NORMCHECK]   (default build/normcheck)
# Env: REPORT_DIR=DIR keeps onnxruntime.txt and onnxruntime.json there (default: a temporary
#      directory); REQUIRE=1 makes a missing onnxruntime a failure (exit 1) instead of a skip.
# Exit 0: the suite passed; 1: it failed; 77: skipped (no python3 with numpy and onnxruntime).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
N=${1:-$ROOT/build/normcheck}
case $N in /*) ;; *) N=$(pwd)/$N ;; esac
cd "$ROOT" || exit 1
if ! python3 -c "import numpy, onnx, onnxruntime" 2>/dev/null; then
  echo "SKIP: python3 with numpy, onnx and onnxruntime not found (tools/setup_adapters.sh installs them)"
  [ "${REQUIRE:-0}" = 1 ] && exit 1
  exit 77
fi
if [ ! -x "$N" ]; then echo "FAIL: no normcheck binary at $N"; exit 1; fi
if [ -n "${REPORT_DIR:-}" ]; then
  D=$REPORT_DIR; mkdir -p "$D" || exit 1
else
  D=$(mktemp -d); trap 'rm -rf "$D"' EXIT
fi
"$N" run --backend "cmd:python3 tools/adapters/onnxruntime_backend.py" \
  --expect-failures tools/adapters/onnxruntime_expected_failures.toml \
  --json "$D/onnxruntime.json" --no-progress > "$D/onnxruntime.txt"
rc=$?
if [ $rc -ne 0 ]; then
  grep -A3 '^FAILED\|^ERROR' "$D/onnxruntime.txt" | head -n 60
  tail -n 8 "$D/onnxruntime.txt"
  echo "FAIL: normcheck run through ONNX Runtime exited $rc"
  exit 1
fi
tail -n 8 "$D/onnxruntime.txt"
# A pass must have checked something: 649 case runs passed on 2026-12-07 (onnxruntime 1.32.0);
# far fewer means the adapter began skipping what it ran (a skip is not a failure).
python3 - "$D/onnxruntime.json" <<'PY' || exit 1
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
ok = s["exit_code"] == 0 and s["failed"] == 0 and s["errors"] == 0 and s["passed"] >= 600
print(("ok" if ok else "FAIL") + f": {s['passed']} passed, {s['expected_failures']} expected failures, "
      f"{s['skipped']} skipped of {s['checks']} (at least 600 passed expected)")
sys.exit(0 if ok else 1)
PY
exit 0
