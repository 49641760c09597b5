// qk_norm: q^ = N(q), k^ = N(k) per head (rms form: RMSNorm with gains q_gamma, k_gamma;
// l2 form: q / max(||q||, eps)), scores y = q^ . k^ / sqrt(d_k) (rms) or g q^ . k^ (l2).
// Reference: reference.hpp; CPU: cpu.cpp. No backward (the scores couple q and k).
#include <fmt/format.h>

#include "ops/common/cpu_kernels.hpp"
#include "ops/common/mutants.hpp"
#include "ops/common/precision.hpp"
#include "ops/qk_norm/reference.hpp"
#include "ops/common/sample.hpp"
#include "ops/registry.hpp"
#include "spec/convention.hpp"
#include "spec/layout.hpp"
#include "spec/rules.hpp"

namespace normcheck::ops {

namespace {

void validate(const Problem& p) {
  rules::only_inputs(p, {"q", "k", "q_gamma", "k_gamma", "g"});
  const Tensor* k = p.input("k");
  rules::need(k != nullptr, "inputs.k", "qk_norm needs input k [B, H, S, d_k]");
  const Shape& qs = p.x().shape();
  const Shape& ks = k->shape();
  rules::need(qs.size() == 4, "inputs.q.shape", fmt::format("q must be [B, H, T, d_k], got {}", shape_str(qs)));
  rules::need(ks.size() == 4 && ks[0] == qs[0] && ks[1] == qs[1] && ks[3] == qs[3], "inputs.k.shape",
              fmt::format("k must be [B, H, S, d_k] with q's B, H, d_k {}, got {}", shape_str(qs), shape_str(ks)));
  const Shape dk{qs[3]};
  if (p.conv.qk_form == QkForm::rms) {
    rules::need(p.conv.affine != Affine::gamma_beta, "convention.affine", "qk_norm (rms form) has gains only: none | gamma | one_plus_w");
    const std::string why = fmt::format("qk_form = rms, affine = {}", to_string(p.conv.affine));
    rules::input_rule(p, "q_gamma", p.conv.affine != Affine::none, dk, why);
    rules::input_rule(p, "k_gamma", p.conv.affine != Affine::none, dk, why);
    rules::input_rule(p, "g", false, Shape{1}, "only the l2 form has the scalar g", true);
    rules::unbiased_needs_two(p, qs[3]);
  } else {
    rules::no_affine(p, "the l2 form's only parameter is the scalar g");
    rules::biased_only(p, "qk_norm (l2 form)");
    rules::input_rule(p, "g", true, Shape{1}, "the l2 form's learned scale", true);
    rules::input_rule(p, "q_gamma", false, dk, "qk_form = l2");
    rules::input_rule(p, "k_gamma", false, dk, "qk_form = l2");
  }
}

std::map<std::string, Shape> outputs(const Problem& p) {
  const Shape& qs = p.x().shape();
  const Shape& ks = p.inputs.at("k").shape();
  return {{"q_hat", qs}, {"k_hat", ks}, {"y", Shape{qs[0], qs[1], qs[2], ks[2]}}};
}

const ConventionKey kQkForm{"qk_form", "rms (RMSNorm per head, scores / sqrt(d_k)) | l2 (unit vectors, scores g q^.k^)",
                            [](const FieldSource& s, Convention& c) {
                              const std::string v = s.text("qk_form");
                              auto f = parse_qk_form(v);
                              if (!f) s.fail("qk_form", fmt::format("unknown '{}' ({})", v, choices_qk_form()));
                              c.qk_form = *f;
                              if (*f == QkForm::l2) {  // the l2 form's defaults are l2_normalize's
                                const Convention d = default_convention(Op::l2_normalize);
                                if (!s.has("eps_placement")) c.eps_placement = d.eps_placement;
                                if (!s.has("eps")) c.eps = d.eps;
                              }
                            },
                            [](const Convention& c) -> ConventionValue { return std::string(to_string(c.qk_form)); }};

/// OpDef::sample: q [B, H, T, d_k], k [B, H, S, d_k] with d_k = width, B * H * T about
/// rows; the rms form with gains none | gamma | one_plus_w, or the l2 form with g.
void sample(Sampler& s, Problem& p) {
  const Dims& d = s.dims();
  const std::int64_t h = d.wide && d.rows >= 4 ? 4 : s.vary() && d.rows >= 2 ? s.pick<std::int64_t>({1, 2}) : 1;  // heads
  // batch: 2 in the large structure (scores of one batch's q against another's k, or k's
  // batch read as q's, showed nowhere with one: a fifth audit), else 1
  const std::int64_t b = d.wide && d.rows >= 8 * h ? 2 : 1;
  const std::int64_t t = (d.rows + b * h - 1) / (b * h), kv = s.vary() ? s.pick<std::int64_t>({1, 2, 3}) : 2;
  p.inputs["q"] = s.x(Shape{b, h, t, d.width}, d.width);
  p.inputs["k"] = s.x(Shape{b, h, kv, d.width}, d.width);
  if (s.vary() && s.coin(0.25)) {
    p.conv.qk_form = QkForm::l2;
    p.conv.eps_placement = EpsPlacement::clamp_norm;
    p.inputs["g"] = s.uniform(Shape{1}, d.param, 0.5, 2.0);
    // negative a quarter of the time (sqrt(g) folded into q^ and k^ is NaN there; it passed
    // every positive draw: a sixth audit)
    if (s.coin(0.25)) {
      Tensor& g = p.inputs.at("g");
      g.set(0, -g.get(0));
    }
    return;
  }
  // the rms form's placement and variance, as every other op draws them (a kernel ignoring
  // variance = unbiased passed: qk_norm had never drawn it; a sixth audit)
  sampling::statistic(s, p, d.width);
  sampling::affine(s, p, {Affine::none, Affine::gamma, Affine::one_plus_w}, Shape{d.width}, "q_gamma", "q_beta");
  if (const Tensor* g = p.input("q_gamma")) p.inputs["k_gamma"] = p.conv.affine == Affine::one_plus_w ? s.uniform(g->shape(), d.param, -0.5, 0.5) : s.gain(g->shape());
}

}  // namespace

extern const OpDef qk_norm_def{
    .name = "qk_norm",
    .formula = "q^ = N(q), k^ = N(k) per head; y = q^.k^ / sqrt(d_k) (rms) or g q^.k^ (l2)",
    .primary_input = "q",
    .params = {&kQkForm},
    .validate = validate,
    .outputs = outputs,
    .groups = [](const Problem& p) { return row_groups(p, p.x().shape().back()); },
    .group_size = [](const Problem& p) { return p.x().shape().back(); },
    .no_backward = "its scores couple q and k",
    .reference = [](const ValidProblem& vp) {
      const Problem& p = *vp;
      return reference::detail::at_working_precision(p, [&](auto t) { return reference::qk_norm<typename decltype(t)::type>(p, reference::fast_path_enabled()); });
    },
    .reference_double = [](const ValidProblem& vp) { return reference::qk_norm<double>(*vp); },
    .cpu = [](const ValidProblem& p, Outputs& o) { kernels::cpu::qk_norm_forward(*p, o); },
    .mutants = {kernels::mutant::def<kernels::mutant::Fault::qk_norm_across_heads>("qk_rms_heads")},
    .sample = sample,
};

}  // namespace normcheck::ops
