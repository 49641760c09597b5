#!/usr/bin/env bash
# Installs normcheck's build dependencies from Debian's packages (idempotent).
# Usage: tools/setup.sh          (as root, or with sudo available)
#        tools/setup.sh --fuzz   also what tools/fuzz.sh needs: clang, its libFuzzer/ASan/UBSan
#                                runtimes (libclang-rt-14-dev, only "recommended" by clang) and
#                                OpenMP for clang (libomp-dev)
set -euo pipefail
pkgs=(cmake g++ make pkg-config catch2 libfmt-dev libcli11-dev libboost-dev libmpfr-dev libgmp-dev
      libtomlplusplus-dev nlohmann-json3-dev libpugixml-dev libxml2-utils python3
      libdnnl-dev python3-pip python3-dev python3-venv)
if [ "${1:-}" = "--fuzz" ]; then pkgs+=(clang libclang-rt-14-dev libomp-dev); fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all dependencies present"
  exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "setup: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
