#!/usr/bin/env bash
# CLI checks for the backward direction (run by ctest from the repository root with NORMCHECK
# set to the binary): backward rows beside the forward ones, mutants killed with a repro
# line, dumps of dx, and file:line:field for invalid backward case files.
set -u
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
check() {  # check NAME EXPECTED_RC PATTERN -- command...
  local name=$1 want=$2 pat=$3; shift 4
  local out rc
  out=$("$@" 2>&1); rc=$?
  if [[ $rc -ne $want ]]; then echo "FAIL $name: exit $rc, expected $want"; echo "$out" | tail -5; fail=1; return; fi
  if [[ -n $pat ]] && ! grep -qE -- "$pat" <<<"$out"; then echo "FAIL $name: output lacks /$pat/"; echo "$out" | tail -5; fail=1; return; fi
  echo "ok   $name"
}
N=${NORMCHECK:?set NORMCHECK to the normcheck binary}
for op in layer_norm rms_norm group_norm instance_norm batch_norm l2_normalize ada_layer_norm; do
  check "$op backward beside forward" 0 "^$op/backward +$op +cpu .*PASS" -- "$N" run "cases/$op" --no-color
done
check "filter */backward" 0 '^[0-9]+ case runs: [0-9]+ passed, 0 failed, 0 skipped, 0 mistrusted, 0 errors' -- "$N" run --filter '*/backward' --no-color
check "ln mutant" 1 "rerun: .*normcheck run cases/layer_norm/backward.toml --case ln_bwd_123_dy100 --backend mutant:ln_dx_no_mean_term" -- \
  "$N" run cases/layer_norm/backward.toml -b mutant:ln_dx_no_mean_term --no-color
check "bn mutant" 1 'FAILED bn_bwd_train_123 on mutant:bn_backward_constant_stats' -- \
  "$N" run cases/batch_norm/backward.toml -b mutant:bn_backward_constant_stats --no-color
check "dgamma mutant" 1 'FAILED gate dgamma' -- "$N" run cases/layer_norm/backward.toml --case ln_bwd_affine_rows -b mutant:dgamma_wrong_axis
check "forward mutants skip backward cases" 1 'SKIPPED .*no backward kernel for layer_norm' -- \
  "$N" run cases/layer_norm/backward.toml -b mutant:eps_missing --no-color
# ... and a backend that skipped every case checked nothing: that is not a pass.
check "a backend that evaluated nothing fails the run" 1 'mutant:eps_missing: evaluated none of its [0-9]+ cases' -- \
  "$N" run cases/layer_norm/backward.toml -b mutant:eps_missing --no-color
check "dump" 1 '' -- "$N" run cases/layer_norm/backward.toml --case ln_bwd_123_dy100 -b mutant:ln_dx_no_mean_term --dump-failures "$tmp/d"
check "dump has dx, dy, exact" 0 '' -- test -s "$tmp/d/ln_bwd_123_dy100__mutant_ln_dx_no_mean_term/dx.npy" -a \
  -s "$tmp/d/ln_bwd_123_dy100__mutant_ln_dx_no_mean_term/dy.npy" -a -s "$tmp/d/ln_bwd_123_dy100__mutant_ln_dx_no_mean_term/exact.npy"
check "json lists dgamma" 0 '"dgamma"' -- "$N" run cases/layer_norm/backward.toml --case ln_bwd_affine_rows --format json

bad() {  # bad NAME PATTERN BODY: a one-case file that must be rejected with exit 2
  printf '[[case]]\nname = "c"\ndtype = "f32"\n%s' "$3" >"$tmp/bad.toml"
  check "$1" 2 "$2" -- "$N" run "$tmp/bad.toml"
}
bad "unknown direction" 'bad.toml:5: case.c.convention.direction: unknown .sideways. \(forward \| backward\)' \
  $'op = "layer_norm"\nconvention.direction = "sideways"\ninputs.x = { values = [1, 2] }\n'
bad "dy missing" 'bad.toml:6: case.c.inputs.dy: direction = backward needs input dy' \
  $'op = "layer_norm"\nconvention.direction = "backward"\ninputs.x = { values = [1, 2] }\n'
bad "dy in a forward case" 'bad.toml:6: case.c.inputs.dy: input dy given but direction = forward' \
  $'op = "layer_norm"\ninputs.x = { values = [1, 2] }\ninputs.dy = { values = [1, 2] }\n'
bad "dy shape" 'bad.toml:7: case.c.inputs.dy.shape: dy has shape \[3\], expected the shape of y \[2\]' \
  $'op = "rms_norm"\nconvention.direction = "backward"\ninputs.x = { values = [1, 2] }\ninputs.dy = { values = [1, 2, 3] }\n'
bad "qk_norm backward" 'case.c.convention.direction: qk_norm has no backward' \
  $'op = "qk_norm"\nconvention.direction = "backward"\ninputs.q = { values = [[[[1, 2]]]] }\ninputs.k = { values = [[[[1, 2]]]] }\ninputs.dy = { values = [[[[1, 2]]]] }\n'
bad "orthogonal to a missing name" 'bad.toml:8: case.c.expect.orthogonal.b: .z. is neither an output nor an input' \
  $'op = "layer_norm"\nconvention.direction = "backward"\ninputs.x = { values = [1, 2] }\ninputs.dy = { values = [1, 2] }\nexpect.orthogonal = { a = "dx", b = "z" }\n'
bad "sums_to_zero of a parameter gradient" 'case.c.expect.sums_to_zero: .dgamma. has shape \[2\]; per-group sums need the shape of x \[3, 2\]' \
  $'op = "layer_norm"\nconvention = { direction = "backward", affine = "gamma" }\ninputs.x = { values = [[1, 2], [3, 4], [5, 6]] }\ninputs.dy = { values = [[1, 2], [3, 4], [5, 6]] }\ninputs.gamma = { values = [1, 1] }\nexpect.sums_to_zero = "dgamma"\n'
bad "expect.outputs.dx in a backward case" 'case.c.expect.outputs.dx: give dx.s values as expect.values' \
  $'op = "layer_norm"\nconvention.direction = "backward"\ninputs.x = { values = [1, 2] }\ninputs.dy = { values = [1, 2] }\nexpect.outputs = { dx = [0, 0] }\n'
printf '[[case]]\nname = "c"\ndtype = "f64"\nop = "layer_norm"\nconvention = { direction = "backward", eps = 1e-3 }\ninputs.x = { values = [1, 2, 4] }\ninputs.dy = { values = [1, 0, 0] }\nexpect.orthogonal = { a = "dx", b = "x" }\n' >"$tmp/eps.toml"
check "orthogonality claimed with eps > 0 is false in exact arithmetic" 1 'FAILED orthogonal dx.x: the property is false in exact arithmetic' -- \
  "$N" run "$tmp/eps.toml" -b reference
exit $fail
