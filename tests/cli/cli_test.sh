#!/usr/bin/env bash
# CLI behaviour end to end: exit codes, formats, atomic output, repro lines, --dump-failures.
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
  if grep -qE "$3" "$2"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL $1: no /$3/ in $2"; head -20 "$2"; fi
}

w=cases/layer_norm/worked_examples.toml
expect "run worked" 0 "$nc" run "$w"
contains "table header" "$tmp/out" '^layer +op +backend +dtype +cases +max abs +max ulp +max stab +verdict'
contains "no colour when piped" "$tmp/out" '^layer_norm/worked +layer_norm +cpu +f64 +[0-9]+ .* PASS$'

expect "mutant fails" 1 "$nc" run "$w" --backend mutant:eps_missing
contains "repro line" "$tmp/out" "rerun: [^ ]*normcheck run $w --case [a-z0-9_-]+ --backend mutant:eps_missing"

expect "junit" 1 "$nc" run "$w" --backend cpu,mutant:no_sqrt --format junit --output "$tmp/r.xml"
if command -v xmllint >/dev/null; then expect "junit is valid xml" 0 xmllint --noout "$tmp/r.xml"; fi
contains "junit failure" "$tmp/r.xml" '<failure message='

expect "json" 0 "$nc" run "$w" --format json --output "$tmp/r.json"
expect "json parses" 0 python3 -c "import json,sys; j=json.load(open('$tmp/r.json')); assert j['summary']['failed']==0 and j['summary']['passed']>0"

expect "list" 0 "$nc" run --list
contains "list shows cases" "$tmp/out" 'ln_123 +layer=layer_norm/worked op=layer_norm dtype=f64'

expect "filter and case" 0 "$nc" run "$w" --case ln_13 --backend cpu --format json --output "$tmp/one.json"
expect "one case only" 0 python3 -c "import json; j=json.load(open('$tmp/one.json')); assert len(j['cases'])==1, j['cases']"
expect "filter glob" 0 "$nc" run --filter 'rms_norm/wor*' --backend cpu --format json --output "$tmp/f.json"
expect "filter keeps one layer" 0 python3 -c "import json; j=json.load(open('$tmp/f.json')); assert {c['layer'] for c in j['cases']}=={'rms_norm/worked'}"

expect "dump failures" 1 "$nc" run "$w" --case ln_123 --backend mutant:no_sqrt --dump-failures "$tmp/dump"
expect "dump has npy" 0 test -s "$tmp/dump/ln_123__mutant_no_sqrt/exact.npy" -a -s "$tmp/dump/ln_123__mutant_no_sqrt/x.npy" -a -s "$tmp/dump/ln_123__mutant_no_sqrt/y.npy"

# Bad input: exit 2, message with file:line: field.
printf '[[case]]\nname = "a"\nop = "layer_norm"\ndtype = "f32"\ninputs.x = { values = [1, 2] }\nconvention.eps = -1.0\n' >"$tmp/bad.toml"
expect "bad case file" 2 "$nc" run "$tmp/bad.toml"
contains "error names file line field" "$tmp/err" "bad.toml:6: case.a.convention.eps: eps must be finite"
expect "missing file" 2 "$nc" run "$tmp/nope.toml"
expect "unknown backend" 2 "$nc" run "$w" --backend cpuu
expect "unknown format" 2 "$nc" run "$w" --format xml
expect "unknown option" 2 "$nc" run --frobnicate
expect "unknown mutant" 2 "$nc" run "$w" --backend mutant:nope

# A report is never half-written: a write that cannot complete leaves no file behind
# and an existing report untouched.
expect "output in a missing folder" 2 "$nc" run "$w" --format json --output "$tmp/no/such/dir/r.json"
expect "no partial file" 1 test -e "$tmp/no/such/dir/r.json"
mkdir "$tmp/isdir"
expect "output onto a folder" 2 "$nc" run "$w" --format json --output "$tmp/isdir"
expect "folder untouched" 0 test -d "$tmp/isdir"
expect "no temp files left" 0 bash -c "! ls '$tmp' | grep -q '\.tmp\.'"

