#!/usr/bin/env bash
# normcheck bench and the reference's fast path end to end (issue 15): the bench reports a
# backend's GB/s beside a copy of the same bytes and the reference's elements per CPU-second,
# for one point or every combination of lists;
# bad usage exits 2; `run --reference-path mpfr` and the fast path give the same report; the
# report does not depend on the thread count; OMP_WAIT_POLICY set by the user is kept.
# Run by ctest from the source root with NORMCHECK set to the binary.
set -u
nc=${NORMCHECK:?set NORMCHECK to the normcheck binary}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
expect() {  # expect NAME WANT_RC CMD...
  local name=$1 want=$2; shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if [ "$rc" -eq "$want" ]; then pass=$((pass + 1)); else
    fail=$((fail + 1)); echo "FAIL $name: exit $rc, wanted $want"; head -20 "$tmp/out" "$tmp/err"; fi
}
contains() {  # contains NAME FILE PATTERN
  if grep -qE -- "$3" "$2"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL $1: no /$3/ in $2"; head -20 "$2"; fi
}

expect "bench cpu" 0 "$nc" bench --shape 64x768 --repeats 3 --threads 1
contains "GB/s and bytes" "$tmp/out" '^cpu layer_norm f32 \[64, 768\] on 1 thread: [0-9.e+]+ GB/s .*; [0-9]+ bytes\)'
contains "copy ratio" "$tmp/out" '^  copy of the same bytes: [0-9.e+]+ GB/s; ratio to copy [0-9.]+$'
contains "cpu row kernel" "$tmp/out" '^  cpu row kernel: x86-64(-v3|-v4)?, f16 by (F16C \(AVX(-512)?\)|software), bf16 by (AVX512-BF16|integer formula), streaming stores (available|off)$'
best_tier=$(sed -n 's/^  cpu row kernel: \([^,]*\),.*/\1/p' "$tmp/out")
# NORMCHECK_CPU_TIER lowers the kernel's instruction set (and every AVX-512 choice with it);
# a name that is not a tier, or a tier above the CPU's, is an error, never another tier.
expect "bench baseline tier" 0 env NORMCHECK_CPU_TIER=x86-64 "$nc" bench --shape 64x768 --repeats 2 --threads 1
contains "baseline tier ran" "$tmp/out" '^  cpu row kernel: x86-64, f16 by software, bf16 by integer formula, streaming stores off$'
expect "bad tier" 2 env NORMCHECK_CPU_TIER=avx2 "$nc" bench --shape 64x768 --repeats 2
contains "bad tier message" "$tmp/err" "^normcheck: NORMCHECK_CPU_TIER='avx2': expected x86-64-v4, x86-64-v3 or x86-64"
expect "bad tier run" 2 env NORMCHECK_CPU_TIER=x86-64-v5 "$nc" run cases/layer_norm/degenerate.toml
expect "bad tier, no fast kernel in the run" 2 env NORMCHECK_CPU_TIER="x86-64 " "$nc" run cases/layer_norm/degenerate.toml -b reference
expect "empty tier" 2 env NORMCHECK_CPU_TIER= "$nc" backends
expect "bench other op" 0 "$nc" bench --op group_norm --shape 8x64 --repeats 2
expect "no row kernel line for group_norm" 1 grep -q 'cpu row kernel' "$tmp/out"
expect "bench json" 0 "$nc" bench --shape 32x256 --dtype bf16 --op rms_norm --repeats 2 --format json
cp "$tmp/out" "$tmp/bench.json"
expect "bench json fields" 0 python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["op"] == "rms_norm" and j["dtype"] == "bf16" and j["repeats"] == 2, j
b = j["backend"]
# x [32, 256] bf16 read (and gamma [256] where the default convention has one), y written
assert b["bytes"] in (2 * (32 * 256 * 2), 2 * (32 * 256 * 2) + 256 * 2), b
assert b["gb_per_s"] > 0 and j["copy"]["gb_per_s"] > 0 and j["ratio_to_copy"] > 0 and b["nan_outputs"] == 0, j
' "$tmp/bench.json"
expect "bench reference" 0 "$nc" bench --reference --shape 16x768 --repeats 1
contains "reference rate" "$tmp/out" '^reference \(auto\) layer_norm f32 \[16, 768\]: [0-9.e+]+ elements per CPU-second'
contains "reference rows" "$tmp/out" '^  rows: 16 decided by the certified double-double path, 0 recomputed in MPFR$'
expect "bench reference mpfr" 0 "$nc" bench --reference --reference-path mpfr --shape 4x64 --repeats 1 --format json
cp "$tmp/out" "$tmp/ref.json"
expect "mpfr rows" 0 python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))["reference"]; assert r["rows_certified"] == 0 and r["path"] == "mpfr", r' "$tmp/ref.json"

