// The catalog of framework norm conventions (presets.hpp). Each entry was read from the
// source file or documentation page it names; "verified" says which, and whether a test ran
// the framework. Add an entry here and nowhere else: `normcheck presets`, case files
// (convention = "NAME"), compare-eps --conv NAME all iterate this table.
#include "ops/presets.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"
#include "ops/registry.hpp"
#include "spec/convention.hpp"

namespace normcheck {

namespace {

constexpr std::string_view kSource = "read from source";
constexpr std::string_view kDocs = "read from documentation";
// Checked against the framework itself: tests/cli/presets_frameworks_test.sh probes the layer
// built with its default arguments (tools/adapters/framework_layer.py), requires the probe to
// name this preset, and runs cases under the preset on it (batch norms: the run only, one
// training call, running stats included). The versions are those of
// tools/setup_adapters.sh (torch: the one README "Findings" used; that part runs where torch is).
constexpr std::string_view kRunKeras = "read from source; run: tests/cli/presets_frameworks_test.sh (Keras 3.15.1 on JAX 0.10.2)";
constexpr std::string_view kRunFlax = "read from source; run: tests/cli/presets_frameworks_test.sh (Flax 0.12.8)";
constexpr std::string_view kRunOrt = "read from documentation; run: tests/cli/presets_frameworks_test.sh (ONNX Runtime 1.32.0)";
constexpr std::string_view kRunHf = "read from source; run: tests/cli/presets_frameworks_test.sh (the transformers 5.24.0 class on PyTorch 2.15.0, where both are installed)";
constexpr std::string_view kRunTf = "read from source; run: tests/cli/presets_frameworks_test.sh (TensorFlow 2.21.0 CPU, where installed)";
// The ONNX specification casts the normalized value to X's type before Scale and B; ONNX
// Runtime's CPU kernels round once (probe in f16: 295 of 295 differing elements), so the
// preset (the specification) is checked against ONNX Runtime in f32 only, and the f16
// difference is asserted as a finding about ONNX Runtime.
constexpr std::string_view kRunOrtSpec =
    "read from documentation; run: tests/cli/presets_frameworks_test.sh (ONNX Runtime 1.32.0 in f32; in f16 ONNX Runtime "
    "rounds once, not as the specification's Cast to X's type: a finding about ONNX Runtime, asserted there)";
constexpr std::string_view kRunTorch = "read from source; run: tests/cli/presets_frameworks_test.sh (PyTorch 2.15.0, where torch is installed)";

// The shared texts of several entries.
constexpr std::string_view kOpmath = "f32 for f16/bf16/f32 inputs (opmath), f64 for f64";
constexpr std::string_view kOnce = "one rounding: normalized value and affine in the compute dtype, cast once to the output";
constexpr std::string_view kNoAffine =
    "the op has no weight: the model multiplies (ggml_mul) and adds (ggml_add) in separate ops, each rounding to the tensor dtype";

std::vector<Preset> build() {
  std::vector<Preset> v = {
      // ---- layer_norm ------------------------------------------------------------------
      {"pytorch.LayerNorm", Op::layer_norm, "eps=1e-5,eps_placement=inside_sqrt,variance=biased,affine=gamma_beta", kOpmath, kOnce,
       "torch/nn/modules/normalization.py LayerNorm (eps=1e-05, elementwise_affine=True, bias=True); "
       "aten/src/ATen/native/cpu/layer_norm_kernel.cpp (PyTorch 2.5)",
       kRunTorch, "", ""},
      {"keras.LayerNormalization", Op::layer_norm, "eps=1e-3,eps_placement=inside_sqrt,variance=biased,affine=gamma_beta",
       "f32 for f16/bf16 inputs (the layer casts them up), else the input dtype", kOnce,
       "keras/src/layers/normalization/layer_normalization.py (Keras 3.6): epsilon=1e-3, center=True, scale=True; "
       "rsqrt(variance + epsilon)",
       kRunKeras, "", ""},
      {"flax.LayerNorm", Op::layer_norm, "eps=1e-6,eps_placement=inside_sqrt,variance=biased,affine=gamma_beta",
       "at least f32 (_compute_stats promotes to float32)",
       "use_fast_variance=True (the default): var = E[x^2] - E[x]^2, equal in exact arithmetic, cancels for rows with a large mean; "
       "then one rounding to the output dtype",
       "flax/linen/normalization.py LayerNorm (Flax 0.8): epsilon=1e-6, use_bias=True, use_scale=True", kRunFlax, "", ""},
      {"onnx.LayerNormalization", Op::layer_norm, "eps=1e-5,eps_placement=inside_sqrt,variance=biased,affine=gamma_beta,normalized_dtype=x_dtype",
       "stash_type=1 (the default): Mean, InvStdDev and Normalized in f32",
       "Normalized = (X - Mean) * Reciprocal(Sqrt(Var + epsilon)) in f32, cast to X's type, THEN * Scale + B in X's type "
       "(three roundings for f16/bf16)",
       "https://onnx.ai/onnx/operators/onnx__LayerNormalization.html (opset 17): epsilon=1e-05, axis=-1, stash_type=1; B optional",
       kRunOrtSpec, "", ""},
      {"apex.FusedLayerNorm", Op::layer_norm, "eps=1e-5,eps_placement=inside_sqrt,variance=biased,affine=gamma_beta",
       "f32 (Welford, cuWelfordOnlineSum) for f16/bf16 inputs", kOnce,
       "apex/normalization/fused_layer_norm.py FusedLayerNorm (eps=1e-5, elementwise_affine=True); csrc/layer_norm_cuda_kernel.cu",
       kSource, "", ""},
      {"mlx.LayerNorm", Op::layer_norm, "eps=1e-5,eps_placement=inside_sqrt,variance=biased,affine=gamma_beta",
       "f32 (mx.fast.layer_norm accumulates in float)", kOnce,
       "mlx/python/mlx/nn/layers/normalization.py LayerNorm (eps=1e-5, affine=True, bias=True) -> mx.fast.layer_norm; "
       "its documentation page writes sqrt(Var[x]) + eps, the kernel computes rsqrt(var + eps)",
       kSource, "", ""},
      {"ggml.NORM", Op::layer_norm, "eps=1e-5,eps_placement=inside_sqrt,variance=biased,affine=none",
       "CPU: the sums in double (ggml_float), the rest in f32; CUDA: f32", kNoAffine,
       "ggml/src/ggml-cpu/ops.cpp ggml_compute_forward_norm_f32 (llama.cpp b4000+); eps has no default: llama.cpp passes "
       "the model's f_norm_eps (1e-5 for most GGUF files)",
       kSource, "", ""},
      // ---- rms_norm ----------------------------------------------------------------------
      {"pytorch.RMSNorm", Op::rms_norm, "eps=finfo_opmath,eps_placement=inside_sqrt,affine=gamma", kOpmath,
       "one rounding: x * rsqrt(mean(x^2) + eps) * weight in opmath, cast once (type_as(input))",
       "torch/nn/modules/normalization.py RMSNorm (eps=None, elementwise_affine=True); aten/src/ATen/native/layer_norm.cpp "
       "rms_norm_composite (PyTorch 2.6): eps=None is numeric_limits<opmath>::epsilon(), 2^-23 for f16/bf16/f32 inputs, "
       "not torch.finfo(x.dtype).eps as the documentation says (2^-10 for f16, 2^-7 for bf16)",
       kRunTorch, "", ""},
      {"keras.RMSNormalization", Op::rms_norm, "eps=1e-6,eps_placement=inside_sqrt,affine=gamma",
       "at least f32 (compute_dtype = result_type(x.dtype, float32))", kOnce,
       "keras/src/layers/normalization/rms_normalization.py and keras/src/ops/nn.py _rms_normalization (Keras 3.15): "
       "axis=-1, epsilon=1e-6; x * rsqrt(mean(square(x)) + epsilon) * scale",
       kRunKeras, "", ""},
      {"flax.RMSNorm", Op::rms_norm, "eps=1e-6,eps_placement=inside_sqrt,affine=gamma", "at least f32 (_compute_stats)", kOnce,
       "flax/linen/normalization.py RMSNorm (Flax 0.8): epsilon=1e-6, use_scale=True", kRunFlax, "", ""},
      {"onnx.RMSNormalization", Op::rms_norm, "eps=1e-5,eps_placement=inside_sqrt,affine=gamma,normalized_dtype=x_dtype",
       "stash_type=1 (the default): f32",
       "the normalized value in f32, cast to X's type, then * scale in X's type (as LayerNormalization)",
       "https://onnx.ai/onnx/operators/onnx__RMSNormalization.html (opset 23): epsilon=1e-05, axis=-1, stash_type=1", kRunOrtSpec, "", ""},
      {"hf.T5LayerNorm", Op::rms_norm, "eps=1e-6,eps_placement=inside_sqrt,affine=gamma,normalized_dtype=x_dtype", "f32 (hidden_states.to(torch.float32))",
       "the normalized value in f32, cast to the weight's dtype when the weight is f16/bf16, then weight * it in that dtype",
       "transformers/models/t5/modeling_t5.py T5LayerNorm (transformers 4.46): eps=1e-6", kRunHf, "",
       "normalized_dtype = x's dtype assumes the weight has x's dtype (T5 rounds to the weight's): with an f32 weight, "
       "normalized_dtype = \"none\""},
      {"hf.LlamaRMSNorm", Op::rms_norm, "eps=1e-6,eps_placement=inside_sqrt,affine=gamma,normalized_dtype=x_dtype", "f32 (hidden_states.to(torch.float32))",
       "the normalized value in f32, cast to the INPUT dtype, then weight * it (a second rounding for f16/bf16)",
       "transformers/models/llama/modeling_llama.py LlamaRMSNorm (transformers 4.46): eps=1e-6 (configs set rms_norm_eps, "
       "1e-5 or 1e-6)",
       kRunHf, "", ""},
      {"hf.GemmaRMSNorm", Op::rms_norm, "eps=1e-6,eps_placement=inside_sqrt,affine=one_plus_w", "f32 (x.float())",
       "(1 + weight) and the product in f32, cast once (type_as(x)): unlike Llama, no rounding before the weight",
       "transformers/models/gemma/modeling_gemma.py GemmaRMSNorm (transformers 4.46): eps=1e-6, weight initialised to 0",
       kRunHf, "", ""},
      {"apex.FusedRMSNorm", Op::rms_norm, "eps=1e-5,eps_placement=inside_sqrt,affine=gamma", "f32 for f16/bf16 inputs", kOnce,
       "apex/normalization/fused_layer_norm.py FusedRMSNorm (eps=1e-5, elementwise_affine=True)", kSource, "", ""},
      {"mlx.RMSNorm", Op::rms_norm, "eps=1e-5,eps_placement=inside_sqrt,affine=gamma", "f32 (the documentation: 32-bit accumulation)",
       kOnce, "https://ml-explore.github.io/mlx/build/html/python/nn/_autosummary/mlx.nn.RMSNorm.html: eps=1e-05", kDocs, "", ""},
      {"ggml.RMS_NORM", Op::rms_norm, "eps=1e-6,eps_placement=inside_sqrt,affine=none",
       "CPU: the sum of squares in double (ggml_float); CUDA: f32", kNoAffine,
       "ggml/src/ggml-cpu/ops.cpp ggml_compute_forward_rms_norm_f32; eps has no default: llama.cpp passes the model's "
       "f_norm_rms_eps (1e-5 or 1e-6)",
       kSource, "", ""},
      // ---- group_norm / instance_norm ------------------------------------------------------
      {"pytorch.GroupNorm", Op::group_norm, "eps=1e-5,eps_placement=inside_sqrt,variance=biased,affine=gamma_beta", kOpmath, kOnce,
       "torch/nn/modules/normalization.py GroupNorm (num_groups required, eps=1e-05, affine=True: per-channel weight, bias)",
       kRunTorch, "", "num_groups has no default: set it in the case"},
      {"keras.GroupNormalization", Op::group_norm, "eps=1e-3,eps_placement=inside_sqrt,variance=biased,affine=gamma_beta",
       "f32 for f16/bf16 inputs", kOnce,
       "keras/src/layers/normalization/group_normalization.py (Keras 3.6): groups=32, epsilon=1e-3, center=True, scale=True",
       kRunKeras, "", "groups=32 by default: set num_groups in the case"},
      {"flax.GroupNorm", Op::group_norm, "eps=1e-6,eps_placement=inside_sqrt,variance=biased,affine=gamma_beta",
       "at least f32 (_compute_stats)", kOnce,
       "flax/linen/normalization.py GroupNorm (Flax 0.8): num_groups=32, epsilon=1e-6, use_bias=True, use_scale=True", kRunFlax, "",
       "num_groups=32 by default: set num_groups in the case"},
      {"onnx.GroupNormalization", Op::group_norm, "eps=1e-5,eps_placement=inside_sqrt,variance=biased,affine=gamma_beta",
       "stash_type=1: f32", "the normalized value cast to X's type before scale and bias (as LayerNormalization)",
       "https://onnx.ai/onnx/operators/onnx__GroupNormalization.html (opset 21: scale and bias per CHANNEL; opset 18 had them "
       "per group)",
       kRunOrt, "", "num_groups is a required attribute: set it in the case"},
      {"pytorch.InstanceNorm2d", Op::instance_norm, "eps=1e-5,eps_placement=inside_sqrt,variance=biased,affine=none", kOpmath, kOnce,
       "torch/nn/modules/instancenorm.py InstanceNorm2d (eps=1e-05, affine=False, track_running_stats=False)", kRunTorch, "", ""},
      {"onnx.InstanceNormalization", Op::instance_norm, "eps=1e-5,eps_placement=inside_sqrt,variance=biased,affine=gamma_beta",
       "not specified", kOnce, "https://onnx.ai/onnx/operators/onnx__InstanceNormalization.html (opset 6): epsilon=1e-05; scale, B required",
       kRunOrt, "", ""},
      // ---- batch_norm --------------------------------------------------------------------
      {"pytorch.BatchNorm2d", Op::batch_norm,
       "eps=1e-5,eps_placement=inside_sqrt,variance=biased,affine=gamma_beta,momentum=0.1,training=true,track_running_stats=true,"
       "running_variance=unbiased",
       kOpmath, kOnce,
       "torch/nn/modules/batchnorm.py BatchNorm2d (eps=1e-05, momentum=0.1, affine=True, track_running_stats=True); "
       "running_var is updated with the unbiased batch variance, the forward normalizes with the biased one",
       kRunTorch, "", "momentum=0.1 means r <- 0.9 r + 0.1 s"},
      {"onnx.BatchNormalization", Op::batch_norm,
       "eps=1e-5,eps_placement=inside_sqrt,variance=biased,affine=gamma_beta,momentum=0.1,training=false,track_running_stats=true",
       "not specified", kOnce,
       "https://onnx.ai/onnx/operators/onnx__BatchNormalization.html (opset 15): epsilon=1e-05, momentum=0.9 "
       "(running = running * momentum + current * (1 - momentum): normcheck's momentum 0.1), training_mode=0 (inference)",
       kDocs, "",
       "the preset is the inference default; training_mode=1 updates running_var with the POPULATION (biased) variance: "
       "convention = { preset = \"onnx.BatchNormalization\", training = true, running_variance = \"biased\" }"},
      {"keras.BatchNormalization", Op::batch_norm,
       "eps=1e-3,eps_placement=inside_sqrt,variance=biased,affine=gamma_beta,momentum=0.01,training=true,track_running_stats=true,"
       "running_variance=biased",
       "f32 for f16/bf16 inputs", kOnce,
       "keras/src/layers/normalization/batch_normalization.py (Keras 3.6): momentum=0.99 (moving = moving * 0.99 + batch * 0.01: "
       "normcheck's momentum 0.01), epsilon=1e-3; moving_variance from the biased batch variance (ops.moments)",
       kRunKeras, "", "Keras's axis=-1 is the channel: x [N, ..., C] in Keras is normcheck's [N, C, ...]"},
      {"flax.BatchNorm", Op::batch_norm,
       "eps=1e-5,eps_placement=inside_sqrt,variance=biased,affine=gamma_beta,momentum=0.01,training=true,track_running_stats=true,"
       "running_variance=biased",
       "at least f32 (_compute_stats)", kOnce,
       "flax/linen/normalization.py BatchNorm (Flax 0.8): momentum=0.99 (ra = 0.99 ra + 0.01 batch), epsilon=1e-5; "
       "ra_var from the biased batch variance",
       kRunFlax, "", "use_running_average=False (training); Flax's feature axis is the last: x [N, ..., C]"},
      // ---- l2_normalize ------------------------------------------------------------------
      {"pytorch.F.normalize", Op::l2_normalize, "eps=1e-12,eps_placement=clamp_norm", kOpmath,
       "x / max(||x||_2, eps) in the input dtype's opmath, one rounding",
       "torch/nn/functional.py normalize (p=2.0, dim=1, eps=1e-12): input / norm.clamp_min(eps)", kRunTorch, "",
       "dim=1 by default: set axes in the case"},
      {"tf.math.l2_normalize", Op::l2_normalize, "eps=1e-12,eps_placement=clamp_var", "the input dtype",
       "x * rsqrt(max(sum(x^2), epsilon)) in the input dtype",
       "tensorflow/python/ops/nn_impl.py l2_normalize (epsilon=1e-12; TensorFlow 2.21): the clamp is on the SQUARED norm, so it differs from "
       "torch's F.normalize below ||x|| = 1e-6",
       kRunTf, "", ""},
      {"onnx.LpNormalization", Op::l2_normalize, "eps=0,eps_placement=clamp_norm", "not specified", "not specified",
       "https://onnx.ai/onnx/operators/onnx__LpNormalization.html (opset 22): p=2, axis=-1; no epsilon at all (a zero row is "
       "0/0)",
       kRunOrt, "", ""},
      {"ggml.L2_NORM", Op::l2_normalize, "eps=1e-6,eps_placement=clamp_norm", "CPU: the sum of squares in double (ggml_float)",
       "x * (1 / max(sqrt(sum), eps)) in f32",
       "ggml/src/ggml-cpu/ops.cpp ggml_compute_forward_l2_norm_f32: scale = 1.0f/fmaxf(sqrtf(sum), eps); eps has no default "
       "(llama.cpp passes the model's norm eps)",
       kSource, "", ""},
      // ---- qk_norm -----------------------------------------------------------------------
      {"hf.Qwen3QKNorm", Op::qk_norm, "eps=1e-6,eps_placement=inside_sqrt,affine=gamma,qk_form=rms",
       "f32 (Qwen3RMSNorm, as LlamaRMSNorm)", "per head over head_dim; the normalized value cast to the input dtype before the weight",
       "transformers/models/qwen3/modeling_qwen3.py Qwen3Attention q_norm, k_norm = Qwen3RMSNorm(head_dim, eps=rms_norm_eps) "
       "(transformers 4.51; rms_norm_eps=1e-6)",
       kSource,
       "Qwen3RMSNorm rounds the normalized value to the input dtype before the weight (as Llama); qk_norm has no "
       "normalized_dtype key yet, and one rounding would be another convention",
       ""},
  };
  // Grouped by op in registry order, by name within an op.
  auto rank = [](Op op) {
    const auto& all = ops::all();
    return std::find(all.begin(), all.end(), op) - all.begin();
  };
  std::stable_sort(v.begin(), v.end(), [&](const Preset& a, const Preset& b) {
    return rank(a.op) != rank(b.op) ? rank(a.op) < rank(b.op) : a.name < b.name;
  });
  return v;
}

/// Edit distance, for "did you mean".
std::size_t distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) == std::tolower(static_cast<unsigned char>(b[j - 1]));
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (same ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

}  // namespace

const std::vector<Preset>& presets() {
  static const std::vector<Preset> v = build();
  return v;
}

const Preset* find_preset(std::string_view name) {
  for (const Preset& p : presets())
    if (p.name == name) return &p;
  return nullptr;
}

std::string unknown_preset_message(std::string_view name) {
  const Preset* best = nullptr;
  std::size_t best_d = 0;
  for (const Preset& p : presets()) {
    const std::size_t d = distance(name, p.name);
    if (!best || d < best_d) best = &p, best_d = d;
  }
  const std::string hint = best && best_d <= std::max<std::size_t>(3, name.size() / 3) ? fmt::format(" (did you mean {}?)", best->name) : "";
  return fmt::format("unknown preset '{}'{}; `normcheck presets` lists them", name, hint);
}

std::string preset_fields(const Preset& p, DType x_dtype) {
  std::string f(p.fields);
  constexpr std::string_view kXDtype = "normalized_dtype=x_dtype";
  if (const auto at = f.find(kXDtype); at != std::string::npos)  // rounded to the input's dtype
    f.replace(at, kXDtype.size(), fmt::format("normalized_dtype={}", dtype_name(x_dtype)));
  constexpr std::string_view kOpmathEps = "eps=finfo_opmath";
  if (const auto at = f.find(kOpmathEps); at != std::string::npos) {
    // The machine epsilon of the opmath dtype: f64 for f64 data, f32 for the rest.
    const int precision = format_info(x_dtype == DType::f64 ? DType::f64 : DType::f32).precision;
    f.replace(at, kOpmathEps.size(), fmt::format("eps={}", std::ldexp(1.0, 1 - precision)));
  }
  return f;
}

void apply_preset(const Preset& p, DType x_dtype, Convention& c) {
  if (!p.unexpressible.empty()) throw UsageError(fmt::format("preset {}: {}", p.name, p.unexpressible));
  const KeyValueSource src(preset_fields(p, x_dtype), fmt::format("preset {}", p.name));
  read_convention(src, p.op, c);
}

}  // namespace normcheck
