#!/usr/bin/env bash
# normcheck trace and compare end to end: exit codes, first divergences, bad input.
# Run by ctest from the source root with NORMCHECK set to the binary.
set -u
nc=${NORMCHECK:?set NORMCHECK to the normcheck binary}
plugins=${PLUGINS:?set PLUGINS to the folder of the built plugins}
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

# The bundled models pass on cpu; eps outside the sqrt injected at site 7 is the first
# local divergence at exactly site 7.
for m in cases/traces/*.trace.toml; do
  expect "trace $m on cpu" 0 "$nc" trace "$m" --backend cpu
  contains "trace $m no failures" "$tmp/out" '^[0-9]+ sites: [0-9]+ passed, 0 failed'
  expect "trace $m injected" 1 "$nc" trace "$m" --backend cpu --inject mutant:eps_outside_sqrt@7
  contains "trace $m first local is site 7" "$tmp/out" '^first local divergence: site 7 \('
  contains "trace $m repro" "$tmp/out" "^rerun: normcheck trace $m --backend cpu --inject mutant:eps_outside_sqrt@7"
done
l=cases/traces/llama_like.trace.toml
expect "inject by name" 1 "$nc" trace "$l" --inject mutant:eps_outside_sqrt@block03.norm
contains "inject by name: site 3" "$tmp/out" '^first local divergence: site 3 \(block03.norm'
expect "trace json" 0 "$nc" trace "$l" --format json --output "$tmp/t.json"
expect "trace json parses" 0 python3 -c "import json; j=json.load(open('$tmp/t.json')); assert j['summary']['failed']==0 and len(j['sites'])==25 and j['first_local'] is None"

# Any backend: a C-ABI plugin and a cmd: worker run the stack (and an injected site), and
# their --timeout is taken; a worker that declines a site is an ERROR naming it (exit 3).
ex="plugin:$plugins/libnc_example_plugin.so"
expect "trace on a plugin" 0 "$nc" trace "$l" --backend "$ex" --timeout 30
contains "trace on a plugin: every site passed" "$tmp/out" '^25 sites: 25 passed, 0 failed'
expect "trace a plugin injected" 1 "$nc" trace "$l" --backend "$ex" --inject mutant:eps_outside_sqrt@block03.norm
contains "trace a plugin injected: site 3" "$tmp/out" '^first local divergence: site 3 \(block03.norm'
expect "inject a plugin" 0 "$nc" trace "$l" --backend cpu --inject "$ex@block03.norm"
expect "trace on a worker that declines" 3 "$nc" trace "$l" --backend "cmd:python3 tests/cli/fake_worker.py ok"
contains "declined site named" "$tmp/err" 'site 0 \(.*fake_worker: f64, inside_sqrt, biased, no affine only'
expect "trace: bad --timeout" 2 "$nc" trace "$l" --backend "$ex" --timeout 0

# The PyTorch adapter (where torch is installed: setup_adapters.sh does not install it) runs a
# trace and recomputes the MiniLM dump (which PyTorch itself produced: every layer the same).
if python3 -c "import numpy, torch" 2>/dev/null; then
  tb="cmd:python3 tools/adapters/torch_backend.py"
  expect "trace on the PyTorch adapter" 0 "$nc" trace cases/traces/bert_like.trace.toml --backend "$tb"
  contains "trace on the PyTorch adapter: every site" "$tmp/out" '^12 sites: 12 passed, 0 failed'
  expect "compare minilm vs the PyTorch adapter" 0 "$nc" compare cases/minilm/dump --backend "$tb"
  contains "compare minilm vs PyTorch: the same" "$tmp/out" '^13 layers: 13 same, 0 differ'
else
  echo "SKIP: torch is not installed: the PyTorch adapter's trace and compare were not run"
fi

# Bad input: exit 2 with file:line: field.
printf '[model]\nname = "m"\nd = 8\ntokens = 2\nblocks = 2\nplacement = "middle"\ndtype = "f32"\nseed = 1\n[norm]\nop = "rms_norm"\n' >"$tmp/bad.trace.toml"
expect "bad model" 2 "$nc" trace "$tmp/bad.trace.toml"
contains "bad model names file line field" "$tmp/err" "bad.trace.toml:6: model.placement: unknown 'middle'"
expect "missing model" 2 "$nc" trace "$tmp/nope.trace.toml"
expect "unknown backend" 2 "$nc" trace "$l" --backend cpuu
expect "site out of range" 2 "$nc" trace "$l" --inject mutant:eps_missing@99
expect "injection without site" 2 "$nc" trace "$l" --inject mutant:eps_missing
expect "a case file is no model" 2 "$nc" trace cases/layer_norm/worked_examples.toml
contains "case file hint" "$tmp/err" "unknown key"

# `normcheck run` leaves model files out of its folder scan.
# A folder of trace files alone holds no case files: naming it beside a case file is an error
# (a named folder without cases would be checked less than the command line says).
expect "run takes no trace files as cases" 2 "$nc" run cases/traces cases/layer_norm/worked_examples.toml --list
contains "... the traces folder has no case files" "$tmp/err" "cases/traces: path: no case files"
expect "run lists the case file alone" 0 "$nc" run cases/layer_norm/worked_examples.toml --list

# compare: the MiniLM dump against cpu's recomputation, and two synthetic folders.
expect "compare minilm vs cpu" 0 "$nc" compare cases/minilm/dump --backend cpu
contains "compare 13 layers" "$tmp/out" '^13 layers: '
contains "compare names the first divergence" "$tmp/out" '^first divergence: layer 00_embeddings'
contains "compare no gate failure" "$tmp/out" '^first gate failure \(B\): none'
mkdir -p "$tmp/a" "$tmp/b"
cp cases/minilm/dump/0[0-2]_* "$tmp/a/" && cp cases/minilm/dump/0[0-2]_* "$tmp/b/"
expect "compare identical" 0 "$nc" compare "$tmp/a" "$tmp/b"
contains "identical: no divergence" "$tmp/out" '^first divergence: none'
python3 - "$tmp/b/01_layer0_attention.output.npy" <<'P'
import sys, struct
p = sys.argv[1]
b = bytearray(open(p, 'rb').read())
hl = struct.unpack('<H', b[8:10])[0]
o = 10 + hl + 4 * 7            # element 7 of the float32 data
v = struct.unpack('<f', b[o:o+4])[0]
b[o:o+4] = struct.pack('<f', v * 1.001)
open(p, 'wb').write(bytes(b))
P
expect "compare perturbed" 1 "$nc" compare "$tmp/a" "$tmp/b" --format json --output "$tmp/c.json"
expect "perturbed layer is first" 0 python3 -c "import json; j=json.load(open('$tmp/c.json')); assert j['first_divergence']=='01_layer0_attention' and j['first_gate_failure_b']=='01_layer0_attention', j['first_divergence']"
expect "compare minilm vs a plugin" 0 "$nc" compare cases/minilm/dump --backend "$ex"
contains "compare minilm vs a plugin: 13 layers" "$tmp/out" '^13 layers: '
contains "compare minilm vs a plugin: label" "$tmp/out" 'plugin:.*libnc_example_plugin.so'
expect "compare vs a worker that declines" 3 "$nc" compare cases/minilm/dump --backend "cmd:python3 tests/cli/fake_worker.py ok"
expect "compare unknown backend" 2 "$nc" compare cases/minilm/dump --backend cpuu
contains "compare unknown backend message" "$tmp/err" "unknown backend 'cpuu'"
expect "compare needs two dirs" 2 "$nc" compare "$tmp/a"
expect "compare missing dir" 2 "$nc" compare "$tmp/a" "$tmp/nope"
echo '{"op": "layer_norm", "eps": "big"}' >"$tmp/b/00_embeddings.json"
expect "compare bad sidecar" 2 "$nc" compare "$tmp/a" "$tmp/b"
contains "bad sidecar names field" "$tmp/err" '00_embeddings.json:1: eps: expected a finite number'

echo "cli_trace: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