# A recorded source whose output has the wrong dtype is bad input: exit 2 at parse time.
cat >"$tmp/rec.toml" <<'T'
[[case]]
name = "rec"
op = "layer_norm"
dtype = "f32"
convention.eps = 0.0
inputs.x = { values = [1, 3] }
recorded.broken.y = { values = [-1, 1], dtype = "f16" }
T
expect "recorded dtype" 2 "$nc" run "$tmp/rec.toml"
contains "recorded dtype names the field" "$tmp/err" "rec.toml:7: case.rec.recorded.broken.y: dtype f16 differs"
# A backend that raises is an ERROR (exit 3) and the run goes on: the cuda backend without
# a device under --strict is covered by cli_cuda; here a mutant that cannot run a case
# is SKIPPED, not an error.
expect "dump to a file path" 2 "$nc" run "$w" --backend mutant:no_sqrt --dump-failures "$w"

# Golden files: a changed stored value is caught; --update rewrites; files outside cases/ are refused.
mkdir -p "$tmp/g/cases" "$tmp/g/golden"
cp "$w" "$tmp/g/cases/w.toml"
expect "golden missing" 1 "$nc" golden "$tmp/g/cases/w.toml"
expect "golden update" 0 "$nc" golden --update "$tmp/g/cases/w.toml"
expect "golden matches" 0 "$nc" golden "$tmp/g/cases/w.toml"
sed -i '0,/"-0x1\.3988e1409212/s//"-0x1.3988e1409213/' "$tmp/g/golden/w.json"
expect "golden tampered" 1 "$nc" golden "$tmp/g/cases/w.toml"
contains "golden names the case" "$tmp/out" 'MISMATCH .*w.toml ln_[0-9_]+: output y differs .* first at flat index 0'
expect "golden outside cases/" 2 "$nc" golden "$tmp/bad.toml"

# Sharding and merge: two shards cover the selection exactly once and merge into the
# single run's report; a failing shard makes the merged exit code 1.
expect "shard 0/2" 0 "$nc" run cases/layer_norm --shard 0/2 --format json --output "$tmp/s0.json"
expect "shard 1/2 from GTEST_*" 0 env GTEST_SHARD_INDEX=1 GTEST_TOTAL_SHARDS=2 "$nc" run cases/layer_norm --format json --output "$tmp/s1.json"
expect "unsharded" 0 "$nc" run cases/layer_norm --format json --output "$tmp/s.json"
# A shard that holds none of the selection checked nothing: a runner exporting GTEST_* around
# a one-case gate must not pass it (ln_d1 falls on shard 0 of 2).
expect "an empty shard fails" 1 env GTEST_SHARD_INDEX=1 GTEST_TOTAL_SHARDS=2 "$nc" run cases/layer_norm/degenerate.toml --case ln_d1 -b mutant:eps_outside_sqrt
contains "an empty shard says so" "$tmp/out" "shard 1/2 holds none of the 1 selected cases"
# Expected failures name cases, and names are unique within a file only: a bare name met in
# two files is refused; FILE::name names one.
mkdir -p "$tmp/dup"
for op in layer_norm rms_norm; do
  printf '[[case]]\nname = "eps_big"\nop = "%s"\ndtype = "f32"\nconvention.eps = 1.0\ninputs.x = { values = [[1, 2, 3], [4, 5, 7]] }\n' "$op" >"$tmp/dup/$op.toml"
