#!/usr/bin/env bash
# The preset catalog (src/ops/presets.cpp) against the real frameworks (issue 20): each
# framework layer, built with its DEFAULT arguments (tools/adapters/framework_layer.py), is
#   1. probed: `normcheck probe` must name the preset of the same name among its matches
#      (eps, eps placement, estimator, affine, centering, as the framework computes them);
#   2. run on cases whose convention is that preset (batch norms: this step only, one training
#      call with running stats): the framework's outputs must pass
#      normcheck's gate against the exact reference under the preset.
# Also the PyTorch adapter (torch_backend.py), which takes eps from the request: probe names
# pytorch.LayerNorm. The frameworks tools/setup_adapters.sh installs (onnxruntime, jax, flax,
# keras) are required: any missing makes the whole test SKIPPED (exit 77) with the reason;
# torch is optional (pip install torch), its layers are noted as not run.
set -u
NC=${NORMCHECK:?set NORMCHECK to the normcheck binary}
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

missing=$(python3 - <<'PY' 2>/dev/null || echo "python3"
import importlib.util, os
os.environ.setdefault("KERAS_BACKEND", "jax")
print(" ".join(m for m in ("numpy", "onnx", "onnxruntime", "jax", "flax", "keras") if importlib.util.find_spec(m) is None))
PY
)
if [ -n "$missing" ]; then
  echo "SKIP: missing $missing (tools/setup_adapters.sh installs them); the presets were not checked against the frameworks"
  exit 77
fi
have_torch=0
python3 -c "import torch" 2>/dev/null && have_torch=1

