#!/usr/bin/env bash
# CLI checks for the normalization families (run by ctest from the repository root with
# NORMCHECK set to the binary): exit codes, and file:line:field for invalid case files.
set -u
fail=0
check() {  # check NAME EXPECTED_RC PATTERN -- command...
  local name=$1 want=$2 pat=$3; shift 4
  local out rc
  out=$("$@" 2>&1); rc=$?
  if [[ $rc -ne $want ]]; then echo "FAIL $name: exit $rc, expected $want"; echo "$out" | tail -5; fail=1; return; fi
  if [[ -n $pat ]] && ! grep -qE -- "$pat" <<<"$out"; then echo "FAIL $name: output lacks /$pat/"; echo "$out" | tail -5; fail=1; return; fi
  echo "ok   $name"
}
N=${NORMCHECK:?set NORMCHECK to the normcheck binary}
check bn_training_1xC 2 'tests/data/batch_norm_training_1xC.toml:14: case.bn_train_1xC.inputs.x.shape: ' -- \
  "$N" run tests/data/batch_norm_training_1xC.toml
check gn_bad_groups 2 'tests/data/group_norm_bad_groups.toml:10: case.gn_3_groups_of_4_channels.convention.num_groups: ' -- \
  "$N" run tests/data/group_norm_bad_groups.toml
for op in batch_norm group_norm instance_norm l2_normalize scale_norm ada_layer_norm ada_rms_norm qk_norm; do
  check "$op passes" 0 "^$op/worked +$op +cpu .*PASS" -- "$N" run "cases/$op" --no-color
done
check bn_mutant_killed 1 'FAILED bn_13_train_momentum1 on mutant:bn_biased_running_var' -- \
  "$N" run cases/batch_norm -b mutant:bn_biased_running_var --no-color
check qk_reports_outputs 0 '"q_hat"' -- "$N" run cases/qk_norm --format json
exit $fail
