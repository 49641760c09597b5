#!/usr/bin/env bash
# The cuda backend through the CLI: listed and selectable; without a device (or in a build
# without CUDA) its cases are SKIPPED with the reason and the exit code is 0, or 3 under
# --strict; with a device, the bundled cases pass. Run by ctest from the source root with
# NORMCHECK set to the binary.
set -u
NORMCHECK=${NORMCHECK:-./build/normcheck}
fail=0
check() {  # check DESCRIPTION CONDITION...
  local what=$1; shift
  if "$@"; then echo "ok   $what"; else echo "FAIL $what"; fail=1; fi
}

"$NORMCHECK" backends > /tmp/nc_cuda_backends.$$ 2>&1
check "cuda is listed by 'normcheck backends'" grep -q '^cuda ' /tmp/nc_cuda_backends.$$

out=$("$NORMCHECK" run --backend cuda --no-color 2>&1); rc=$?
if grep -q 'SKIPPED.*cuda: \(unavailable: no CUDA device\|not built\)' <<<"$out"; then
  echo "(no usable CUDA device: checking the SKIPPED path)"
  # A requested backend that evaluated nothing never passes: unavailable is exit 3.
  check "run --backend cuda without a device exits 3 (rc=$rc)" test "$rc" -eq 3
  check "the verdict says cuda evaluated nothing" grep -q 'cuda: evaluated nothing' <<<"$out"
  # shellcheck disable=SC2016  # $1 expands in the inner shell
  check "every cuda row of the table is SKIP" bash -c 'grep -Eq "^[^ ]+ +[^ ]+ +cuda .* SKIP" <<<"$1" && ! grep -Eq "^[^ ]+ +[^ ]+ +cuda .* (PASS|FAIL|ERROR)" <<<"$1"' _ "$out"
  "$NORMCHECK" run --backend cuda --strict --no-color > /tmp/nc_cuda_strict.$$ 2>&1; src=$?
  check "run --backend cuda --strict without a device exits 3 (rc=$src)" test "$src" -eq 3
  check "--strict names the reason" grep -q 'cuda: \(unavailable: no CUDA device\|not built\)' /tmp/nc_cuda_strict.$$
else
  echo "(a CUDA device answered: checking that the bundled cases pass)"
  check "run --backend cuda --strict exits 0" "$NORMCHECK" run --backend cuda --strict --no-color
fi
rm -f /tmp/nc_cuda_backends.$$ /tmp/nc_cuda_strict.$$
[ "$fail" -eq 0 ] || { echo "$out" | tail -20; exit 1; }
