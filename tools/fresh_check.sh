#!/usr/bin/env bash
# README's two commands and its Python section, in a clean clone of the committed HEAD inside
# a brand-new Debian 12 root (../shared/tools/fresh-machine-check; as root; ~40 min on 2
# cores): a package installed by hand on this machine cannot hide a missing install step.
# Run before each submission (CI has no time for three more cold builds). Logs:
# /tmp/fresh-machine-check/. Exit status: that of the first command that fails.
set -euo pipefail
cd "$(dirname "$0")/.."
exec ../shared/tools/fresh-machine-check \
  'tools/setup.sh && tools/build.sh && build/normcheck run' \
  'tools/setup.sh && tools/setup_adapters.sh && tools/build.sh && (cd build && ctest --output-on-failure -j 2)' \
  'tools/setup.sh && tools/python_check.sh'
