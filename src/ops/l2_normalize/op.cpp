// l2_normalize: y = x / max(||x||_2, eps) over `axes` (default the last dim); the zero vector
// maps to zero (torch.nn.functional.normalize). Reference: reference.hpp; CPU: cpu.cpp.
#include <set>

#include <fmt/format.h>

#include "ops/common/cpu_kernels.hpp"
#include "ops/common/mutants.hpp"
#include "ops/common/precision.hpp"
#include "ops/common/sample.hpp"
#include "ops/l2_normalize/l2_normalize.hpp"
#include "ops/l2_normalize/reference.hpp"
#include "ops/l2_normalize/reference_backward.hpp"
#include "ops/registry.hpp"
#include "spec/layout.hpp"
#include "spec/rules.hpp"

namespace normcheck::ops {

namespace l2 {

void validate(const Problem& p) {
  const bool scale = p.op == Op::scale_norm;
  if (scale) rules::only_inputs(p, {"x", "g"});
  else rules::only_inputs(p, {"x"});
  rules::biased_only(p, to_string(p.op));
  rules::no_affine(p, scale ? "its gain is the scalar input g" : "it has no parameters");
  const Shape& xs = p.x().shape();
  const auto r = static_cast<std::int64_t>(xs.size());
  if (!p.conv.axes.empty()) {
    std::set<std::int64_t> seen;
    for (auto a : p.conv.axes) {
      rules::need(a >= -r && a < r, "convention.axes", fmt::format("axis {} out of range for x {}", a, shape_str(xs)));
      rules::need(seen.insert(a < 0 ? a + r : a).second, "convention.axes", fmt::format("axis {} given twice", a));
    }
  } else {
    const Shape& ns = p.conv.normalized_shape;
    rules::need(!ns.empty() && ns.size() <= xs.size() &&
                    std::equal(ns.begin(), ns.end(), xs.end() - static_cast<std::ptrdiff_t>(ns.size())),
                "convention.normalized_shape",
                fmt::format("normalized_shape {} is not the trailing dims of x {}", shape_str(ns), shape_str(xs)));
  }
  if (scale) rules::input_rule(p, "g", true, Shape{1}, "scale_norm's learned scalar", true);
}

std::map<std::string, Shape> outputs(const Problem& p) { return {{"y", p.x().shape()}}; }

std::map<std::string, Shape> backward_outputs(const Problem& p) {
  std::map<std::string, Shape> o{{"dx", p.x().shape()}};
  if (const Tensor* g = p.input("g")) o["dg"] = g->shape();
  return o;
}

ReductionLayout groups(const Problem& p) { return reduction_layout(p.x().shape(), reduced_axes(p)); }

std::int64_t group_size(const Problem& p) {
  std::int64_t m = 1;
  for (auto a : reduced_axes(p)) m *= p.x().shape()[static_cast<std::size_t>(a)];
  return m;
}

std::int64_t param_reduction(const Problem& p) { return p.op == Op::scale_norm ? p.x().size() : 0; }

namespace {
template <class T>
ExactOutputs eval(const Problem& p, bool fast) {
  return p.conv.direction == Direction::backward ? reference::l2_normalize_backward<T>(p) : reference::l2_normalize<T>(p, fast);
}
}  // namespace

ExactOutputs reference_exact(const ValidProblem& vp) {
  const Problem& p = *vp;
  return reference::detail::at_working_precision(p, [&](auto t) { return eval<typename decltype(t)::type>(p, reference::fast_path_enabled()); });
}
ExactOutputs reference_double(const ValidProblem& vp) { return eval<double>(*vp, false); }

void cpu(const ValidProblem& p, Outputs& o) {
  if (p->conv.direction == Direction::backward) kernels::cpu::l2_normalize_backward(*p, o);
  else kernels::cpu::l2_normalize_forward(*p, o);
}

const ConventionKey axes_key{"axes", "axes of x reduced over (negative from the end, any subset; [] or absent: the trailing normalized_shape)",
                             [](const FieldSource& s, Convention& c) { c.axes = s.integers("axes"); },
                             [](const Convention& c) -> ConventionValue { return c.axes; }};

void sample(Sampler& s, Problem& p) {
  sampling::rows_x(s, p);
  // Sometimes over the leading axis instead: groups strided by the row length.
  if (s.vary() && p.x().shape().size() == 2 && s.coin(0.2)) p.conv.axes = {0};
  if (p.op == Op::scale_norm) p.inputs["g"] = s.uniform(Shape{1}, s.dims().param, 0.5, 2.0);
}

std::vector<MutantDef> mutants() { return {kernels::mutant::def<kernels::mutant::Fault::l2_eps_added>("l2_clamped_below_eps")}; }

}  // namespace l2

extern const OpDef l2_normalize_def{
    .name = "l2_normalize",
    .formula = "y = x / max(||x||_2, eps) over axes",
    .params = {&l2::axes_key},
    .defaults = [](Convention& c) {
      c.eps_placement = EpsPlacement::clamp_norm;  // torch.nn.functional.normalize
      c.eps = 1e-12;
    },
    .validate = l2::validate,
    .outputs = l2::outputs,
    .groups = l2::groups,
    .group_size = l2::group_size,
    .backward_outputs = l2::backward_outputs,
    .param_reduction = l2::param_reduction,
    .reference = l2::reference_exact,
    .reference_double = l2::reference_double,
    .cpu = l2::cpu,
    .mutants = l2::mutants(),
    .sample = l2::sample,
};

}  // namespace normcheck::ops
