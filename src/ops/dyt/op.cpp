// dyt: Dynamic Tanh, y = gamma tanh(alpha x) + beta (reference.hpp: formula, condition
// magnitudes, source). Inputs x [..., normalized_shape], alpha [1], gamma and beta
// [normalized_shape] per affine (none | gamma | gamma_beta). No statistic: eps and its
// placement are not read; the variance estimator must stay biased (there is none).
#include <cmath>

#include <fmt/format.h>

#include "ops/common/precision.hpp"
#include "ops/dyt/dyt.hpp"
#include "ops/dyt/reference.hpp"
#include "ops/common/sample.hpp"
#include "ops/registry.hpp"
#include "spec/layout.hpp"
#include "spec/rules.hpp"

namespace normcheck::ops {

namespace {

void validate(const Problem& p) {
  rules::only_inputs(p, {"x", "alpha", "gamma", "beta"});
  rules::trailing_dims(p);
  rules::biased_only(p, "dyt");
  rules::need(p.conv.affine != Affine::one_plus_w, "convention.affine", "dyt takes affine none | gamma | gamma_beta");
  rules::input_rule(p, "alpha", true, Shape{1}, "dyt's learned scalar alpha", true);
  rules::affine_inputs(p, p.conv.normalized_shape);
}

std::map<std::string, Shape> outputs(const Problem& p) { return {{"y", p.x().shape()}}; }

std::map<std::string, Shape> backward_outputs(const Problem& p) {
  std::map<std::string, Shape> o{{"dx", p.x().shape()}, {"dalpha", p.inputs.at("alpha").shape()}};
  if (const Tensor* t = p.input("gamma")) o["dgamma"] = t->shape();
  if (const Tensor* t = p.input("beta")) o["dbeta"] = t->shape();
  return o;
}

template <class T>
ExactOutputs eval(const Problem& p, bool fast) { return reference::dyt<T>(p, fast); }

// ---- mutants: faults of real tanh-based kernels --------------------------------------------

/// An elementwise forward in A (binary32; binary64 for f64, as the real kernel) with tanh
/// replaced by th(alpha, x), rounded once: only the injected fault differs from cpu.cpp.
template <class A, class F>
Outputs forward_with(const Problem& p, F th) {
  const Tensor& x = p.x();
  const std::int64_t m = numel(p.conv.normalized_shape);
  const A a = static_cast<A>(p.inputs.at("alpha").get(0));
  const Tensor *g = p.input("gamma"), *b = p.input("beta");
  Tensor y(p.out_dtype, x.shape());
  for (std::int64_t i = 0; i < x.size(); ++i) {
    const std::int64_t j = i % m;
    A v = th(a, static_cast<A>(x.get(i)));
    if (g) v *= static_cast<A>(g->get(j));
    if (b) v += static_cast<A>(b->get(j));
    y.set(i, static_cast<double>(v));
  }
  return {{"y", std::move(y)}};
}

bool wide(const Problem& p) { return p.x().dtype() == DType::f64 || p.conv.acc_dtype == DType::f64; }
bool forward_only(const Problem& p) { return p.op.name() == "dyt" && p.conv.direction == Direction::forward; }
bool backward_only(const Problem& p) { return p.op.name() == "dyt" && p.conv.direction == Direction::backward; }

/// tanh z = (exp(2z) - 1) / (exp(2z) + 1): inf / inf = NaN once exp overflows, and
/// exp(2z) - 1 cancels for small |z|.
template <class A>
A tanh_by_exp(A a, A x) {
  const A e = std::exp(A(2) * (a * x));
  return (e - A(1)) / (e + A(1));
}

/// The right backward (cpu.cpp), then dx recomputed in A with sech^2 z = 1 - tanh^2 z.
template <class A>
Outputs sech_from_tanh(const ValidProblem& vp) {
  const Problem& p = *vp;
  Outputs o;
  dyt::cpu(vp, o);
  const Tensor& x = p.x();
  const Tensor& dy = p.inputs.at("dy");
  const std::int64_t m = numel(p.conv.normalized_shape);
  const A a = static_cast<A>(p.inputs.at("alpha").get(0));
  const Tensor* g = p.input("gamma");
  for (std::int64_t i = 0; i < x.size(); ++i) {
    const A t = std::tanh(a * static_cast<A>(x.get(i)));
    const A gj = g ? static_cast<A>(g->get(i % m)) : A(1);
    o["dx"].set(i, static_cast<double>(static_cast<A>(dy.get(i)) * gj * a * (A(1) - t * t)));
  }
  return o;
}

const MutantDef kAlphaIgnored{
    "dyt_alpha_ignored", "dyt: tanh(x) instead of tanh(alpha x) (alpha dropped)", "dyt_alpha_half", forward_only, [](const ValidProblem& p) {
      auto th = [](auto, auto x) { return std::tanh(x); };
      return wide(*p) ? forward_with<double>(*p, th) : forward_with<float>(*p, th);
    }};
const MutantDef kTanhByExp{
    "dyt_tanh_by_exp", "dyt: tanh z = (exp(2z) - 1) / (exp(2z) + 1) (NaN once exp overflows, cancellation near 0)",
    "dyt_large_f32", forward_only, [](const ValidProblem& p) {
      return wide(*p) ? forward_with<double>(*p, tanh_by_exp<double>) : forward_with<float>(*p, tanh_by_exp<float>);
    }};
const MutantDef kSechFromTanh{"dyt_sech_from_tanh", "backward: dyt with sech^2 z = 1 - tanh^2 z (cancels for large |z|)",
                              "dyt_bwd_saturating_f32", backward_only, [](const ValidProblem& p) {
                                return wide(*p) ? sech_from_tanh<double>(p) : sech_from_tanh<float>(p);
                              }};

/// OpDef::sample: x [rows, width], alpha U(0.1, 2), negative a quarter of the time (a tanh
/// taking its sign from x, tanh(|alpha| x), passed every positive draw: a sixth audit),
/// affine none | gamma | gamma_beta.
void sample(Sampler& s, Problem& p) {
  sampling::rows_x(s, p);
  p.inputs["alpha"] = s.uniform(Shape{1}, s.dims().param, 0.1, 2.0);
  if (s.vary() && s.coin(0.25)) {
    Tensor& a = p.inputs.at("alpha");
    a.set(0, -a.get(0));
  }
  sampling::affine(s, p, {Affine::none, Affine::gamma, Affine::gamma_beta, Affine::gamma_beta}, p.conv.normalized_shape);
}

}  // namespace

extern const OpDef dyt_def{
    .name = "dyt",
    .formula = "y = gamma tanh(alpha x) + beta, elementwise (Dynamic Tanh, Zhu et al. 2025)",
    .elementwise = true,
    .validate = validate,
    .outputs = outputs,
    .groups = [](const Problem& p) { return row_groups(p, numel(p.conv.normalized_shape)); },
    .group_size = [](const Problem&) { return std::int64_t{1}; },  // no statistic: m = 1
    .backward_outputs = backward_outputs,
    .param_reduction = [](const Problem& p) { return p.x().size(); },  // dalpha sums every element
    .reference = [](const ValidProblem& vp) {
      const Problem& p = *vp;
      return reference::detail::at_working_precision(p, [&](auto t) { return eval<typename decltype(t)::type>(p, reference::fast_path_enabled()); });
    },
    .reference_double = [](const ValidProblem& vp) { return eval<double>(*vp, false); },
    .cpu = dyt::cpu,
    .mutants = {kAlphaIgnored, kTanhByExp, kSechFromTanh},
    .sample = sample,
};

}  // namespace normcheck::ops
