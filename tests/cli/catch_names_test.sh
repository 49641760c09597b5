#!/usr/bin/env bash
# Every Catch2 test must be discoverable as one ctest entry: no ';' in a TEST_CASE name
# (catch_discover_tests splits the name there into two entries that select no test).
set -u
# (Catch2 2 exits with the number of tests listed, so the status says nothing here.)
names=$("$1" --list-test-names-only)
[ "$(wc -l <<<"$names")" -gt 10 ] || { echo "too few tests listed: $names"; exit 1; }
if bad=$(grep -n ';' <<<"$names"); then
  echo "TEST_CASE names with ';' (ctest would split them into entries that run nothing):"
  echo "$bad"
  exit 1
fi
echo "catch_test_names: $(wc -l <<<"$names") names, none with ';'"
