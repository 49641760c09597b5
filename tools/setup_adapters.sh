#!/usr/bin/env bash
# Installs the Python packages of the ONNX Runtime adapter (tools/adapters) from PyPI, pinned
# to the versions README "Findings" was measured with. Idempotent.
# Usage: tools/setup_adapters.sh        (PyTorch for tools/adapters/torch_backend.py: pip install torch)
set -euo pipefail
onnx_v=1.22.0 ort_v=1.32.0
if python3 - "$onnx_v" "$ort_v" 2>/dev/null <<'PY'
import sys, numpy, onnx, onnxruntime
sys.exit(0 if (onnx.__version__, onnxruntime.__version__) == (sys.argv[1], sys.argv[2]) else 1)
PY
then
  echo "setup_adapters: numpy, onnx $onnx_v, onnxruntime $ort_v present"
  exit 0
fi
pkgs=(numpy "onnx==$onnx_v" "onnxruntime==$ort_v")
echo "setup_adapters: pip install ${pkgs[*]}"
# A Debian system Python refuses pip installs (PEP 668) unless told otherwise.
python3 -m pip install -q --disable-pip-version-check "${pkgs[@]}" ||
  python3 -m pip install -q --disable-pip-version-check --break-system-packages "${pkgs[@]}"
