// rms_norm_quant, layer_norm_quant: the norm (optionally after a fused residual add) and its
// quantization into fp8_e4m3fn, fp8_e5m2 or int8 with a static per-tensor or a dynamic
// per-token scale (quant_norm.hpp). Reference: reference.hpp; CPU kernel: cpu.cpp.
//
// Budget (checks/budget.cpp): y_q is judged in quantization steps (checks/metrics.hpp
// stab_of): within half a step of the exact v, plus (G - 1) u c_v for the kernel's
// error, G = 1 + 12 + sqrt(m): the norm's 8 and sqrt(m), 2 roundings of the residual add
// (when given), 2 of the quantization (the scale's division by qmax, and v = y / s). The
// scale and h are judged by the same gate with their own c (reference.hpp).
#include <cmath>

#include <fmt/format.h>

#include "ops/common/precision.hpp"
#include "ops/common/sample.hpp"
#include "ops/fused_add_norm/fused_add_norm.hpp"
#include "ops/quant_norm/quant_norm.hpp"
#include "ops/quant_norm/reference.hpp"
#include "ops/registry.hpp"
#include "spec/layout.hpp"
#include "spec/rules.hpp"

namespace normcheck::ops {

namespace {

const ConventionKey kQuantScale{
    "quant_scale", "dynamic_per_token (output scale [rows] from max|y|) | static_per_tensor (input scale [1])",
    [](const FieldSource& s, Convention& c) {
      const std::string v = s.text("quant_scale");
      if (v == "dynamic_per_token") c.quant_scale = QuantScale::dynamic_per_token;
      else if (v == "static_per_tensor") c.quant_scale = QuantScale::static_per_tensor;
      else s.fail("quant_scale", fmt::format("unknown '{}' (dynamic_per_token | static_per_tensor)", v));
    },
    [](const Convention& c) -> ConventionValue {
      return std::string(c.quant_scale == QuantScale::dynamic_per_token ? "dynamic_per_token" : "static_per_tensor");
    }};
const ConventionKey kScaleForm{
    "scale_form", "divisor (y_q = Q(y / scale)) | multiplier (y_q = Q(y * scale))",
    [](const FieldSource& s, Convention& c) {
      const std::string v = s.text("scale_form");
      if (v == "divisor") c.scale_form = ScaleForm::divisor;
      else if (v == "multiplier") c.scale_form = ScaleForm::multiplier;
      else s.fail("scale_form", fmt::format("unknown '{}' (divisor | multiplier)", v));
    },
    [](const Convention& c) -> ConventionValue { return std::string(c.scale_form == ScaleForm::divisor ? "divisor" : "multiplier"); }};
const ConventionKey kSaturate{"saturate", "true: out-of-range values clamp to +-max | false: they become the format's inf / NaN",
                              [](const FieldSource& s, Convention& c) { c.saturate = s.boolean("saturate"); },
                              [](const Convention& c) -> ConventionValue { return c.saturate; }};
const ConventionKey kRounding{
    "rounding", "nearest_even | nearest_away (ties away from zero, C's round())",
    [](const FieldSource& s, Convention& c) {
      const std::string v = s.text("rounding");
      if (v == "nearest_even") c.rounding = Rounding::nearest_even;
      else if (v == "nearest_away") c.rounding = Rounding::nearest_away;
      else s.fail("rounding", fmt::format("unknown '{}' (nearest_even | nearest_away)", v));
    },
    [](const Convention& c) -> ConventionValue {
      return std::string(c.rounding == Rounding::nearest_away ? "nearest_away" : "nearest_even");
    }};
const ConventionKey kScaleFloor{"scale_floor", "dynamic scale = max(max|y| / qmax, scale_floor); finite, >= 0 (0: none)",
                                [](const FieldSource& s, Convention& c) {
                                  c.scale_floor = s.number("scale_floor");
                                  if (!(c.scale_floor >= 0) || !std::isfinite(c.scale_floor))
                                    s.fail("scale_floor", fmt::format("scale_floor must be finite and >= 0, got {}", c.scale_floor));
                                },
                                [](const Convention& c) -> ConventionValue { return c.scale_floor; }};

bool dynamic(const Problem& p) { return p.conv.quant_scale == QuantScale::dynamic_per_token; }

void validate(const Problem& p) {
  const Convention& c = p.conv;
  rules::only_inputs(p, {"x", "residual", "bias", "gamma", "beta", "scale"});
  rules::trailing_dims(p);
  fused::validate_residual(p, false);
  rules::affine_inputs(p, c.normalized_shape);
  rules::unbiased_needs_two(p, numel(c.normalized_shape));
  rules::need(is_quantized(p.out_dtype), "out_dtype",
              fmt::format("{} quantizes: out_dtype must be fp8_e4m3fn, fp8_e5m2 or int8, not {}", p.op.name(), dtype_name(p.out_dtype)));
  rules::need(c.saturate || p.out_dtype != DType::int8, "convention.saturate", "int8 has no inf or NaN: it always saturates");
  rules::input_rule(p, "scale", !dynamic(p), Shape{1}, "quant_scale = static_per_tensor takes input scale [1]");
  if (!dynamic(p)) {
    const double s = p.inputs.at("scale").get(0);
    rules::need(s > 0 && std::isfinite(s), "inputs.scale", fmt::format("scale must be finite and > 0, got {}", s));
  }
  rules::need(dynamic(p) || c.scale_floor == 0, "convention.scale_floor", "scale_floor applies to the dynamic scale only");
}

std::map<std::string, Shape> outputs(const Problem& p) {
  std::map<std::string, Shape> o{{"y", p.x().shape()}};
  if (dynamic(p)) o["scale"] = Shape{row_layout(p).rows};
  if (fused::has_residual(p)) o["h"] = p.x().shape();
  return o;
}

std::map<std::string, DType> output_dtypes(const Problem& p) {
  std::map<std::string, DType> d;
  if (dynamic(p)) d["scale"] = DType::f32;
  if (fused::has_residual(p)) d["h"] = fused::h_dtype(p);
  return d;
}

std::int64_t group_size(const Problem& p) { return numel(p.conv.normalized_shape); }
ReductionLayout groups(const Problem& p) { return row_groups(p, numel(p.conv.normalized_shape)); }

template <class T>
ExactOutputs eval(const Problem& p, bool fast = false) { return normcheck::reference::quant_rows<T>(p, fast); }

ExactOutputs reference(const ValidProblem& vp) {
  const Problem& p = *vp;
  return normcheck::reference::detail::at_working_precision(
      p, [&](auto t) { return eval<typename decltype(t)::type>(p, normcheck::reference::fast_path_enabled()); });
}

bool quant_op(const Problem& p) {
  return p.conv.direction == Direction::forward && (p.op.name() == "rms_norm_quant" || p.op.name() == "layer_norm_quant");
}

// The quantization faults of real kernels: each is the CPU kernel with one fault injected.
const MutantDef kNoSaturation{"quant_no_saturation",
                              "norm + quant: out-of-range values become inf / NaN (a plain cast) where the convention saturates",
                              "quant_static_e4m3_straddles_448", [](const Problem& p) { return quant_op(p) && p.conv.saturate; },
                              [](const ValidProblem& p) { return quant::cpu_with(*p, {.no_saturation = true}); }};
const MutantDef kTowardZero{"quant_round_toward_zero", "norm + quant: truncation (round toward zero) instead of round to nearest",
                            "quant_static_e4m3_123", quant_op,
                            [](const ValidProblem& p) { return quant::cpu_with(*p, {.toward_zero = true}); }};
const MutantDef kPreGamma{"quant_scale_pre_gamma",
                          "norm + quant: the dynamic scale from max|n| before gamma instead of max|gamma n|",
                          "quant_dynamic_e4m3_gamma", [](const Problem& p) { return quant_op(p) && dynamic(p); },
                          [](const ValidProblem& p) { return quant::cpu_with(*p, {.scale_pre_gamma = true}); }};
const MutantDef kPerTensor{"quant_per_tensor_scale",
                           "norm + quant: one dynamic scale for the whole tensor where one per token was asked",
                           "quant_dynamic_int8_rows_differ", [](const Problem& p) { return quant_op(p) && dynamic(p); },
                           [](const ValidProblem& p) { return quant::cpu_with(*p, {.per_tensor = true}); }};

/// OpDef::sample: x [rows, width], sometimes a fused residual; out_dtype e4m3fn | e5m2 |
/// int8 (unless the draw names one); the dynamic per-token scale (sometimes with a floor) or
/// a static one of about 4 / qmax (so that some values saturate); divisor or multiplier form;
/// saturation (int8 always), nearest-even or nearest-away rounding.
void sample(Sampler& s, Problem& p) {
  const Dims& d = s.dims();
  sampling::rows_x(s, p);
  if ((s.vary() && s.coin(0.3)) || d.wide) fused::sample_residual(s, p);
  if (!is_quantized(p.out_dtype)) p.out_dtype = s.pick({DType::fp8_e4m3fn, DType::fp8_e5m2, DType::int8});
  Convention& c = p.conv;
  if (s.vary()) {
    if (s.coin(0.3)) c.quant_scale = QuantScale::static_per_tensor;
    if (s.coin(0.2)) c.scale_form = ScaleForm::multiplier;
    if (p.out_dtype != DType::int8 && s.coin(0.2)) c.saturate = false;
    if (s.coin(0.2)) c.rounding = Rounding::nearest_away;
    if (c.quant_scale == QuantScale::dynamic_per_token && s.coin(0.3)) c.scale_floor = 1e-6;
  }
  if (c.quant_scale == QuantScale::static_per_tensor) {
    const double qmax = p.out_dtype == DType::int8 ? 127.0 : format_info(p.out_dtype).max_finite;
    p.inputs["scale"] = s.uniform(Shape{1}, DType::f32, 2.0 / qmax, 8.0 / qmax);
  }
  sampling::statistic(s, p, d.width);
  sampling::affine(s, p, {Affine::none, Affine::gamma, Affine::gamma_beta, Affine::gamma_beta}, c.normalized_shape);
}

const std::vector<const ConventionKey*> kParams{&fused::kNormInput, &kQuantScale, &kScaleForm, &kSaturate, &kRounding, &kScaleFloor};
constexpr std::string_view kNoBackward = "a quantizing norm is an inference kernel: forward only (rounding has no gradient)";

}  // namespace

extern const OpDef rms_norm_quant_def{
    .name = "rms_norm_quant",
    .formula = "y_q = Q(gamma z / sqrt(mean(z^2) + eps) / scale), z = x or h = x + residual (+ bias); Q into fp8/int8",
    .centers = false,
    .params = kParams,
    .validate = validate,
    .outputs = outputs,
    .output_dtypes = output_dtypes,
    .quantized_out = true,
    .groups = groups,
    .group_size = group_size,
    .extra_roundings = 4,
    .no_backward = kNoBackward,
    .reference = reference,
    .reference_double = [](const ValidProblem& p) { return eval<double>(*p); },
    .cpu = quant::cpu,
    .mutants = {kNoSaturation, kTowardZero, kPreGamma, kPerTensor},
    .sample = sample,
};

extern const OpDef layer_norm_quant_def{
    .name = "layer_norm_quant",
    .formula = "y_q = Q((gamma (z - mean) / sqrt(var + eps) + beta) / scale), z = x or h = x + residual (+ bias); Q into fp8/int8",
    .centers = true,
    .params = kParams,
    .validate = validate,
    .outputs = outputs,
    .output_dtypes = output_dtypes,
    .quantized_out = true,
    .groups = groups,
    .group_size = group_size,
    .extra_roundings = 4,
    .no_backward = kNoBackward,
    .reference = reference,
    .reference_double = [](const ValidProblem& p) { return eval<double>(*p); },
    .cpu = quant::cpu,
    .mutants = {},  // the quantization mutants are registered once, with rms_norm_quant; they run both ops
    .sample = sample,
};

}  // namespace normcheck::ops
