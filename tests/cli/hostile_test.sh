#!/usr/bin/env bash
# Hostile input and false passes (issue 19), end to end: each block failed before its fix
# (exit 0 on a check that could not pass, or an internal error, exit 3, on bad input). Also
# normcheck fuzz's exit codes and case file (issue 12). Run by ctest from the source root
# with NORMCHECK set.
set -u
nc=${NORMCHECK:?set NORMCHECK to the normcheck binary}
nc=$(cd "$(dirname "$nc")" && pwd)/$(basename "$nc")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
src_w=cases/layer_norm/worked_examples.toml
expect() {  # expect NAME WANT_RC CMD...
  local name=$1 want=$2; shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if [ "$rc" -eq "$want" ]; then pass=$((pass + 1)); else
    fail=$((fail + 1)); echo "FAIL $name: exit $rc, wanted $want"; tail -n 15 "$tmp/out" "$tmp/err"; fi
}
contains() {  # contains NAME FILE PATTERN
  if grep -qE -- "$3" "$2"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL $1: no /$3/ in $2"; tail -n 15 "$2"; fi
}

# ---- an nmse gate never passes a non-finite mismatch ------------------------------------
cat >"$tmp/nan.toml" <<'T'
[[case]]
name = "nanx"
op = "layer_norm"
dtype = "f64"
convention = { eps = 0.0 }
inputs.x = { values = [2, 2, 2, 2] }
expect.gate = { metric = "nmse", max = 1e-6 }
recorded.zeros.y = { shape = [4], values = [0, 0, 0, 0], dtype = "f64" }
T
expect "nmse: zeros where the exact output is NaN" 1 "$nc" run --no-progress "$tmp/nan.toml" -b zeros
contains "nmse is infinite" "$tmp/out" "nmse = inf"

