#!/usr/bin/env bash
# `normcheck probe` and `normcheck compare-eps` end to end: exit codes and output patterns.
set -u
NC=${NORMCHECK:?set NORMCHECK to the normcheck binary}
PLUGINS=${PLUGINS:?set PLUGINS to the folder of the built plugins}
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

expect_rc() {  # expect_rc RC DESCRIPTION -- command...
  local want=$1 what=$2; shift 3
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if [ "$rc" != "$want" ]; then
    echo "FAIL: $what: exit $rc, expected $want"; cat "$tmp/out" "$tmp/err"; fails=$((fails + 1))
  fi
}
expect_out() {  # expect_out PATTERN DESCRIPTION (grep -E on the last stdout)
  if ! grep -qE -- "$1" "$tmp/out"; then echo "FAIL: $2: no /$1/ in output"; cat "$tmp/out"; fails=$((fails + 1)); fi
}
expect_err() {
  if ! grep -qE -- "$1" "$tmp/err"; then echo "FAIL: $2: no /$1/ on stderr"; cat "$tmp/err"; fails=$((fails + 1)); fi
}

# Bad usage: exit 2 with a clear message.
expect_rc 2 "probe without backend" -- "$NC" probe --op layer_norm
expect_err "--backend NAME is required" "probe without backend"
expect_rc 2 "probe unknown op" -- "$NC" probe --backend reference --op layer_nrom
expect_err "unknown op 'layer_nrom'" "probe unknown op"
expect_rc 2 "probe bad dtype" -- "$NC" probe --backend reference --dtype f8
expect_rc 2 "probe bad format" -- "$NC" probe --backend reference --format xml
expect_rc 2 "probe unknown backend" -- "$NC" probe --backend nosuch
expect_err "unknown backend" "probe unknown backend"
expect_rc 0 "probe a plugin" -- "$NC" probe --backend "plugin:$PLUGINS/libnc_example_plugin.so" --timeout 30
expect_out "matches: .*pytorch.LayerNorm" "probe a plugin names its preset"
expect_rc 2 "probe bad --timeout" -- "$NC" probe --backend cpu --timeout -1
# Every op has probes; the family probes name the PyTorch adapter's presets (where torch is installed).
expect_rc 0 "probe group_norm on cpu" -- "$NC" probe --backend cpu --op group_norm
expect_out "num_groups +certain +3 groups of contiguous channels" "probe group_norm: groups"
expect_out "matches: .*pytorch.GroupNorm" "probe group_norm: preset"
expect_rc 0 "probe a mutant of batch_norm" -- "$NC" probe --backend mutant:bn_biased_running_var --op batch_norm
expect_out '!! running_variance +certain +biased' "probe names the biased running variance"
expect_rc 0 "probe rms_norm_quant on cpu" -- "$NC" probe --backend cpu --op rms_norm_quant --format json
expect_out '"property": "rounding"' "probe quant: rounding in the JSON"
if python3 -c "import numpy, torch" 2>/dev/null; then
  expect_rc 0 "probe the PyTorch adapter's group_norm" -- "$NC" probe --backend "cmd:python3 tools/adapters/torch_backend.py" --op group_norm
  expect_out "matches: .*pytorch.GroupNorm" "PyTorch adapter: pytorch.GroupNorm"
  expect_rc 0 "probe the PyTorch adapter's batch_norm" -- "$NC" probe --backend "cmd:python3 tools/adapters/torch_backend.py" --op batch_norm
  expect_out "matches: +pytorch.BatchNorm2d$" "PyTorch adapter: pytorch.BatchNorm2d"
else
  echo "SKIP: torch is not installed: the PyTorch adapter's family probes were not run"
