#!/usr/bin/env bash
# The layers the build enforces (CMakeLists.txt "Layers"): each layer compiles against an
# include view of its own and lower layers' folders only. This checks each view holds
# exactly the folders the DAG allows, and that an upward #include does not compile.
set -u
views=${VIEWS:?set VIEWS to build/include-views}
cxx=${CXX:-g++}
pass=0 fail=0
check() {  # check LAYER "allowed folders..."
  local layer=$1 want=$2 got
  got=$(cd "$views/$layer" && find . -type l | sed 's|^\./||' | sort | tr '\n' ' ' | sed 's/ $//')
  if [ "$got" = "$want" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL view $layer: '$got', wanted '$want'"; fi
}
check core "core"
check spec "core spec"
check ops "core ops spec"
check cases "cases core ops spec"
check checks "cases checks core ops spec"
check report "cases checks core ops report spec"
check cuda "core kernels/cuda spec"
check backends "backends core kernels/cuda ops spec"
check run "backends cases checks core kernels/cuda ops report run spec"
# An upward include fails to compile: the lower layer's view has no such header.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
upward() {  # upward LAYER HEADER: a file of LAYER including HEADER must not compile
  printf '#include "%s"\n' "$2" >"$tmp/up.cpp"
  if "$cxx" -std=c++20 -fsyntax-only -I "$views/$1" "$tmp/up.cpp" >"$tmp/err" 2>&1; then
    fail=$((fail + 1)); echo "FAIL: $1 compiled an upward #include of $2"
  elif grep -q "No such file" "$tmp/err"; then pass=$((pass + 1)); else
    fail=$((fail + 1)); echo "FAIL: $1 including $2 failed for another reason:"; head -3 "$tmp/err"; fi
}
upward spec ops/registry.hpp
upward ops cases/case.hpp
upward cases checks/runner.hpp
upward checks report/model.hpp
upward checks backends/registry.hpp
upward report run/pipeline.hpp
upward backends checks/runner.hpp
echo "layers: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