# ---- compare: an output of another shape than its input fails ----------------------------
python3 - "$tmp" <<'P'
import json, os, struct, sys
def npy(path, shape, values):  # a little-endian float64 .npy, version 1.0
    h = "{'descr': '<f8', 'fortran_order': False, 'shape': (%s), }" % "".join(f"{d}, " for d in shape)
    h = h + " " * (63 - (len(h) + 10) % 64) + "\n"
    open(path, "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode() + struct.pack(f"<{len(values)}d", *values))
for side in "ab":
    d = os.path.join(sys.argv[1], "c" + side)
    os.makedirs(d)
    npy(os.path.join(d, "l.input.npy"), [2, 4], [1, 2, 3, 4, 5, 6, 7, 9])
    npy(os.path.join(d, "l.output.npy"), [8], [0] * 8)
    json.dump({"op": "layer_norm", "eps": 1e-5}, open(os.path.join(d, "l.json"), "w"))
P
expect "compare: [8] output for a [2, 4] input on both sides" 1 "$nc" compare "$tmp/ca" "$tmp/cb"
contains "names the shapes" "$tmp/out" "first gate failure \(A\): layer l: l.output has shape \[8\], its input \[2, 4\]"
expect "compare: recomputed by cpu" 1 "$nc" compare "$tmp/ca" --backend cpu

# ---- a property transform that makes an input invalid: file:line at parse time -----------
cat >"$tmp/tr.toml" <<'T'
[[case]]
name = "ok"
op = "layer_norm"
dtype = "f64"
inputs.x = { values = [1, 2, 3] }

[[case]]
name = "bn"
op = "batch_norm"
dtype = "f64"
convention = { momentum = 0.1 }
inputs.x = { values = [[1.0], [3.0]] }
inputs.running_mean = { values = [0.0] }
inputs.running_var = { values = [2.0] }
expect.changes_under = [{ shift = -10.0, input = "running_var" }]
T
expect "transform making running_var negative" 2 "$nc" run --no-progress "$tmp/tr.toml"
contains "names file, line and field" "$tmp/err" "tr.toml:15: case.bn.expect.changes_under: running_var:shift\(-10\) makes the problem invalid"
expect "--list refuses it too" 2 "$nc" run --list --no-progress "$tmp/tr.toml"

# ---- a case whose inputs together pass the size of one tensor: exit 2 before allocating -----
cat >"$tmp/big.toml" <<'T'
[[case]]
name = "big"
op = "layer_norm"
dtype = "f32"
convention = { affine = "gamma_beta" }
inputs.x = { generator = "normal", seed = 1, shape = [1, 268435456] }
inputs.gamma = { generator = "constant", value = 1.0, shape = [268435456] }
inputs.beta = { generator = "constant", value = 0.0, shape = [268435456] }
T
t0=$(date +%s)
expect "inputs over 2^28 elements together" 2 "$nc" run --no-progress "$tmp/big.toml"
t1=$(date +%s)
contains "names file, line and field" "$tmp/err" \
  "big.toml:7: case.big.inputs.gamma.shape: the case's inputs would hold more than 2\^28 elements together"
[ $((t1 - t0)) -lt 5 ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL big inputs: $((t1 - t0)) s: generated before refusing"; }

# ---- a malformed golden file: exit 2 naming the file and field, never internal error ----
mkdir -p "$tmp/g/cases" "$tmp/g/golden"
printf '[[case]]\nname = "a"\nop = "layer_norm"\ndtype = "f64"\ninputs.x = { values = [1, 3] }\n' >"$tmp/g/cases/w.toml"
expect "golden --update" 0 "$nc" golden --update "$tmp/g/cases/w.toml"
expect "golden matches" 0 "$nc" golden "$tmp/g/cases/w.toml"
for bad in '[1,2,3]' '{"x":1}' '{"cases":{"a":{}}}' '{"cases":{"a":{"outputs":{"y":{"digest":7}}}}}' \
           '{"cases":{"a":{"outputs":{"y":{"digest":"d","values":[1]}}}}}'; do
  echo "$bad" >"$tmp/g/golden/w.json"
  expect "malformed golden $bad" 2 "$nc" golden "$tmp/g/cases/w.toml"
  contains "names the golden file" "$tmp/err" "golden/w.json: "
  if grep -q "internal error" "$tmp/err"; then fail=$((fail + 1)); echo "FAIL internal error for $bad"; fi
done

# ---- normcheck fuzz: exit codes, the shrunk case file, no false pass ----------------------
expect "fuzz cpu passes 40 draws" 0 "$nc" fuzz -b cpu --count 40 --no-progress
contains "says what it evaluated" "$tmp/out" "^fuzz cpu seed 1: 40 draws in .*: 40 evaluated, 0 skipped"
expect "fuzz a mutant" 1 "$nc" fuzz -b mutant:eps_outside_sqrt --op layer_norm --count 200 --no-progress -o "$tmp/found.toml"
contains "prints a rerun line" "$tmp/out" "rerun: .* fuzz --backend mutant:eps_outside_sqrt --seed 1 --draw [0-9]+ --op layer_norm"
draw=$(sed -nE 's/^FAILED draw ([0-9]+) .*/\1/p' "$tmp/out" | head -1)
expect "the case file fails on the mutant" 1 "$nc" run --no-progress "$tmp/found.toml" -b mutant:eps_outside_sqrt
expect "... and passes on reference and cpu" 0 "$nc" run --no-progress "$tmp/found.toml" -b reference,cpu --strict
expect "the rerun line reproduces the draw" 1 "$nc" fuzz -b mutant:eps_outside_sqrt --op layer_norm --seed 1 --draw "$draw" --no-progress
expect "-o never overwrites a file" 2 "$nc" fuzz -b mutant:eps_outside_sqrt --op layer_norm --count 200 --no-progress -o "$tmp/found.toml"
expect "a backend that evaluates nothing never passes" 1 "$nc" fuzz -b onednn --op rms_norm --count 20 --no-progress
contains "says nothing was checked" "$tmp/out" "evaluated none of the 20 draws: nothing was checked"
expect "one backend only" 2 "$nc" fuzz -b cpu,reference --count 5 --no-progress
expect "unknown op" 2 "$nc" fuzz -b cpu --op layer_nrom --count 5 --no-progress

# ---- the coverage matrix: a source of the default suite, its rerun lines work -------------
expect "matrix:quick on cpu" 0 "$nc" run --no-progress matrix:quick -f 'rms_norm/matrix' -b cpu --strict
contains "the matrix names its suite" "$tmp/out" "^suite: coverage matrix quick: [0-9]+ cases$"
expect "a mutant fails matrix cases" 1 "$nc" run --no-progress matrix:quick -f 'layer_norm/matrix' -b mutant:partial_warp_dropped
line=$(sed -nE 's/^  rerun: (.*)$/\1/p' "$tmp/out" | head -1)
contains "rerun names matrix:quick" "$tmp/out" "^  rerun: .* run matrix:quick --case mx_layer_norm_w[0-9]+_"
expect "the rerun line reproduces the failure" 1 bash -c "$line --no-progress"
# rows from 65535 on left unwritten: the quick tier's 65537-group point catches it on rms_norm
# too (the case files hold a 65537-row case for layer_norm only; a gap audit found it)
expect "the quick matrix kills rows_grid_limit on rms_norm" 1 "$nc" run --no-progress matrix:quick -f 'rms_norm/matrix' -b mutant:rows_grid_limit
contains "by its 65537-group point" "$tmp/out" "^FAILED mx_rms_norm_w2_r65537_f32_f32_normal_typical_def on mutant:rows_grid_limit"
expect "an unknown tier" 2 "$nc" run --no-progress --tier huge
expect "an unknown matrix source" 2 "$nc" run --no-progress matrix:slow
expect "--tier full lists more" 0 "$nc" run --list --no-progress --tier full -f 'dyt/matrix'
contains "full tier" "$tmp/out" "coverage matrix full"

# ---- the coverage report: what a backend skipped is visible at a glance -----------------
expect "coverage report of onednn" 0 "$nc" run --no-progress "$src_w" cases/rms_norm/worked_examples.toml cases/layer_norm/backward.toml -b onednn --coverage
contains "backward never evaluated" "$tmp/out" "^direction=backward +NONE 0/[0-9]+"
contains "rms_norm never evaluated" "$tmp/out" "^op=rms_norm +NONE 0/[0-9]+"
contains "layer_norm evaluated" "$tmp/out" "^op=layer_norm +[1-9][0-9]*/[0-9]+"
contains "the reason is named" "$tmp/out" "direction=backward on onednn: all skipped, e.g. onednn: forward only"
expect "the JSON report keeps the dimensions" 0 "$nc" run --no-progress "$src_w" -b cpu --json "$tmp/c.json"
expect "... as dims" 0 python3 -c "import json; c = json.load(open('$tmp/c.json'))['cases'][0]; assert 'op=layer_norm' in c['dims'] and any(d.startswith('width=') for d in c['dims']), c"

# ---- a third false-pass audit (2026-12-07): each of these exited 0 before its fix ---------
mkdir -p "$tmp/empty" "$tmp/data/cases"
expect "golden over a folder without case files" 2 "$nc" golden "$tmp/empty"
contains "... says so" "$tmp/err" "empty: path: no case files"
expect "golden over trace files only (no case files)" 2 "$nc" golden cases/traces
expect "run over a folder of cases and an empty one" 2 "$nc" run --no-progress cases/layer_norm "$tmp/empty"
contains "... names the empty one" "$tmp/err" "$tmp/empty: path: no case files"
expect "golden over the bundled files still passes" 0 "$nc" golden cases/layer_norm
contains "... and counts what it compared" "$tmp/out" "reference matches every golden file \([1-9][0-9]* cases in [1-9][0-9]* files\)"
expect "an empty bundled cases folder" 2 env NORMCHECK_DATA_DIR="$tmp/data" "$nc" run --no-progress
contains "... is no case files" "$tmp/err" "no case files"
expect "run --budget nan" 2 "$nc" run --no-progress "$src_w" --budget nan
expect "run --backend-cpu nan" 2 "$nc" run --no-progress "$src_w" --backend-cpu nan
expect "fuzz --budget nan" 2 "$nc" fuzz --backend cpu --budget nan
expect "the same file for --json and --junit" 2 "$nc" run --no-progress "$src_w" --json "$tmp/r" --junit "$tmp/r"
[ ! -e "$tmp/r" ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: a report was written"; }
expect "GTEST_SHARD_INDEX without GTEST_TOTAL_SHARDS" 2 env GTEST_SHARD_INDEX=1 "$nc" run --no-progress "$src_w"
for bad in 'expect.gate = { metric = "stab", max = inf }' 'expect.tolerance_abs = inf' 'expect.invariant_under = [{ shift = 0.0 }]' \
           'expect.changes_under = [{ scale = 1.0 }]' 'expect.invariant_under = [{ shift = 1e-30 }]'; do
  printf '[[case]]\nname = "c"\nop = "layer_norm"\ndtype = "f64"\ninputs.x = { values = [1, 2, 3, 4] }\n%s\n' "$bad" >"$tmp/bad.toml"
  expect "refused: $bad" 2 "$nc" run --no-progress "$tmp/bad.toml"
  contains "... naming file and line" "$tmp/err" "bad.toml:[0-9]+"
done
printf '[[case]]\nname = "trigger"\nop = "layer_norm"\ndtype = "f64"\nconvention = { eps = 1e-5 }\ninputs.x = { values = [1, 2, 3, 4] }\n' >"$tmp/trigger.toml"
expect "a worker's skip without a reason is its error" 3 "$nc" run --no-progress "$tmp/trigger.toml" -b "cmd:python3 $(pwd)/tests/cli/fake_worker.py skip_empty"
contains "... named" "$tmp/out" "skipped with no reason"

echo "cli_hostile: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