# Lists: every combination measured in turn, then a summary table; JSON {"runs": [...]}.
expect "bench lists" 0 "$nc" bench --op layer_norm,rms_norm --dtype f32,bf16 --shape 4x64,8x32 --repeats 1 --warmup 0 --threads 1
cp "$tmp/out" "$tmp/lists.txt"
contains "summary header" "$tmp/lists.txt" '^op +dtype +shape +GB/s +copy GB/s +to copy +to oneDNN$'
expect "a block per point" 0 test "$(grep -cE '^cpu (layer_norm|rms_norm) (f32|bf16) \[(4, 64|8, 32)\] on 1 thread: ' "$tmp/lists.txt")" -eq 8
expect "a summary row per point" 0 test "$(grep -cE '^(layer_norm|rms_norm) +(f32|bf16) +\[(4, 64|8, 32)\] +[0-9.e+]+ +[0-9.e+]+ +[0-9.]+ +([0-9.]+|-)$' "$tmp/lists.txt")" -eq 8
expect "bench lists json" 0 "$nc" bench --op rms_norm --dtype f32,f16 --shape 4x64,2x128,3x96 --repeats 1 --warmup 0 --format json
cp "$tmp/out" "$tmp/lists.json"
expect "lists json fields" 0 python3 -c '
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
got = [(r["dtype"], r["shape"]) for r in runs]
assert got == [(d, s) for d in ("f32", "f16") for s in ("[4, 64]", "[2, 128]", "[3, 96]")], got
assert all(r["op"] == "rms_norm" and r["ratio_to_copy"] > 0 and "error" not in r for r in runs), runs
' "$tmp/lists.json"
# A point the backend cannot run: its error recorded, the other points still measured, exit 3.
expect "a point not run" 3 "$nc" bench -b mutant:eps_outside_sqrt --op layer_norm,group_norm,rms_norm --shape 4x64 --repeats 1 --warmup 0 --format json
cp "$tmp/out" "$tmp/partial.json"
expect "the others measured" 0 python3 -c '
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
assert [r["op"] for r in runs] == ["layer_norm", "group_norm", "rms_norm"], runs
assert "ratio_to_copy" in runs[0] and "ratio_to_copy" in runs[2] and "error" not in runs[0], runs
assert "no forward kernel for group_norm" in runs[1]["error"] and "ratio_to_copy" not in runs[1], runs
' "$tmp/partial.json"
# A failure in a point's timed runs is that point's error; the next point is still measured.
fw="cmd:python3 $PWD/tests/cli/fake_worker.py"
expect "a timed run fails" 3 "$nc" bench -b "$fw error_second" --op layer_norm,rms_norm --dtype f64 --shape 4x8 --repeats 1 --warmup 0 --format json
cp "$tmp/out" "$tmp/timed.json"
expect "timed failure kept, next measured" 0 python3 -c '
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
assert [r["op"] for r in runs] == ["layer_norm", "rms_norm"], runs
assert "second problem fails" in runs[0]["error"] and "in a timed run" in runs[0]["error"], runs[0]
assert "ratio_to_copy" in runs[1] and "error" not in runs[1], runs[1]
' "$tmp/timed.json"
# NaN outputs: exit 1, marked in the summary and in each point's JSON.
expect "NaN outputs" 1 "$nc" bench -b "$fw nan" --op layer_norm,rms_norm --dtype f64 --shape 4x8 --repeats 1 --warmup 0
expect "NaN marked per point" 0 test "$(grep -c 'NaN OUTPUTS: a broken kernel$' "$tmp/out")" -eq 2
# NaN in one point and another not run: 3 (as run ranks an error over a failure), the NaN still marked.
expect "NaN and not run" 3 "$nc" bench -b "$fw nan" --op layer_norm,group_norm --dtype f64 --shape 4x8 --repeats 1 --warmup 0
contains "NaN still marked" "$tmp/out" '^layer_norm .*NaN OUTPUTS: a broken kernel$'
# Blanks around items are dropped; a shape beyond Tensor's 2^36 elements is exit 2 before anything runs.
expect "blanks in lists" 0 "$nc" bench --op " layer_norm , rms_norm" --shape "4x64, 8x32" --repeats 1 --warmup 0 --format json
expect "too many elements" 2 "$nc" bench --shape 4x64,4611686018427387904x4 --repeats 1 --warmup 0
contains "too many elements named" "$tmp/err" "--shape: '4611686018427387904x4' has more than 2\^36 elements"
expect "reference lists" 0 "$nc" bench --reference --op layer_norm,l2_normalize --shape 4x64 --repeats 1
contains "reference summary header" "$tmp/out" '^op +dtype +shape +elements/CPU-s +certified +MPFR$'
contains "reference summary row" "$tmp/out" '^l2_normalize +f32 +\[4, 64\] +[0-9.e+]+ +[0-9]+ +[0-9]+$'
# A bad item anywhere in a list is exit 2 before anything is measured.
for bad in "--dtype f32,,bf16" "--dtype f32,f128" "--op layer_norm,nosuch" "--shape 4x64,0x8" "--shape 4x64," "--op ,layer_norm"; do
  # shellcheck disable=SC2086
  expect "bad list item: $bad" 2 "$nc" bench $bad --repeats 1 --warmup 0
  cp "$tmp/err" "$tmp/bad_err"
  expect "nothing measured before: $bad" 0 test ! -s "$tmp/out"