done
printf '["mutant:*"]\neps_big = "known"\n' >"$tmp/xf_bare.toml"
printf '["mutant:*"]\n"layer_norm.toml::eps_big" = "known"\n' >"$tmp/xf_file.toml"
expect "expect-failures: a bare name in two files" 2 "$nc" run "$tmp/dup" -b mutant:eps_outside_sqrt --expect-failures "$tmp/xf_bare.toml"
contains "expect-failures: ambiguity named" "$tmp/err" "is in 2 case files of this run"
expect "expect-failures: FILE::name excuses one file's case only" 1 "$nc" run "$tmp/dup" -b mutant:eps_outside_sqrt --expect-failures "$tmp/xf_file.toml"
contains "expect-failures: the other file's case fails" "$tmp/out" "^FAILED eps_big on mutant:eps_outside_sqrt .*rms_norm.toml"
expect "merge" 0 "$nc" merge "$tmp/s0.json" "$tmp/s1.json" --format json --output "$tmp/m.json"
expect "merged equals the single run" 0 python3 -c "
import json
s, m = json.load(open('$tmp/s.json')), json.load(open('$tmp/m.json'))
assert sorted((c['case'], c['backend']) for c in s['cases']) == sorted((c['case'], c['backend']) for c in m['cases'])
k = lambda r: (r['layer'], r['backend'], r['dtype'])
assert {k(r): r['max_stab'] for r in s['layers']} == {k(r): r['max_stab'] for r in m['layers']}
assert m['summary']['exit_code'] == 0"
expect "bad shard" 2 "$nc" run --shard 2/2
expect "failing shard 0/2" 1 "$nc" run "$w" --backend mutant:no_sqrt --shard 0/2 --format json --output "$tmp/f0.json"
expect "failing shard 1/2" 1 "$nc" run "$w" --backend mutant:no_sqrt --shard 1/2 --json "$tmp/f1.json"
expect "merge keeps the failure" 1 "$nc" merge "$tmp/f0.json" "$tmp/f1.json"
contains "merged failure has its rerun line" "$tmp/out" "rerun: .*--backend mutant:no_sqrt"
expect "merge of a non-report" 2 "$nc" merge "$w"

# Inputs that once passed or crashed (second attack): each is now an error or a failure.
expect "report for merge" 0 "$nc" run "$w" --backend cpu --format json --output "$tmp/r.json"
python3 -c "
import json
j = json.load(open('$tmp/r.json'))
j['cases'][0]['status'] = 'WEIRD'; json.dump(j, open('$tmp/weird.json', 'w'))
j['cases'][0]['status'] = 'PASSED'; j['cases'][0]['metrics'] = 5; json.dump(j, open('$tmp/badm.json', 'w'))"
expect "merge: unknown status" 2 "$nc" merge "$tmp/weird.json"
contains "merge: the field is named" "$tmp/err" "weird.json: cases\\[0\\].status: unknown status 'WEIRD'"
expect "merge: malformed metrics" 2 "$nc" merge "$tmp/badm.json"
contains "merge: metrics named" "$tmp/err" "badm.json: cases\\[0\\].metrics: expected an object"
expect "merge: a folder" 2 "$nc" merge "$tmp"
mkdir -p "$tmp/empty"
expect "zoo: no cases" 2 "$nc" zoo "$tmp/empty" --no-probe
expect "timeout nan" 2 "$nc" run "$w" --timeout nan
expect "timeout huge" 2 "$nc" run "$w" --timeout 1e300
expect "probe: huge d" 2 "$nc" probe --backend reference --d 2000000000
expect "probe: eps beyond the sweep" 2 "$nc" probe --backend reference --eps 1e300
expect "compare-eps: a key twice" 2 "$nc" compare-eps --conv "eps=1e-5,eps=1e-6" --conv eps=1e-5
expect "compare-eps: eps 1e300" 2 "$nc" compare-eps --conv eps=1e300 --conv eps=1e-5
expect "compare-eps: mean beyond f32" 2 "$nc" compare-eps --conv eps=1e-5 --conv eps=1e-5,placement=outside_sqrt --means 1e300
if python3 -c "import numpy" 2>/dev/null; then
  mkdir -p "$tmp/da" "$tmp/db" "$tmp/dl"
  python3 - "$tmp" <<'PY'
