#!/usr/bin/env bash
# `cmake --install` gives a working tool: the binary finds the bundled cases, golden files
# and adapters installed beside it (P/share/normcheck), from any working directory, with
# the install tree moved elsewhere, and never through the source tree.
set -u
build=${BUILD:?set BUILD to the build folder}
src=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
check() {  # check NAME CMD...
  local name=$1; shift
  if "$@" >"$tmp/out" 2>&1; then pass=$((pass + 1)); echo "ok   $name"; else
    fail=$((fail + 1)); echo "FAIL $name"; tail -n 8 "$tmp/out"; fi
}
cmake --install "$build" --prefix "$tmp/first" >/dev/null || { echo "cmake --install failed"; exit 1; }
mv "$tmp/first" "$tmp/moved"  # relocatable: nothing points at the install prefix either
p=$tmp/moved
mkdir -p "$tmp/elsewhere/cases" && cd "$tmp/elsewhere"
want=$("$build/normcheck" run --list --no-progress | tail -1 | cut -d' ' -f1)
check "the installed tool lists the whole bundled suite" bash -c "'$p/bin/normcheck' run --list --no-progress | tail -1 | grep -q '^$want of $want cases (bundled cases ($p/share/normcheck/cases) + coverage matrix quick)'"
check "it runs a layer" bash -c "'$p/bin/normcheck' run --no-progress -f 'layer_norm/worked' -b cpu >'$tmp/run'"
check "... from the installed cases" grep -q "^suite: bundled cases ($p/share/normcheck/cases) + coverage matrix quick: 12 cases" "$tmp/run"
check "golden files installed and matching" "$p/bin/normcheck" golden
check "no source-tree marker installed" test ! -e "$p/bin/normcheck-source-dir"
check "adapters installed and listed" bash -c "'$p/bin/normcheck' backends | grep -q 'cmd:python3 $p/share/normcheck/adapters/torch_backend.py'"
check "the worker module beside them" test -f "$p/share/normcheck/adapters/normcheck_worker.py"
check "the plugin header" test -f "$p/include/normcheck/normcheck_plugin.h"
check "a wrong NORMCHECK_DATA_DIR is an error" bash -c "NORMCHECK_DATA_DIR=$tmp/elsewhere/nope '$p/bin/normcheck' run --list; [ \$? -eq 2 ]"
cd "$src"
echo "install: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
