#!/usr/bin/env bash
# Installs the Python packages of the framework adapters (tools/adapters) from PyPI, pinned
# to the versions README "Findings" and the preset checks (tests/cli/presets_frameworks_test.sh)
# were measured with: numpy, onnx and onnxruntime (onnxruntime_backend.py), and jax, flax and
# keras (framework_layer.py: the Flax and Keras 3 layers the presets are checked against;
# Keras runs on the JAX backend, no TensorFlow). Idempotent.
# Usage: tools/setup_adapters.sh        (PyTorch for tools/adapters/torch_backend.py: pip install torch)
set -euo pipefail
onnx_v=1.22.0 ort_v=1.32.0 jax_v=0.10.2 flax_v=0.12.8 keras_v=3.15.1
if KERAS_BACKEND=jax python3 - "$onnx_v" "$ort_v" "$jax_v" "$flax_v" "$keras_v" 2>/dev/null <<'PY'
import sys, numpy, onnx, onnxruntime, jax, flax, keras
have = (onnx.__version__, onnxruntime.__version__, jax.__version__, flax.__version__, keras.__version__)
sys.exit(0 if have == tuple(sys.argv[1:]) else 1)
PY
then
  echo "setup_adapters: numpy, onnx $onnx_v, onnxruntime $ort_v, jax $jax_v, flax $flax_v, keras $keras_v present"
  exit 0
fi
pkgs=(numpy "onnx==$onnx_v" "onnxruntime==$ort_v" "jax[cpu]==$jax_v" "flax==$flax_v" "keras==$keras_v")
echo "setup_adapters: pip install ${pkgs[*]}"
# A Debian system Python refuses pip installs (PEP 668) unless told otherwise.
python3 -m pip install -q --disable-pip-version-check "${pkgs[@]}" ||
  python3 -m pip install -q --disable-pip-version-check --break-system-packages "${pkgs[@]}"
