// fused_add_rms_norm, fused_add_layer_norm: h = x + residual (+ bias), y = norm(h) with the
// norm reading h as stored (norm_input = rounded) or the unrounded sum (fused_add_norm.hpp).
// Reference: reference.hpp; CPU kernel: cpu.cpp; forward only (inference kernels).
//
// Budget (checks/budget.cpp): the norm's 1 + 8 + sqrt(m), plus 2 roundings for the two
// additions of h, each relative <= u of a_j = |x_j| + |r_j| + |b_j|, which the condition
// magnitudes carry: 1 + 10 + sqrt(m). h itself: one correct rounding of a wide sum that is
// within 2 u a_j: stab <= 2.
#include <fmt/format.h>

#include "ops/common/precision.hpp"
#include "ops/common/sample.hpp"
#include "ops/fused_add_norm/fused_add_norm.hpp"
#include "ops/fused_add_norm/reference.hpp"
#include "ops/registry.hpp"
#include "spec/layout.hpp"
#include "spec/rules.hpp"

namespace normcheck::ops {

namespace fused {

const ConventionKey kNormInput{
    "norm_input", "rounded (the norm reads h = x + residual (+ bias) as stored in h's dtype) | unrounded (the wide sum)",
    [](const FieldSource& s, Convention& c) {
      const std::string v = s.text("norm_input");
      if (v == "rounded") c.norm_input = NormInput::rounded;
      else if (v == "unrounded") c.norm_input = NormInput::unrounded;
      else s.fail("norm_input", fmt::format("unknown '{}' (rounded | unrounded)", v));
    },
    [](const Convention& c) -> ConventionValue { return std::string(c.norm_input == NormInput::rounded ? "rounded" : "unrounded"); }};

bool has_residual(const Problem& p) noexcept { return p.input("residual") != nullptr; }

DType h_dtype(const Problem& p) { return p.inputs.at("residual").dtype(); }

void validate_residual(const Problem& p, bool required) {
  const Tensor* r = p.input("residual");
  rules::need(r || !required, "inputs.residual", fmt::format("{} needs input residual (x's shape)", p.op.name()));
  if (r) {
    rules::need(r->shape() == p.x().shape(), "inputs.residual.shape",
                fmt::format("residual has shape {}, expected x's {}", shape_str(r->shape()), shape_str(p.x().shape())));
    rules::need(!is_quantized(r->dtype()), "inputs.residual.dtype",
                fmt::format("the residual stream is a float tensor, not {}", dtype_name(r->dtype())));
  }
  if (const Tensor* b = p.input("bias")) {
    rules::need(r != nullptr, "inputs.bias", "bias is added to x + residual: it needs input residual");
    rules::need(b->shape() == p.conv.normalized_shape, "inputs.bias.shape",
                fmt::format("bias has shape {}, expected normalized_shape {}", shape_str(b->shape()), shape_str(p.conv.normalized_shape)));
  }
}

void sample_residual(Sampler& s, Problem& p) {
  const Dims& d = s.dims();
  const Tensor& x = p.x();
  const DType rdt = d.x != DType::f64 && d.x != DType::f32 && s.vary() && s.coin(0.3) ? DType::f32 : d.x;
  p.inputs["residual"] = s.data(x.shape(), rdt, d.width);
  if ((s.vary() && s.coin(0.3)) || d.wide) p.inputs["bias"] = s.shift(p.conv.normalized_shape);
  if (s.vary() && s.coin(0.3)) p.conv.norm_input = NormInput::unrounded;
}

ExactOutputs reference(const ValidProblem& vp) {
  const Problem& p = *vp;
  return normcheck::reference::detail::at_working_precision(
      p, [&](auto t) { return normcheck::reference::fused_add_rows<typename decltype(t)::type>(p, normcheck::reference::fast_path_enabled()); });
}

ExactOutputs reference_double(const ValidProblem& vp) { return normcheck::reference::fused_add_rows<double>(*vp); }

}  // namespace fused

namespace {

void validate(const Problem& p) {
  rules::only_inputs(p, {"x", "residual", "bias", "gamma", "beta"});
  rules::trailing_dims(p);
  fused::validate_residual(p, true);
  rules::affine_inputs(p, p.conv.normalized_shape);
  rules::unbiased_needs_two(p, numel(p.conv.normalized_shape));
}

std::map<std::string, Shape> outputs(const Problem& p) { return {{"y", p.x().shape()}, {"h", p.x().shape()}}; }

void sample(Sampler& s, Problem& p) {
  sampling::rows_x(s, p);
  fused::sample_residual(s, p);
  sampling::statistic(s, p, s.dims().width);
  sampling::affine(s, p, {Affine::none, Affine::gamma, Affine::gamma_beta, Affine::gamma_beta, Affine::one_plus_w},
                   p.conv.normalized_shape);
}
std::map<std::string, DType> output_dtypes(const Problem& p) { return {{"h", fused::h_dtype(p)}}; }
std::int64_t group_size(const Problem& p) { return numel(p.conv.normalized_shape); }
ReductionLayout groups(const Problem& p) { return row_groups(p, numel(p.conv.normalized_shape)); }

bool reads_rounded(const Problem& p) {
  return fused::has_residual(p) && p.conv.direction == Direction::forward && p.conv.norm_input == NormInput::rounded &&
         (p.op.name() == "fused_add_rms_norm" || p.op.name() == "fused_add_layer_norm");
}
bool reads_unrounded(const Problem& p) {
  return fused::has_residual(p) && p.conv.direction == Direction::forward && p.conv.norm_input == NormInput::unrounded &&
         (p.op.name() == "fused_add_rms_norm" || p.op.name() == "fused_add_layer_norm");
}

// The engines' fusion fault: which value the norm reads. Each mutant is the CPU kernel with
// the other reading; it differs from a correct kernel only where rounding h to its dtype
// moves it by more than the budget (h narrower than the accumulation: bf16, f16).
const MutantDef kReadsUnrounded{"fused_norm_reads_unrounded",
                                "fused add + norm: the norm reads the unrounded sum x + residual where the convention says h as stored",
                                "fused_rms_bf16_rounding_matters", reads_rounded,
                                [](const ValidProblem& p) { return fused::cpu_flipped(*p); }};
const MutantDef kReadsRounded{"fused_norm_reads_rounded",
                              "fused add + norm: the norm reads h rounded to its dtype where the convention says the unrounded sum",
                              "fused_rms_bf16_unrounded", reads_unrounded,
                              [](const ValidProblem& p) { return fused::cpu_flipped(*p); }};

constexpr std::string_view kNoBackward = "fused residual add + norm is an inference kernel here: forward only";

}  // namespace

extern const OpDef fused_add_rms_norm_def{
    .name = "fused_add_rms_norm",
    .formula = "h = x + residual (+ bias); y = gamma z / sqrt(mean(z^2) + eps), z = h as stored (or unrounded)",
    .centers = false,
    .params = {&fused::kNormInput},
    .validate = validate,
    .outputs = outputs,
    .output_dtypes = output_dtypes,
    .groups = groups,
    .group_size = group_size,
    .extra_roundings = 2,
    .no_backward = kNoBackward,
    .reference = fused::reference,
    .reference_double = fused::reference_double,
    .cpu = fused::cpu,
    .mutants = {kReadsUnrounded, kReadsRounded},
    .sample = sample,
};

extern const OpDef fused_add_layer_norm_def{
    .name = "fused_add_layer_norm",
    .formula = "h = x + residual (+ bias); y = gamma (z - mean) / sqrt(var + eps) + beta, z = h as stored (or unrounded)",
    .centers = true,
    .params = {&fused::kNormInput},
    .validate = validate,
    .outputs = outputs,
    .output_dtypes = output_dtypes,
    .groups = groups,
    .group_size = group_size,
    .extra_roundings = 2,
    .no_backward = kNoBackward,
    .reference = fused::reference,
    .reference_double = fused::reference_double,
    .cpu = fused::cpu,
    .mutants = {},  // the two readings' mutants are registered once, with fused_add_rms_norm; they run both ops
    .sample = sample,
};

}  // namespace normcheck::ops