fi
expect_rc 2 "probe unknown mutant" -- "$NC" probe --backend mutant:nosuch
expect_rc 2 "probe odd d" -- "$NC" probe --backend reference --d 17
expect_rc 2 "probe backend and all-mutants" -- "$NC" probe --backend cpu --all-mutants
expect_rc 2 "compare-eps one conv" -- "$NC" compare-eps --conv eps=1e-5
expect_rc 2 "compare-eps bad placement" -- "$NC" compare-eps --conv eps=1e-5,placement=inside --conv eps=1e-6
expect_err "placement 'inside'" "compare-eps bad placement"
expect_rc 2 "compare-eps no eps" -- "$NC" compare-eps --conv placement=inside_sqrt --conv eps=1e-6
# Presets (issue 20): named conventions, the op taken from them, none = the common ones.
expect_rc 0 "compare-eps no conv: the common presets" -- "$NC" compare-eps
expect_out "^  #1 = pytorch.LayerNorm$" "compare-eps default presets"
expect_out "^  #2 = keras.LayerNormalization$" "compare-eps default presets"
expect_rc 0 "compare-eps presets of rms_norm" -- "$NC" compare-eps --conv pytorch.RMSNorm --conv hf.LlamaRMSNorm,eps=1e-5 --dtype bf16
expect_out "op rms_norm, dtype bf16" "compare-eps: the presets' op"
expect_out "^  #2 = hf.LlamaRMSNorm,eps=1e-5$" "compare-eps preset with an override"
expect_rc 2 "compare-eps unknown preset" -- "$NC" compare-eps --conv pytorch.layernorm --conv eps=1e-5
expect_err "did you mean pytorch.LayerNorm" "compare-eps unknown preset"
expect_rc 2 "compare-eps preset of another op" -- "$NC" compare-eps --op layer_norm --conv pytorch.RMSNorm --conv eps=1e-5
expect_err "is a convention of rms_norm, not of layer_norm" "compare-eps preset of another op"
expect_rc 0 "presets" -- "$NC" presets
expect_out "^32 presets" "presets: the count"
expect_out "^pytorch.LayerNorm +layer_norm +eps=1e-5,eps_placement=inside_sqrt,variance=biased,affine=gamma_beta$" "presets: a row"
expect_out "^keras.BatchNormalization +batch_norm +.*running_variance=biased$" "presets: Keras's biased running variance"
expect_rc 0 "presets json" -- "$NC" presets --op rms_norm --format json
if ! python3 -c "import json,sys; j=json.load(open('$tmp/out')); assert all(p['op']=='rms_norm' for p in j) and len(j)>=8, j" ; then
  echo "FAIL: presets json"; fails=$((fails + 1)); fi
expect_rc 2 "presets unknown op" -- "$NC" presets --op nosuch
expect_rc 2 "compare-eps unwritable plot" -- "$NC" compare-eps --conv eps=1e-5 --conv eps=1e-6 --plot /nonexistent/dir/x.svg

# probe: findings, deviation marks and a card in [case.convention] syntax.
expect_rc 0 "probe reference" -- "$NC" probe --backend reference --op layer_norm
expect_out "^\[case\.convention\]$" "probe reference card"
expect_out "^eps = 1e-05 +# certain" "probe reference eps"
expect_out "^eps_placement = \"inside_sqrt\"" "probe reference placement"
expect_out "^0 deviations" "probe reference deviations"
expect_rc 0 "probe mutant" -- "$NC" probe --backend mutant:eps_outside_sqrt --op rms_norm
expect_out "!! eps_placement +certain +outside_sqrt" "probe mutant names the fault"
expect_out "^eps_placement = \"outside_sqrt\"" "probe mutant card"
expect_rc 0 "probe json" -- "$NC" probe --backend mutant:wrong_eps --format json
expect_out "\"card\": \"# normcheck probe" "probe json card"
expect_out "\"property\": \"eps\"" "probe json findings"
if command -v python3 >/dev/null && ! python3 -m json.tool "$tmp/out" >/dev/null; then echo "FAIL: probe json is not JSON"; fails=$((fails + 1)); fi