done
contains "the empty item named" "$tmp/bad_err" "--op: ',layer_norm' has an empty item"

expect "bad shape" 2 "$nc" bench --shape 0x16
contains "bad shape message" "$tmp/err" "--shape: '0x16' is not ROWSxWIDTH"
expect "bad shape text" 2 "$nc" bench --shape 16x16x2
expect "bad op" 2 "$nc" bench --op nosuch
expect "bad dtype" 2 "$nc" bench --dtype f128
expect "bad format" 2 "$nc" bench --format xml
expect "bad path" 2 "$nc" bench --reference --reference-path fast
expect "reference backend refused" 2 "$nc" bench --backend reference
contains "reference backend why" "$tmp/err" 'ground truth'
expect "unsupported is exit 3" 3 "$nc" bench --backend cuda --shape 4x16

# The fast path and MPFR give the same report: every verdict, error and count; the stab
# values within 1e-12 relative (their condition magnitudes are a bound, evaluated in binary64
# on the fast path: (m + 16) 2^-52, row_norm.hpp cond_t); the sign of a NaN printed aside.
cases="cases/layer_norm cases/rms_norm"
expect "run auto" 0 "$nc" run $cases --format json --output "$tmp/auto.json"
contains "fast path counted" "$tmp/err" '^reference: [0-9]+ rows decided by the certified double-double path, [0-9]+ recomputed in MPFR'
expect "run mpfr" 0 "$nc" run $cases --format json --output "$tmp/mpfr.json" --reference-path mpfr
expect "no fast path under mpfr" 1 grep -q 'certified double-double' "$tmp/err"
expect "run 1 thread" 0 env OMP_NUM_THREADS=1 "$nc" run $cases --format json --output "$tmp/one.json"
expect "run passive kept active" 0 env OMP_WAIT_POLICY=active "$nc" run $cases --format json --output "$tmp/active.json"
expect "bad reference path" 2 "$nc" run $cases --reference-path fast
# The kernel's lower tiers give the same report (the same bits: -ffp-contract=off).
expect "run baseline tier" 0 env NORMCHECK_CPU_TIER=x86-64 "$nc" run $cases --format json --output "$tmp/baseline.json"
if [ "$best_tier" != x86-64 ]; then
  expect "run x86-64-v3 tier" 0 env NORMCHECK_CPU_TIER=x86-64-v3 "$nc" run $cases --format json --output "$tmp/v3.json"
fi
strip='import json, re, sys
def same(a, b, path):
    if isinstance(a, dict) and isinstance(b, dict):
        keys = (set(a) | set(b)) - {"seconds", "identity"}
        return all(k in a and k in b and same(a[k], b[k], path + "/" + k) for k in keys)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(u, v, path) for u, v in zip(a, b))
    if isinstance(a, float) and isinstance(b, float) and "stab" in path:
        return abs(a - b) <= 1e-12 * max(abs(a), abs(b))
    if isinstance(a, str) and isinstance(b, str):
        n = lambda s: re.sub(r"-nan", "nan", s)
        return n(a) == n(b) or ("stab" in n(a) and re.sub(r"[0-9.e+-]+", "#", n(a)) == re.sub(r"[0-9.e+-]+", "#", n(b)))
    if a != b: print(path, a, b)
    return a == b
a, b = (json.load(open(f)) for f in sys.argv[1:3])
assert same(a, b, ""), "reports differ"
assert len(a["cases"]) > 200, "an empty report"'
expect "mpfr = fast path" 0 python3 -c "$strip" "$tmp/auto.json" "$tmp/mpfr.json"
expect "1 thread = 2 threads" 0 python3 -c "$strip" "$tmp/auto.json" "$tmp/one.json"
expect "active = passive" 0 python3 -c "$strip" "$tmp/auto.json" "$tmp/active.json"
expect "baseline tier = $best_tier" 0 python3 -c "$strip" "$tmp/auto.json" "$tmp/baseline.json"
[ "$best_tier" = x86-64 ] || expect "x86-64-v3 tier = $best_tier" 0 python3 -c "$strip" "$tmp/auto.json" "$tmp/v3.json"
# (identity aside: the cpu backend's names the tier that ran, so a report says which code it judged)
tier_of='import json, sys; print([b["identity"] for b in json.load(open(sys.argv[1]))["backends"] if b["name"] == "cpu"][0])'
python3 -c "$tier_of" "$tmp/auto.json" > "$tmp/out"
contains "report names the tier" "$tmp/out" "^normcheck [0-9.]+ \\(row kernel $best_tier, f16 by .*, streaming stores (available|off)\\)$"
python3 -c "$tier_of" "$tmp/baseline.json" > "$tmp/out"
contains "report names the lowered tier" "$tmp/out" '^normcheck [0-9.]+ \(row kernel x86-64, f16 by software, bf16 by integer formula, streaming stores off\)$'

echo "bench_reference_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
