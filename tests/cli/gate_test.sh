#!/usr/bin/env bash
# A green verdict means what it says (issue 18): every way a CI gate could exit 0 having
# checked less than it says is an error or a failure here. Each block below failed (exit 0)
# before the fix it tests. Run by ctest from the source root with NORMCHECK and PLUGINS set.
set -u
nc=${NORMCHECK:?set NORMCHECK to the normcheck binary}
nc=$(cd "$(dirname "$nc")" && pwd)/$(basename "$nc")
plugins=${PLUGINS:?set PLUGINS to the folder of the test plugins}
src=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
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
lacks() {  # lacks NAME FILE PATTERN
  if grep -qE -- "$3" "$2"; then fail=$((fail + 1)); echo "FAIL $1: /$3/ in $2"; else pass=$((pass + 1)); fi
}
w=cases/layer_norm/worked_examples.toml
bundled=$("$nc" run --list --no-progress | tail -1 | sed -E 's/^([0-9]+) of .*/\1/')

# ---- a cases/ folder in the working directory never replaces the bundled suite ----------
mkdir -p "$tmp/cwd/cases"
cp "$w" "$tmp/cwd/cases/"
(cd "$tmp/cwd" && "$nc" run --list --no-progress) >"$tmp/out" 2>&1
contains "cwd cases/: the bundled suite still runs" "$tmp/out" "^$bundled of $bundled cases \(bundled cases \("
[ "$bundled" -gt 100 ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL bundled suite has only '$bundled' cases"; }
(cd "$tmp/cwd" && "$nc" run --no-progress --filter 'layer_norm/worked') >"$tmp/out" 2>&1
contains "the summary names the suite and its size" "$tmp/out" "^suite: bundled cases \(.*\) \+ coverage matrix quick: 12 cases$"

# ---- a cases tree of symlinks (stow, Nix, Bazel runfiles) is read whole; a link loop ends --
mkdir -p "$tmp/links/cases"
for f in "$src"/cases/*; do ln -s "$f" "$tmp/links/cases/"; done
ln -s "$tmp/links/cases" "$tmp/links/cases/loop"
NORMCHECK_DATA_DIR="$tmp/links" "$nc" run --list --no-progress >"$tmp/out" 2>&1
contains "symlinked case folders: every bundled case" "$tmp/out" "^$bundled of $bundled cases \(bundled cases \("

# ---- a requested backend that evaluated nothing never passes; --strict fails on skips ---
expect "backend skipping every case" 1 "$nc" run --no-progress -f 'rms_norm/worked' -b onednn
contains "named in the verdict" "$tmp/out" "onednn: evaluated none of its [0-9]+ cases \(all skipped\)"
contains "per-backend counts" "$tmp/out" "^onednn +[0-9]+ +0 +0 +0 +0 +[0-9]+ "
expect "skip-all with --strict" 1 "$nc" run --no-progress -f 'rms_norm/worked' -b onednn --strict
expect "some skipped, not strict" 0 "$nc" run --no-progress -f 'layer_norm/worked' -f 'rms_norm/worked' -b onednn
expect "some skipped, --strict" 1 "$nc" run --no-progress -f 'layer_norm/worked' -f 'rms_norm/worked' -b onednn --strict
contains "--strict names the skips" "$tmp/out" "onednn: --strict: [0-9]+ cases and 0 checks skipped"
expect "cpu passes under --strict" 0 "$nc" run --no-progress "$w" -b cpu --strict
expect "a recorded source no selected case carries" 2 "$nc" run --no-progress cases/onnx "$w" -f 'layer_norm/worked' -b onnx-expected
contains "is an unknown backend" "$tmp/err" "--backend onnx-expected: unknown backend"

printf '[[case]]\nname = "a"\nop = "layer_norm"\ndtype = "f64"\ninputs.x = { values = [1, 3] }\nrecorded.cpu.y = { values = [9, 9], dtype = "f64" }\n' >"$tmp/rec.toml"
expect "a recorded source named after a built-in backend" 2 "$nc" run --no-progress "$tmp/rec.toml"
contains "names the case and the source" "$tmp/err" "rec.toml:1: case.a: recorded.cpu: 'cpu' names a built-in backend"

# ---- every --filter and --case must select something -------------------------------------
expect "second filter matches nothing" 2 "$nc" run --no-progress -f 'layer_norm/worked' -f 'layer_norm/typo'
contains "names the filter" "$tmp/err" "--filter layer_norm/typo: matches no case"
expect "--case that does not exist" 2 "$nc" run --no-progress "$w" --case ln_123 --case ln_nope
contains "names the case" "$tmp/err" "--case ln_nope: no such case"
expect "--case the filters drop" 2 "$nc" run --no-progress --case ln_123 -f 'rms_norm/*'

# ---- merge: shards of one run, complete, once each ----------------------------------------
expect "shard 0/2" 0 "$nc" run --no-progress cases/layer_norm --shard 0/2 --json "$tmp/s0.json"
expect "shard 1/2" 0 "$nc" run --no-progress cases/layer_norm --shard 1/2 --json "$tmp/s1.json"
expect "merge" 0 "$nc" merge "$tmp/s0.json" "$tmp/s1.json" --junit "$tmp/m.xml" --json "$tmp/m.json"
if command -v xmllint >/dev/null; then expect "merged junit is valid xml" 0 xmllint --noout "$tmp/m.xml"; fi
expect "a shard given twice" 2 "$nc" merge "$tmp/s0.json" "$tmp/s0.json" "$tmp/s1.json"
contains "names the duplicate" "$tmp/err" "shard 0/2 given twice"
expect "a missing shard" 2 "$nc" merge "$tmp/s0.json"
contains "names the missing shard" "$tmp/err" "missing shards: 1/2"
expect "shard of another suite" 0 "$nc" run --no-progress cases/rms_norm --shard 1/2 --json "$tmp/r1.json"
expect "mixed suites" 2 "$nc" merge "$tmp/s0.json" "$tmp/r1.json"
contains "names the mix" "$tmp/err" "different suites"
expect "shard with other backends" 0 "$nc" run --no-progress cases/layer_norm --shard 1/2 -b cpu --json "$tmp/b1.json"
expect "mixed backends" 2 "$nc" merge "$tmp/s0.json" "$tmp/b1.json"
expect "merged report merged again" 2 "$nc" merge "$tmp/m.json"

# ---- the printed rerun line reproduces the failure, for every kind of backend spec -------
mkdir -p "$tmp/dir with space" "$tmp/dir,comma"
cp tests/cli/fake_worker.py "$tmp/dir with space/worker.py"
cp tests/cli/fake_worker.py "$tmp/dir,comma/worker.py"
rerun_check() {  # rerun_check NAME CASEFILE BACKEND...: the first rerun line, run in a shell, fails the same way
  local name=$1 file=$2; shift 2
  "$nc" run --no-progress "$file" "$@" >"$tmp/out" 2>&1
  local rc=$?
  local line
  line=$(grep -m1 '^  rerun: ' "$tmp/out" | sed 's/^  rerun: //')
  if [ "$rc" -ne 1 ] || [ -z "$line" ]; then fail=$((fail + 1)); echo "FAIL rerun $name: exit $rc, line '$line'"; tail -5 "$tmp/out"; return; fi
  bash -c "$line --no-progress" >"$tmp/rerun" 2>&1
  local rc2=$?
  local case_name
  case_name=$(grep -m1 '^FAILED ' "$tmp/out" | awk '{print $2}')
  if [ "$rc2" -eq 1 ] && grep -q "^FAILED $case_name on " "$tmp/rerun" && grep -q "^1 case runs: 0 passed, 1 failed" "$tmp/rerun"; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1)); echo "FAIL rerun $name: '$line' gave exit $rc2"; tail -8 "$tmp/rerun"
  fi
}
rerun_check "mutant" "$w" -b mutant:no_sqrt
rerun_check "plugin" "$w" -b "plugin:$plugins/libnc_fault_nan.so"
rerun_check "cmd with spaces" "$w" -b "cmd:python3 '$tmp/dir with space/worker.py' nan"
rerun_check "cmd with a comma" "$w" -b "cpu,cmd:python3 $tmp/dir,comma/worker.py nan"

# ---- expected failures ---------------------------------------------------------------------
cat >"$tmp/xf.toml" <<'EOF'
# ln_123 and ln_13 fail on mutant:no_sqrt (it divides by the variance, not its root)
["mutant:no_sqrt"]
ln_123 = "no sqrt"
EOF
expect "unlisted failures still fail" 1 "$nc" run --no-progress "$w" -b mutant:no_sqrt --expect-failures "$tmp/xf.toml"
"$nc" run --no-progress "$w" -b mutant:no_sqrt --json "$tmp/nosqrt.json" >/dev/null 2>&1
python3 - "$tmp/nosqrt.json" "$tmp/xf_all.toml" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
with open(sys.argv[2], "w") as f:
    f.write('["mutant:no_*"]\n')
    for c in j["cases"]:
        if c["status"] == "FAILED":
            f.write(f'{c["case"]} = "divides by the variance"\n')
    f.write('ln_gone = "a case that no longer exists"\n')
EOF
expect "every failure expected" 0 "$nc" run --no-progress "$w" -b mutant:no_sqrt --expect-failures "$tmp/xf_all.toml"
contains "XFAIL lines" "$tmp/out" "^XFAIL ln_123 on mutant:no_sqrt: divides by the variance \(.*xf_all.toml:[0-9]+\)"
contains "XFAIL lines show the failure observed" "$tmp/out" "^  observed: gate: stab = "
contains "stale entry named" "$tmp/out" "^STALE .*xf_all.toml:[0-9]+ \[mutant:no_\*\] ln_gone"
expect "stale entry under --strict" 1 "$nc" run --no-progress "$w" -b mutant:no_sqrt --expect-failures "$tmp/xf_all.toml" --strict
# An entry whose FILE part names no file of the run never applies: it is stale too.
printf '["cpu"]\n"no_such_file.toml::ln_123" = "a typo in the file part"\n"worked_examples.toml::ln_123" = "right file"\n' >"$tmp/xf_file.toml"
expect "entry with a wrong file part under --strict" 1 "$nc" run --no-progress "$w" -b cpu --expect-failures "$tmp/xf_file.toml" --strict
contains "... named STALE" "$tmp/out" "^STALE .*xf_file.toml:2 \[cpu\] no_such_file.toml::ln_123"
lacks "... the right file part is not stale" "$tmp/out" "^STALE .*worked_examples.toml::ln_123"
printf '["cpu"]\nln_123 = "expected to fail"\n' >"$tmp/xpass.toml"
expect "unexpected pass reported" 0 "$nc" run --no-progress "$w" -b cpu --expect-failures "$tmp/xpass.toml"
contains "XPASS line" "$tmp/out" "^XPASS ln_123 on cpu: passed"
expect "unexpected pass under --strict" 1 "$nc" run --no-progress "$w" -b cpu --expect-failures "$tmp/xpass.toml" --strict
printf '["cpu"]\nln_123 = 5\n' >"$tmp/xbad.toml"
expect "malformed expectations" 2 "$nc" run --no-progress "$w" -b cpu --expect-failures "$tmp/xbad.toml"
contains "names file line field" "$tmp/err" "xbad.toml:2: cpu.ln_123: expected a string"
expect "missing expectations file" 2 "$nc" run --no-progress "$w" -b cpu --expect-failures "$tmp/nope.toml"
printf '["plugin:*"]\nln_123 = "the worker returns NaN"\n' >"$tmp/xid.toml"
expect "pattern on the self-reported identity" 1 "$nc" run --no-progress "$w" -b "plugin:$plugins/libnc_fault_nan.so" \
  --expect-failures "$tmp/xid.toml" --json "$tmp/xid.json"
expect "identity matched" 0 python3 -c "
import json; j = json.load(open('$tmp/xid.json'))
assert [c['case'] for c in j['cases'] if c.get('expected_failure')] == ['ln_123'], j['summary']"

# ---- what a CI log shows -------------------------------------------------------------------
expect "--output keeps failures on the console" 1 "$nc" run --no-progress "$w" -b cpu,mutant:no_sqrt --output "$tmp/o.txt"
contains "failure on the console" "$tmp/out" "^FAILED ln_123 on mutant:no_sqrt"
contains "rerun on the console" "$tmp/out" "rerun: .*--case ln_123 --backend mutant:no_sqrt"
expect "several reports in one run" 1 "$nc" run --no-progress "$w" -b cpu,mutant:no_sqrt --json "$tmp/j.json" --junit "$tmp/j.xml"
expect "both written" 0 test -s "$tmp/j.json" -a -s "$tmp/j.xml"
contains "junit message carries the check and its numbers" "$tmp/j.xml" '<failure message="gate: stab = [0-9.e+]+ \(limit [0-9.]+'
expect "json has version, schema, backend identities" 0 python3 -c "
import json; j = json.load(open('$tmp/j.json'))
assert j['normcheck']['schema'] == 2 and j['normcheck']['version'], j['normcheck']
b = {x['name']: x for x in j['backends']}
assert b['cpu']['identity'].startswith('normcheck '), b
assert b['cpu']['counts']['evaluated'] == 12 and b['mutant:no_sqrt']['counts']['failed'] > 0, b
assert j['summary']['exit_code'] == 1 and j['summary']['problems'], j['summary']"
"$nc" run --no-progress "$w" -b "cmd:python3 tests/cli/fake_worker.py ok" --json "$tmp/wk.json" >/dev/null 2>&1
expect "a worker's hello name is kept" 0 python3 -c "
import json; j = json.load(open('$tmp/wk.json'))
assert j['backends'][0]['identity'] == 'fake_worker ok', j['backends']"
printf '[[case]]\nname = "noted"\nop = "layer_norm"\ndtype = "f64"\nnote = "why: the squares overflow f32"\ninputs.x = { values = [1, 2, 3] }\n' >"$tmp/note.toml"
expect "note with the failure" 1 "$nc" run --no-progress "$tmp/note.toml" -b mutant:no_sqrt --json "$tmp/note.json"
contains "note printed" "$tmp/out" "^  note: why: the squares overflow f32$"
expect "note in json" 0 python3 -c "
import json; assert json.load(open('$tmp/note.json'))['cases'][0]['note'] == 'why: the squares overflow f32'"
NORMCHECK_HEARTBEAT_S=0 "$nc" run "$w" -b cpu >"$tmp/out" 2>"$tmp/err"
contains "heartbeat lines off a terminal" "$tmp/err" "^normcheck: [0-9]+/12 case runs done, 0 failed"
expect "--no-progress is quiet" 0 "$nc" run "$w" -b cpu --no-progress
expect "stderr empty" 0 test ! -s "$tmp/err"

# ---- outputs that would destroy data are refused before the run ----------------------------
expect "output into golden/" 2 "$nc" run --no-progress "$w" -b cpu --json golden/layer_norm/x.json
expect "golden/ untouched" 1 test -e golden/layer_norm/x.json
expect "output onto a case file" 2 "$nc" run --no-progress "$tmp/note.toml" -b cpu --output "$tmp/note.toml"
expect "case file kept" 0 grep -q 'name = "noted"' "$tmp/note.toml"
expect "--dump-failures into golden/" 2 "$nc" run --no-progress "$tmp/note.toml" -b mutant:no_sqrt --dump-failures golden/dumps
contains "... names the golden folder" "$tmp/err" "inside .*golden, the golden files"
expect "golden/ untouched by the dump" 1 test -e golden/dumps
expect "--dump-failures onto the JSON report's path" 2 "$nc" run --no-progress "$tmp/note.toml" -b mutant:no_sqrt --json "$tmp/d1" --dump-failures "$tmp/d1"
expect "... nothing created" 1 test -e "$tmp/d1"
expect "output into a missing folder, before the run" 2 "$nc" run --no-progress "$w" -b mutant:no_sqrt --json "$tmp/no/r.json"

# ---- what was not checked is never shown as a pass (false-pass audit 21) -------------------
printf '[[case]]\nname = "prop"\nop = "layer_norm"\ndtype = "f64"\nconvention = { eps = 0.0, affine = "none" }\ninputs.x = { values = [[1, 2, 4, 8]] }\nexpect.invariant_under = [{ shift = 10.0 }, { scale = 4.0 }]\n' >"$tmp/prop.toml"
# A worker declining a property's transformed problems: the gate passes, the properties
# checked nothing. The console, the layer row and JUnit say so; --strict fails.
expect "skipped property checks, not strict" 0 "$nc" run --no-progress "$tmp/prop.toml" -b "cmd:python3 tests/cli/fake_worker.py skip_repeat" --junit "$tmp/sk.xml"
contains "skipped checks in the summary" "$tmp/out" "^1 case runs: 1 passed, 0 failed, 0 skipped, 0 mistrusted, 0 errors; 2 checks skipped inside the cases that ran$"
contains "each skipped check listed with its reason" "$tmp/out" "^SKIPPED CHECK 1 x: invariant_under shift\(10\) on cmd:.*: fake_worker: one problem of each shape$"
contains "the layer row says it" "$tmp/out" " PASS 2 checks skipped$"
contains "JUnit shows the case skipped, not passed" "$tmp/sk.xml" '<skipped message="2 of [0-9]+ checks skipped \(the others passed\)'
expect "skipped property checks under --strict" 1 "$nc" run --no-progress "$tmp/prop.toml" -b "cmd:python3 tests/cli/fake_worker.py skip_repeat" --strict
contains "... named in the verdict" "$tmp/out" "--strict: 0 cases and 2 checks skipped"
# MISTRUSTED (a changes_under whose exact outputs do not change): not checked, so --strict fails.
printf '[[case]]\nname = "m1"\nop = "layer_norm"\ndtype = "f32"\nconvention.eps = 0.0\ninputs.x = { values = [[1, 2, 3, 4]] }\nexpect.changes_under = [{ shift = 10.0 }]\n' >"$tmp/mistrust.toml"
expect "MISTRUSTED, not strict" 0 "$nc" run --no-progress "$tmp/mistrust.toml" -b cpu --junit "$tmp/mt.xml"
contains "JUnit shows MISTRUSTED as skipped" "$tmp/mt.xml" '<skipped message="MISTRUSTED changes_under'
expect "MISTRUSTED under --strict" 1 "$nc" run --no-progress "$tmp/mistrust.toml" -b cpu --strict
contains "... named in the verdict" "$tmp/out" "1 cases mistrusted"
# The verdict is a JUnit test case of its own: a run that fails for a reason no case carries
# (here a backend that evaluated nothing) is red in JUnit, not only in its exit code.
expect "run-level failure" 1 "$nc" run --no-progress -f 'rms_norm/worked' -b onednn --junit "$tmp/rl.xml"
contains "JUnit verdict test case fails" "$tmp/rl.xml" '<failure message="FAIL \(exit 1\): onednn: evaluated none of its'
expect "passing run" 0 "$nc" run --no-progress "$w" -b cpu --junit "$tmp/ok.xml"
contains "JUnit verdict test case passes" "$tmp/ok.xml" '<testcase classname="normcheck" name="verdict">'
lacks_failure=$(grep -c '<failure' "$tmp/ok.xml")
[ "$lacks_failure" -eq 0 ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL passing run: JUnit holds a failure"; }
# An output the request did not name ("Mean" for "mean") is the worker's error.
expect "misnamed output" 3 "$nc" run --no-progress "$tmp/prop.toml" -b "cmd:python3 tests/cli/fake_worker.py extra_output"
contains "... named" "$tmp/out" "output 'Mean' is not an output of layer_norm here"

# A run killed before its end (a CI timeout's SIGTERM) leaves a report whose verdict is ERROR,
# never the previous run's PASS, and takes its workers with it.
expect "a passing run's reports" 0 "$nc" run --no-progress "$w" -b cpu --json "$tmp/int.json" --junit "$tmp/int.xml"
"$nc" run --no-progress "$w" -b "cmd:python3 tests/cli/fake_worker.py hang $tmp/int-marker" --timeout 600 --json "$tmp/int.json" --junit "$tmp/int.xml" >/dev/null 2>&1 &
run_pid=$!
for _ in $(seq 100); do grep -q '"incomplete"' "$tmp/int.json" 2>/dev/null && break; sleep 0.1; done
sleep 0.5
kill -TERM "$run_pid"
wait "$run_pid"
rc=$?
[ "$rc" -eq 143 ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL interrupted run: exit $rc, wanted 143"; }
expect "the interrupted run's JSON says ERROR" 0 python3 -c "
import json; j = json.load(open('$tmp/int.json'))
assert j['run']['incomplete'] is True and j['summary']['exit_code'] == 3, j['summary']"
contains "the interrupted run's JUnit verdict is an error" "$tmp/int.xml" '<error message="ERROR \(exit 3\): the run did not finish'
expect "merge refuses an interrupted shard" 2 "$nc" merge "$tmp/int.json"
sleep 0.2
if pgrep -f "$tmp/int-marker" >/dev/null; then fail=$((fail + 1)); echo "FAIL the hung worker outlived normcheck"; pkill -f "$tmp/int-marker"
else pass=$((pass + 1)); fi

echo "gate: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