# probe --expect CARD: a CI gate on a backend's convention. The card probe prints for cpu
# is the card cpu matches; a backend with another eps, estimator or placement differs (1).
expect_rc 0 "probe for a card" -- "$NC" probe --backend cpu
sed -n '/^# normcheck probe/,$p' "$tmp/out" >"$tmp/card.toml"
expect_rc 0 "cpu matches its card" -- "$NC" probe --backend cpu --expect "$tmp/card.toml"
expect_err "cpu matches the card" "--expect matches"
for m in wrong_eps unbiased_variance eps_outside_sqrt eps_missing f16_accumulation; do
  expect_rc 1 "mutant:$m differs from the card" -- "$NC" probe --backend mutant:$m --expect "$tmp/card.toml"
  expect_err "mutant:$m differs from the card" "--expect names the difference ($m)"
done
printf '[case.convention]\neps = 1e-05\nbogus = 1\n' >"$tmp/badcard.toml"
expect_rc 2 "malformed card" -- "$NC" probe --backend cpu --expect "$tmp/badcard.toml"
expect_err "badcard.toml:3: case.convention.bogus: unknown key" "card errors name file, line and field"
expect_rc 2 "card with --placement" -- "$NC" probe --backend cpu --expect "$tmp/card.toml" --placement outside_sqrt