import sys
import numpy as np
t = sys.argv[1]
np.save(f"{t}/da/a.npy", np.ones((2, 3), np.float32))
np.save(f"{t}/db/b.npy", np.ones((2, 3), np.float32))
# A header that claims 2^64 elements over 24 bytes of data.
h = b"{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }"
h += b" " * (64 - 10 - len(h) - 1) + b"\n"
open(f"{t}/dl/a.npy", "wb").write(b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h + b"\0" * 24)
PY
  expect "compare: no names in common" 1 "$nc" compare "$tmp/da" "$tmp/db"
  expect "compare: nothing to recompute" 2 "$nc" compare "$tmp/da" --backend cpu
  expect "compare: lying npy header" 2 "$nc" compare "$tmp/da" "$tmp/dl"
  # A misspelt role or sidecar would silently drop a layer's reference gate: refused (2).
  mkdir -p "$tmp/dt1" "$tmp/dt2" "$tmp/dt3"
  python3 - "$tmp" <<'PY'
import json, sys
import numpy as np
t = sys.argv[1]
x = np.float32([[1, 2, 3, 4], [5, 6, 7, 9]])
for d in ("dt1", "dt2", "dt3"):
    np.save(f"{t}/{d}/l0.input.npy", x)
np.save(f"{t}/dt1/l0.ouput.npy", np.zeros_like(x))
json.dump({"op": "layer_norm", "eps": 1e-5}, open(f"{t}/dt1/l0.json", "w"))
np.save(f"{t}/dt2/l0.output.npy", np.zeros_like(x))
json.dump({"op": "layer_norm", "eps": 1e-5}, open(f"{t}/dt2/l0.sidecar.json", "w"))
np.save(f"{t}/dt3/l0.output.npy", np.zeros_like(x))
PY
  expect "compare: a misspelt role" 2 "$nc" compare "$tmp/dt1" "$tmp/dt1"
  contains "compare: a misspelt role named" "$tmp/err" "'ouput' is not a role of layer l0"
  expect "compare: a misspelt sidecar" 2 "$nc" compare "$tmp/dt2" "$tmp/dt2"
  contains "compare: a misspelt sidecar named" "$tmp/err" "the sidecar of layer l0 is l0.json"
  expect "compare: no sidecar, the same garbage on both sides" 0 "$nc" compare "$tmp/dt3" "$tmp/dt3"
  contains "compare: says no gate ran" "$tmp/out" "first gate failure \(A\): none, and no layer was gated"
fi

# Presets in case files (issue 20): the preset's convention is the one run and reported; a
# backend with another eps fails it; a bad name is exit 2 naming file, line and field.
cat >"$tmp/preset.toml" <<'TOML'
[defaults]
op = "rms_norm"
dtype = "f32"

[[case]]
name = "llama"
convention = "hf.LlamaRMSNorm"
inputs.x = { generator = "normal", seed = 3, shape = [4, 64] }
inputs.gamma = { generator = "normal", seed = 4, shape = [64], mean = 1.0, std = 0.1 }

[[case]]
name = "llama_eps_1e-5"
convention = { preset = "hf.LlamaRMSNorm", eps = 1e-5 }
inputs.x = { values = [1e-3, -2e-3, 3e-3, 0.0] }
inputs.gamma = { values = [1.0, 1.0, 1.0, 1.0] }
TOML
expect "preset case passes on cpu" 0 "$nc" run "$tmp/preset.toml" --backend cpu --format json --output "$tmp/preset.json"
expect "preset case reports its convention" 0 python3 -c "
import json; j = json.load(open('$tmp/preset.json'))
c = {k['case']: k['convention'] for k in j['cases']}
assert c['llama']['eps'] == 1e-6 and c['llama']['affine'] == 'gamma', c
assert c['llama_eps_1e-5']['eps'] == 1e-5, c"
expect "preset case: a backend that drops eps fails it" 1 "$nc" run "$tmp/preset.toml" --backend mutant:eps_missing
# A preset in [defaults] applies to every case; a case's own keys override it.
cat >"$tmp/defpreset.toml" <<'TOML'
[defaults]
op = "layer_norm"
dtype = "f32"
convention = "keras.LayerNormalization"
inputs.gamma = { values = [1.0, 0.5, 2.0, 1.0] }
inputs.beta = { values = [0.0, 0.25, -1.0, 0.5] }

