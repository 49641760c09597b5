#!/usr/bin/env bash
# README "Python": builds the normcheck package from this tree with `pip install .` into a
# virtual environment (.venv; Debian's Python refuses system-wide pip installs, PEP 668) and
# runs its tests (python/tests, which also run the examples in python/examples; ml_dtypes for
# the bf16 arrays test).
# Usage: tools/python_check.sh [pytest arguments]      (after tools/setup.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
t0=$(date +%s)
.venv/bin/python -m pip install -q --disable-pip-version-check . pytest ml_dtypes
echo "python_check: pip install . took $(( $(date +%s) - t0 )) s"
.venv/bin/python -m pytest -q -p no:cacheprovider python/tests "$@"   # from the root: python/normcheck (no module) is not on the path
