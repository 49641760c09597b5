// ada_layer_norm: y = (1 + scale_b) LN0(x) + shift_b per token row of d (LN0: layer_norm
// without affine); gated: also h = x + gate_b * y. Reference: reference.hpp; CPU: cpu.cpp.
#include <fmt/format.h>

#include "ops/ada_layer_norm/ada_norm.hpp"
#include "ops/ada_layer_norm/reference.hpp"
#include "ops/ada_layer_norm/reference_backward.hpp"
#include "ops/common/cpu_kernels.hpp"
#include "ops/common/mutants.hpp"
#include "ops/common/precision.hpp"
#include "ops/common/sample.hpp"
#include "ops/registry.hpp"
#include "spec/layout.hpp"
#include "spec/rules.hpp"

namespace normcheck::ops {

namespace ada {

void validate(const Problem& p) {
  rules::only_inputs(p, {"x", "scale", "shift", "gate"});
  rules::no_affine(p, "scale and shift are the affine");
  const Shape& xs = p.x().shape();
  rules::need(xs.size() >= 2, "inputs.x.shape", fmt::format("{} needs x of shape [B, *, d], got {}", to_string(p.op), shape_str(xs)));
  const Shape& ns = p.conv.normalized_shape;
  rules::need(ns.size() == 1 && ns[0] == xs.back(), "convention.normalized_shape",
              fmt::format("{} normalizes the last dim only: normalized_shape must be [{}]", to_string(p.op), xs.back()));
  const Shape bd{xs.front(), xs.back()};
  rules::input_rule(p, "scale", true, bd, "the modulation (1 + scale)");
  rules::input_rule(p, "shift", true, bd, "the modulation shift");
  rules::input_rule(p, "gate", p.conv.gated, bd, fmt::format("gated = {}", p.conv.gated));
  rules::unbiased_needs_two(p, xs.back());
}

void validate_backward(const Problem& p) {
  if (p.conv.gated) throw SpecError("convention.gated", "backward covers the ungated output y only: gated = false");
}

std::map<std::string, Shape> outputs(const Problem& p) {
  std::map<std::string, Shape> o{{"y", p.x().shape()}};
  if (p.conv.gated) o["h"] = p.x().shape();
  return o;
}

std::map<std::string, Shape> backward_outputs(const Problem& p) {
  return {{"dx", p.x().shape()}, {"ds", p.inputs.at("scale").shape()}, {"db", p.inputs.at("shift").shape()}};
}

ReductionLayout groups(const Problem& p) { return row_groups(p, p.x().shape().back()); }
std::int64_t group_size(const Problem& p) { return p.x().shape().back(); }

/// ds, db elements sum over the tokens of one batch element.
std::int64_t param_reduction(const Problem& p) {
  const Shape& xs = p.x().shape();
  return p.x().size() / xs.back() / xs.front();
}

namespace {
template <class T>
ExactOutputs eval(const Problem& p, bool fast) {
  return p.conv.direction == Direction::backward ? reference::ada_norm_backward<T>(p) : reference::ada_norm<T>(p, fast);
}
}  // namespace

ExactOutputs reference_exact(const ValidProblem& vp) {
  const Problem& p = *vp;
  return reference::detail::at_working_precision(p, [&](auto t) { return eval<typename decltype(t)::type>(p, reference::fast_path_enabled()); });
}
ExactOutputs reference_double(const ValidProblem& vp) { return eval<double>(*vp, false); }

void cpu(const ValidProblem& p, Outputs& o) {
  if (p->conv.direction == Direction::backward) kernels::cpu::ada_norm_backward(*p, o);
  else kernels::cpu::ada_norm_forward(*p, o);
}

const ConventionKey gated_key{"gated", "the gate input [B, d] is given and the op also outputs h = x + gate * y",
                              [](const FieldSource& s, Convention& c) { c.gated = s.boolean("gated"); },
                              [](const Convention& c) -> ConventionValue { return c.gated; }};

void sample(Sampler& s, Problem& p) {
  const Dims& d = s.dims();
  // batch: 1 or 2; 3 in the large structure (a batch index read mod 2 passed every draw of
  // one or two; a sixth audit)
  const std::int64_t b = d.wide && d.rows >= 3 ? 3 : s.vary() && d.rows >= 2 ? s.pick<std::int64_t>({1, 2}) : 1;
  const Shape bd{b, d.width};
  p.inputs["x"] = s.x(Shape{b, (d.rows + b - 1) / b, d.width}, d.width);
  p.conv.normalized_shape = Shape{d.width};
  p.inputs["scale"] = s.uniform(bd, d.param, -0.5, 0.5);
  p.inputs["shift"] = s.shift(bd);
  if (s.vary() && !d.backward && s.coin(0.3)) {
    p.conv.gated = true;
    p.inputs["gate"] = s.shift(bd);
  }
  sampling::statistic(s, p, d.width);
}

std::vector<MutantDef> mutants() { return {kernels::mutant::def<kernels::mutant::Fault::ada_broadcast_over_batch>("adaln_tokens_and_batch")}; }

}  // namespace ada

extern const OpDef ada_layer_norm_def{
    .name = "ada_layer_norm",
    .formula = "y = (1 + scale_b) (x - mean) / sqrt(var + eps) + shift_b per row of d; gated: h = x + gate_b y",
    .centers = true,
    .params = {&ada::gated_key},
    .validate = ada::validate,
    .outputs = ada::outputs,
    .groups = ada::groups,
    .group_size = ada::group_size,
    .backward_outputs = ada::backward_outputs,
    .validate_backward = ada::validate_backward,
    .param_reduction = ada::param_reduction,
    .reference = ada::reference_exact,
    .reference_double = ada::reference_double,
    .cpu = ada::cpu,
    .mutants = ada::mutants(),
    .sample = ada::sample,
};

}  // namespace normcheck::ops