# check LAYER OP DTYPE [PROBE ARGS...]
check() {
  local layer=$1 op=$2 dt=$3 be="cmd:python3 tools/adapters/framework_layer.py $1"
  shift 3
  local preset=${layer#emulated.}  # an emulation is judged against the preset it emulates
  if ! "$NC" probe --backend "$be" --op "$op" --dtype "$dt" "$@" >"$tmp/out" 2>"$tmp/err"; then
    echo "FAIL: probe $layer ($dt): exit $?"; cat "$tmp/out" "$tmp/err"; fails=$((fails + 1)); return
  fi
  local line
  line=$(grep -E "^  matches: " "$tmp/out")
  if ! grep -qE "(: +|, )${preset//./\\.}(,|$)" <<<"$line"; then
    echo "FAIL: probe of $layer ($dt) does not name its preset: ${line:-no matches line}"
    sed -n '/deviation/,/convention card/p' "$tmp/out"; fails=$((fails + 1)); return
  fi
  echo "ok   probe $layer ($dt): $line"
  local beta="" affine_shape="[64]"
  [ "$op" = layer_norm ] && beta='inputs.beta = { generator = "normal", seed = 5, shape = [64], std = 0.5 }'
  cat >"$tmp/cases.toml" <<TOML
[defaults]
op = "$op"
dtype = "$dt"
convention = "$preset"

[[case]]
name = "normal_4x64"
inputs.x = { generator = "normal", seed = 3, shape = [4, 64] }
inputs.gamma = { generator = "normal", seed = 4, shape = $affine_shape, mean = 1.0, std = 0.25 }
$beta

[[case]]
name = "hand_1_to_64"
inputs.x = { generator = "arange", start = 1.0, step = 1.0, shape = [1, 64] }
inputs.gamma = { generator = "normal", seed = 6, shape = $affine_shape, mean = 1.0, std = 0.25 }
$beta

[[case]]
name = "small_variance_eps_visible"
inputs.x = { generator = "normal", seed = 7, shape = [3, 64], std = 1e-3 }
inputs.gamma = { generator = "normal", seed = 8, shape = $affine_shape, mean = 1.0, std = 0.25 }
$beta
TOML
  if "$NC" run "$tmp/cases.toml" --backend "$be" --strict --no-progress >"$tmp/out" 2>"$tmp/err"; then
    echo "ok   run $layer ($dt): $(grep -E 'case runs|passed' "$tmp/out" | tail -1)"
  else
    echo "FAIL: $layer ($dt) fails cases under its own preset"; cat "$tmp/out" "$tmp/err"; fails=$((fails + 1))
  fi
}

# expect_run FILE LAYER PRESET WANT BACKEND: normcheck run FILE on BACKEND must exit WANT.
expect_run() {
  "$NC" run "$1" --backend "$5" --strict --no-progress >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if [ "$rc" = "$4" ]; then
    echo "ok   run $2 under $3: exit $rc ($(grep -E 'case runs' "$tmp/out" | tail -1))"
  else
    echo "FAIL: $2 under $3: exit $rc, expected $4"; cat "$tmp/out" "$tmp/err"; fails=$((fails + 1))
  fi
}

# check_case LAYER OP SHAPE_X C AFFINE [EXTRA]: a run of one layer on normal data under its
# preset (no probe for these families yet): y must pass the gate. C: the parameters' length;
# AFFINE: none | gamma_beta; EXTRA: more [defaults] keys (num_groups, axes).
check_case() {  # ... [PRESET EXPECTED_RC]: under another preset, the exit status expected
  local layer=$1 op=$2 xs=$3 c=$4 affine=$5 extra=${6:-} preset=${7:-$1} want=${8:-0}
  local be="cmd:python3 tools/adapters/framework_layer.py $1"
  local params=""
  [ "$affine" = gamma_beta ] && params="inputs.gamma = { generator = \"normal\", seed = 4, shape = [$c], mean = 1.0, std = 0.25 }
inputs.beta = { generator = \"normal\", seed = 5, shape = [$c], std = 0.5 }"
  cat >"$tmp/fam.toml" <<TOML
[defaults]
op = "$op"
dtype = "f32"
convention = { preset = "$preset"$extra }

[[case]]
name = "normal"
inputs.x = { generator = "normal", seed = 3, shape = $xs, mean = 0.5, std = 2.0 }
$params

[[case]]
name = "small_spread"
inputs.x = { generator = "normal", seed = 9, shape = $xs, std = 1e-3 }
$params

[[case]]
name = "tiny_eps_or_clamp_decides"
inputs.x = { generator = "normal", seed = 10, shape = $xs, std = 1e-8 }
$params
TOML
  expect_run "$tmp/fam.toml" "$layer" "$preset" "$want" "$be"
}

# check_bn LAYER [PRESET EXPECTED_RC]: one training call of a batch norm layer (no probe for
# batch_norm yet) on cases under PRESET (default: its own), exit EXPECTED_RC (default 0).
check_bn() {
  local layer=$1 preset=${2:-$1} want=${3:-0} be="cmd:python3 tools/adapters/framework_layer.py $1"
  local conv="\"$preset\""
  [ "${preset:0:1}" = "{" ] && conv=$preset  # an inline table: a preset with overrides
  cat >"$tmp/bn.toml" <<TOML
[defaults]
op = "batch_norm"
dtype = "f32"
convention = $conv

[[case]]
name = "train_4x3x2x2"
inputs.x = { generator = "normal", seed = 3, shape = [4, 3, 2, 2], mean = 0.5, std = 2.0 }
inputs.gamma = { generator = "normal", seed = 4, shape = [3], mean = 1.0, std = 0.25 }
inputs.beta = { generator = "normal", seed = 5, shape = [3], std = 0.5 }
inputs.running_mean = { generator = "normal", seed = 6, shape = [3] }
inputs.running_var = { generator = "uniform", seed = 7, shape = [3], low = 0.5, high = 2.0 }

[[case]]
name = "train_small_variance"
inputs.x = { generator = "normal", seed = 8, shape = [8, 3, 2, 2], std = 1e-2 }
inputs.gamma = { values = [1.0, 0.5, 2.0] }
inputs.beta = { values = [0.0, 0.25, -1.0] }
inputs.running_mean = { values = [0.0, 0.0, 0.0] }
inputs.running_var = { values = [1.0, 1.0, 1.0] }
TOML
  expect_run "$tmp/bn.toml" "$layer" "$preset" "$want" "$be"
}

check keras.LayerNormalization layer_norm f32
check keras.RMSNormalization rms_norm f32
check flax.LayerNorm layer_norm f32
check flax.RMSNorm rms_norm f32
check onnx.LayerNormalization layer_norm f32
check onnx.RMSNormalization rms_norm f32
check emulated.keras.LayerNormalization layer_norm f32
check_bn keras.BatchNormalization
# A finding about ONNX Runtime, not a preset to loosen: the ONNX specification casts Normalized
# to X's type before Scale and B (the presets say so), ONNX Runtime 1.32 rounds once. In f16
# the probe must see that order and name the difference.
for L in onnx.LayerNormalization onnx.RMSNormalization; do
  op=layer_norm; [ "$L" = onnx.RMSNormalization ] && op=rms_norm
  if "$NC" probe --backend "cmd:python3 tools/adapters/framework_layer.py $L" --op $op --dtype f16 >"$tmp/out" 2>"$tmp/err" &&
     grep -qE "^  (ok|!!) rounding_order +certain +once, at the output" "$tmp/out" &&
     grep -qE "${L//./\\.} in .*rounding order: normalized value rounded to f16 first \(found one rounding\)" "$tmp/out"; then
    echo "ok   finding: ONNX Runtime's $L rounds once in f16 (the specification casts Normalized first)"
  else
    echo "FAIL: the rounding order of ONNX Runtime's $L in f16 is not the recorded finding"; cat "$tmp/out" "$tmp/err"; fails=$((fails + 1))
  fi
done
check_case keras.GroupNormalization group_norm "[2, 64, 3, 3]" 64 gamma_beta ", num_groups = 32"
check_case flax.GroupNorm group_norm "[2, 64, 3, 3]" 64 gamma_beta ", num_groups = 32"
check_case onnx.GroupNormalization group_norm "[2, 12, 5]" 12 gamma_beta ", num_groups = 3"
check_case onnx.InstanceNormalization instance_norm "[2, 3, 4, 4]" 3 gamma_beta
check_case onnx.LpNormalization l2_normalize "[4, 16]" 0 none
check_bn flax.BatchNorm
# The run part can fail: Keras's layer under PyTorch's convention (eps, momentum, estimator).
check_bn keras.BatchNormalization pytorch.BatchNorm2d 1
# ... and the estimator alone decides: Keras's preset with PyTorch's unbiased running_var fails.
check_bn keras.BatchNormalization '{ preset = "keras.BatchNormalization", running_variance = "unbiased" }' 1
check_bn flax.BatchNorm '{ preset = "flax.BatchNorm", running_variance = "unbiased" }' 1
if [ "$have_torch" = 1 ]; then
  check pytorch.LayerNorm layer_norm f32
  check pytorch.RMSNorm rms_norm f32
  # eps=None is the opmath epsilon 2^-23 for bf16 data too, not finfo(bfloat16).eps = 2^-7.
  check pytorch.RMSNorm rms_norm bf16
  check_bn pytorch.BatchNorm2d
  check_case pytorch.GroupNorm group_norm "[2, 12, 5]" 12 gamma_beta ", num_groups = 3"
  check_case pytorch.InstanceNorm2d instance_norm "[2, 3, 4, 4]" 3 none
  check_case pytorch.F.normalize l2_normalize "[4, 16, 3]" 0 none ", axes = [1]"
  # The rounding order (normalized_dtype): LlamaRMSNorm's forward, transcribed in PyTorch, is
  # correctly rounded (<= 0.5 ULP) under hf.LlamaRMSNorm in bf16, and fails that gate under
  # the same convention with one rounding: the key separates the two orders.
  cat >"$tmp/llama.toml" <<'TOML'
[defaults]
op = "rms_norm"
dtype = "bf16"
convention = "hf.LlamaRMSNorm"
inputs.x = { generator = "normal", seed = 3, shape = [16, 256] }
inputs.gamma = { generator = "normal", seed = 4, shape = [256], mean = 1.0, std = 0.25 }

[[case]]
name = "llama_bf16_correctly_rounded"
expect.gate = { metric = "ulp", max = 0.5 }
TOML
  sed 's/^name = .*/&\nconvention = { normalized_dtype = "none" }/' "$tmp/llama.toml" >"$tmp/once.toml"
  be="cmd:python3 tools/adapters/framework_layer.py emulated.hf.LlamaRMSNorm"
  if "$NC" run "$tmp/llama.toml" --backend "$be" --strict --no-progress >"$tmp/out" 2>&1 &&
     ! "$NC" run "$tmp/once.toml" --backend "$be" --strict --no-progress >"$tmp/out2" 2>&1 &&
     grep -q "FAILED gate: ulp" "$tmp/out2"; then
    echo "ok   emulated.hf.LlamaRMSNorm: <= 0.5 ULP under hf.LlamaRMSNorm (bf16), over it with one rounding"
  else
    echo "FAIL: the rounding order of hf.LlamaRMSNorm"; cat "$tmp/out" "$tmp/out2"; fails=$((fails + 1))
  fi
  check_bn pytorch.BatchNorm2d keras.BatchNormalization 1
  # ... and the probe finds that order (bf16) and names the preset by it, not the one-rounding ones.
  if "$NC" probe --backend "$be" --op rms_norm --dtype bf16 >"$tmp/out" 2>"$tmp/err" &&
     grep -qE "^  !! rounding_order +certain +normalized value rounded to bf16" "$tmp/out" &&
     grep -qE "^  matches: +hf\.LlamaRMSNorm, hf\.T5LayerNorm$" "$tmp/out"; then
    echo "ok   probe emulated.hf.LlamaRMSNorm (bf16): $(grep -E '^  matches: ' "$tmp/out")"
  else
    echo "FAIL: probe of emulated.hf.LlamaRMSNorm (bf16) misses its rounding order"; cat "$tmp/out" "$tmp/err"; fails=$((fails + 1))
  fi
  printf '[case.convention]\neps = 1.1920928955078125e-07\naffine = "gamma"\nnormalized_dtype = "bf16"\n' >"$tmp/card.toml"
  if ! "$NC" probe --backend "cmd:python3 tools/adapters/framework_layer.py pytorch.RMSNorm" --op rms_norm --dtype bf16 \
       --expect "$tmp/card.toml" >"$tmp/out" 2>"$tmp/err" && grep -q "rounding_order is once" "$tmp/err"; then
    echo "ok   probe --expect normalized_dtype = bf16 fails torch.nn.RMSNorm (it rounds once)"
  else
    echo "FAIL: probe --expect normalized_dtype did not fail torch.nn.RMSNorm"; cat "$tmp/out" "$tmp/err"; fails=$((fails + 1))
  fi
  if "$NC" probe --backend "cmd:python3 tools/adapters/torch_backend.py" >"$tmp/out" 2>"$tmp/err" &&
     grep -qE "^  matches: .*pytorch\.LayerNorm" "$tmp/out"; then
    echo "ok   probe torch_backend.py: $(grep -E '^  matches: ' "$tmp/out")"
  else
    echo "FAIL: probe of the PyTorch adapter does not name pytorch.LayerNorm"; cat "$tmp/out" "$tmp/err"; fails=$((fails + 1))
  fi
else
  echo "note: torch not installed: pytorch.LayerNorm, pytorch.RMSNorm and the PyTorch adapter were not run (pip install torch)"
fi

# TensorFlow (optional, pip install tensorflow-cpu): l2_normalize clamps the SQUARED norm
# (max(sum x^2, 1e-12)); under torch's F.normalize convention (max(||x||, 1e-12)) it fails
# on rows whose norm is below 1e-6.
if python3 -c "import tensorflow" 2>/dev/null; then
  check_case tf.math.l2_normalize l2_normalize "[4, 16, 3]" 0 none ", axes = [1]"
  check_case tf.math.l2_normalize l2_normalize "[4, 16, 3]" 0 none ", axes = [1]" pytorch.F.normalize 1
else
  echo "note: tensorflow not installed: tf.math.l2_normalize was not run (pip install tensorflow-cpu)"
fi

# The Hugging Face model norms, the transformers classes themselves (PyTorch), in bf16: Llama
# and T5 round the normalized value to bf16 before the weight, Gemma multiplies by (1 + w) in
# f32 and rounds once; probe must find each and name the preset.
if [ "$have_torch" = 1 ] && python3 -c "import transformers" 2>/dev/null; then
  check hf.LlamaRMSNorm rms_norm bf16
  check hf.T5LayerNorm rms_norm bf16
  check hf.GemmaRMSNorm rms_norm bf16 --affine one_plus_w
else
  echo "note: torch or transformers not installed: hf.LlamaRMSNorm, hf.T5LayerNorm, hf.GemmaRMSNorm were not run (pip install torch transformers)"
fi

if [ "$fails" -ne 0 ]; then echo "$fails failure(s)"; exit 1; fi
echo "presets against the frameworks: all checks passed"