[[case]]
name = "keras_default"
inputs.x = { values = [1e-3, -2e-3, 3e-3, 0.0] }

[[case]]
name = "keras_eps_override"
convention = { eps = 1e-5 }
inputs.x = { values = [1e-3, -2e-3, 3e-3, 0.0] }
TOML
expect "[defaults] preset: passes on cpu" 0 "$nc" run "$tmp/defpreset.toml" --backend cpu --format json --output "$tmp/defpreset.json"
expect "[defaults] preset: each case's resolved eps" 0 python3 -c "
import json; j = json.load(open('$tmp/defpreset.json'))
eps = {k['case']: k['convention']['eps'] for k in j['cases']}
assert eps == {'keras_default': 1e-3, 'keras_eps_override': 1e-5}, eps"
# A case naming its own preset drops the [defaults] preset's overrides; the report names the preset.
cat >"$tmp/twopresets.toml" <<'TOML'
[defaults]
op = "layer_norm"
dtype = "f32"
convention = { preset = "keras.LayerNormalization", eps = 0.25 }
inputs.gamma = { values = [1.0, 1.0, 1.0, 1.0] }
inputs.beta = { values = [0.0, 0.0, 0.0, 0.0] }

[[case]]
name = "torch_named"
convention = "pytorch.LayerNorm"
inputs.x = { values = [1e-3, -2e-3, 3e-3, 0.0] }

[[case]]
name = "keras_default"
inputs.x = { values = [1e-3, -2e-3, 3e-3, 0.0] }
TOML
expect "two presets: runs" 0 "$nc" run "$tmp/twopresets.toml" --format json --output "$tmp/twopresets.json"
expect "two presets: the case's preset without the other's overrides" 0 python3 -c "
import json; j = json.load(open('$tmp/twopresets.json'))
c = {k['case']: k['convention'] for k in j['cases']}
assert (c['torch_named']['eps'], c['torch_named']['preset']) == (1e-5, 'pytorch.LayerNorm'), c
assert (c['keras_default']['eps'], c['keras_default']['preset']) == (0.25, 'keras.LayerNormalization'), c"
printf '[defaults]\nop = "layer_norm"\ndtype = "f32"\nconvention = 3\n[[case]]\nname = "a"\ninputs.x = { values = [1.0, 2.0] }\n' >"$tmp/badconv.toml"
expect "[defaults] convention of the wrong type: exit 2" 2 "$nc" run "$tmp/badconv.toml"
contains "[defaults] convention: line and field" "$tmp/err" "badconv.toml:4: defaults.convention: expected a table or a preset name"
sed 's/hf.LlamaRMSNorm"$/hf.LlamaRMSnorm"/' "$tmp/preset.toml" >"$tmp/badpreset.toml"
expect "unknown preset: exit 2" 2 "$nc" run "$tmp/badpreset.toml"
contains "unknown preset: file, line, field, suggestion" "$tmp/err" "badpreset.toml:7: case.llama.convention: unknown preset 'hf.LlamaRMSnorm' \(did you mean hf.LlamaRMSNorm\?\)"
sed 's/hf.LlamaRMSNorm"$/keras.BatchNormalization"/' "$tmp/preset.toml" >"$tmp/badpreset.toml"
expect "preset of another op: exit 2" 2 "$nc" run "$tmp/badpreset.toml"
contains "preset of another op: named" "$tmp/err" "preset keras.BatchNormalization is a convention of batch_norm; this case's op is rms_norm"

echo "cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