# probe names the presets the backend matches (issue 20), on what it determined; a mutant
# with another eps is named by the difference, never as a match.
expect_rc 0 "probe cpu: presets" -- "$NC" probe --backend cpu
expect_out "^  matches: +.*pytorch\.LayerNorm" "probe cpu matches pytorch.LayerNorm"
expect_out "^  matches: +.*onnx\.LayerNormalization" "probe cpu matches onnx.LayerNormalization"
expect_out "keras\.LayerNormalization in eps 0\.001 \(found 1e-05\)" "probe cpu differs from Keras in eps"
expect_out "the eps found is the eps sent" "probe: the eps-sent caveat"
expect_out "^  not compared: rounding order \(probed in f16/bf16 only, not f32\)" "probe: what a match does not cover is said"
expect_rc 0 "probe wrong_eps: presets" -- "$NC" probe --backend mutant:wrong_eps
if grep -qE "^  matches: .*pytorch\.LayerNorm" "$tmp/out"; then echo "FAIL: mutant:wrong_eps matched pytorch.LayerNorm"; fails=$((fails + 1)); fi
expect_out "pytorch\.LayerNorm in eps 1e-05" "probe wrong_eps: the difference named"
expect_rc 0 "probe rms cpu json: presets" -- "$NC" probe --backend cpu --op rms_norm --format json
cp "$tmp/out" "$tmp/probe.json"
expect_rc 0 "probe json presets field" -- python3 -c "
import json, sys; j = json.load(open('$tmp/probe.json')); p = j['presets']
assert 'apex.FusedRMSNorm' in p['matches'] and 'onnx.RMSNormalization' in p['matches'], p
d = {e['name']: e['differences'] for e in p['differs']}
assert any(x.startswith('affine one_plus_w') for x in d['hf.GemmaRMSNorm']), d
assert any(x.startswith('eps 1e-06') for x in d['hf.LlamaRMSNorm']), d
assert not set(p['matches']) & set(d), p"
# The rounding order (bf16): cpu rounds once unless sent normalized_dtype, and the card says so.
expect_rc 0 "probe cpu bf16 rms" -- "$NC" probe --backend cpu --op rms_norm --dtype bf16
expect_out "^  ok rounding_order +certain +once, at the output" "probe: the rounding order of cpu (bf16)"
expect_out "^normalized_dtype = \"none\" +# certain" "probe card: normalized_dtype"
expect_out "hf\.LlamaRMSNorm in .*rounding order: normalized value rounded to bf16 first \(found one rounding\)" "probe: Llama's order named as a difference"
printf '[case.convention]\neps = 1e-05\naffine = "gamma"\nnormalized_dtype = "bf16"\n' >"$tmp/card_bf16.toml"
expect_rc 0 "probe --expect normalized_dtype: cpu follows what it is sent" -- "$NC" probe --backend cpu --op rms_norm --dtype bf16 --expect "$tmp/card_bf16.toml"
expect_out "^  ok rounding_order +certain +normalized value rounded to bf16" "probe: cpu sent normalized_dtype rounds first"
printf '[case.convention]\neps = 1e-05\naffine = "gamma"\nnormalized_dtype = "none"\n' >"$tmp/card_none.toml"
expect_rc 1 "probe --expect normalized_dtype in f32: not probed is no confirmation" -- "$NC" probe --backend cpu --op rms_norm --expect "$tmp/card_none.toml"
expect_err "rounding_order was not probed" "probe --expect: the unprobed key is named"
expect_rc 2 "probe --expect normalized_dtype of another dtype" -- "$NC" probe --backend cpu --op rms_norm --dtype f16 --expect "$tmp/card_bf16.toml"
expect_err "is not the probe's --dtype" "probe --expect: dtype mismatch named"
# --all-mutants probes each op's own forward mutants (family mutants have no kernel for it).
expect_rc 0 "probe --all-mutants" -- "$NC" probe --all-mutants
expect_out "^cpu +layer_norm +conforms" "probe --all-mutants: cpu conforms"
expect_out "^mutant:eps_missing +rms_norm +eps = 0" "probe --all-mutants: a mutant named"
expect_rc 0 "compare-eps f16 with the default means" -- "$NC" compare-eps --dtype f16
expect_out "^mean = 10000 " "compare-eps f16: mean 1e4 is a row f16 holds"
expect_rc 2 "compare-eps quantized dtype" -- "$NC" compare-eps --dtype int8
expect_err "unknown dtype 'int8'" "compare-eps --dtype int8 named"
expect_rc 2 "presets --op empty" -- "$NC" presets --op ""
# A worker that computes Keras's LayerNormalization (NumPy, epsilon 1e-3 whatever it is sent)
# is named as Keras.
if python3 -c "import numpy" 2>/dev/null; then
  expect_rc 0 "probe emulated Keras" -- "$NC" probe --backend "cmd:python3 tools/adapters/framework_layer.py emulated.keras.LayerNormalization"
  expect_out "^  matches: +keras\.LayerNormalization$" "a Keras-like worker is named as Keras"
  expect_out "pytorch\.LayerNorm in eps 1e-05 \(found 0\.001\)" "and differs from PyTorch in eps"
else
  echo "note: NumPy missing: the emulated-Keras probe did not run (tools/setup_adapters.sh installs it)"
fi

# compare-eps: the worked example (var 1e-12, eps 1e-5) and an atomically written plot.
expect_rc 0 "compare-eps" -- "$NC" compare-eps --conv eps=1e-5,placement=inside_sqrt --conv eps=1e-6,placement=inside_sqrt \
  --conv eps=1e-5,placement=outside_sqrt --means 0 --plot "$tmp/plot.svg"
expect_out "^ +1e-12 +316\.2277502 +999\.9995 +90909\.09" "compare-eps worked example"
expect_out "#3 vs #1, mean 0: variance in \[1e-14, 1e\+04\]" "compare-eps ranges"
if ! grep -q "</svg>" "$tmp/plot.svg" 2>/dev/null; then echo "FAIL: compare-eps plot not written"; fails=$((fails + 1)); fi
if ls "$tmp"/plot.svg.tmp.* >/dev/null 2>&1; then echo "FAIL: compare-eps left a temporary file"; fails=$((fails + 1)); fi

if [ "$fails" -ne 0 ]; then echo "$fails failure(s)"; exit 1; fi
echo "probe CLI: all checks passed"
