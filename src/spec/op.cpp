#include "spec/op.hpp"

#include <array>
#include <utility>

#include <fmt/format.h>

namespace normcheck {

namespace {
template <class E, std::size_t N>
using Names = std::array<std::pair<E, std::string_view>, N>;

constexpr Names<Op, 10> kOps{{{Op::layer_norm, "layer_norm"}, {Op::rms_norm, "rms_norm"},
                              {Op::group_norm, "group_norm"}, {Op::instance_norm, "instance_norm"},
                              {Op::batch_norm, "batch_norm"}, {Op::l2_normalize, "l2_normalize"},
                              {Op::scale_norm, "scale_norm"}, {Op::ada_layer_norm, "ada_layer_norm"},
                              {Op::ada_rms_norm, "ada_rms_norm"}, {Op::qk_norm, "qk_norm"}}};
constexpr Names<EpsPlacement, 4> kPlacements{{{EpsPlacement::inside_sqrt, "inside_sqrt"},
                                              {EpsPlacement::outside_sqrt, "outside_sqrt"},
                                              {EpsPlacement::clamp_var, "clamp_var"},
                                              {EpsPlacement::clamp_norm, "clamp_norm"}}};
constexpr Names<Variance, 2> kVariances{{{Variance::biased, "biased"}, {Variance::unbiased, "unbiased"}}};
constexpr Names<QkForm, 2> kQkForms{{{QkForm::rms, "rms"}, {QkForm::l2, "l2"}}};
constexpr Names<Direction, 2> kDirections{{{Direction::forward, "forward"}, {Direction::backward, "backward"}}};
constexpr Names<Affine, 4> kAffines{{{Affine::none, "none"}, {Affine::gamma, "gamma"},
                                     {Affine::gamma_beta, "gamma_beta"}, {Affine::one_plus_w, "one_plus_w"}}};

template <class E, std::size_t N>
std::string_view name_of(const Names<E, N>& t, E e) noexcept {
  for (auto& [k, v] : t) if (k == e) return v;
  return "?";
}
template <class E, std::size_t N>
std::optional<E> parse_of(const Names<E, N>& t, std::string_view s) noexcept {
  for (auto& [k, v] : t) if (v == s) return k;
  return std::nullopt;
}
template <class E, std::size_t N>
std::string choices_of(const Names<E, N>& t) {
  std::string s;
  for (auto& [k, v] : t) s += (s.empty() ? "" : " | ") + std::string(v);
  return s;
}
}  // namespace

std::string_view to_string(Op e) noexcept { return name_of(kOps, e); }
std::string_view to_string(EpsPlacement e) noexcept { return name_of(kPlacements, e); }
std::string_view to_string(Variance e) noexcept { return name_of(kVariances, e); }
std::string_view to_string(Affine e) noexcept { return name_of(kAffines, e); }
std::string_view to_string(QkForm e) noexcept { return name_of(kQkForms, e); }
std::optional<QkForm> parse_qk_form(std::string_view s) noexcept { return parse_of(kQkForms, s); }
std::string choices_qk_form() { return choices_of(kQkForms); }
std::string_view to_string(Direction e) noexcept { return name_of(kDirections, e); }
std::optional<Direction> parse_direction(std::string_view s) noexcept { return parse_of(kDirections, s); }
std::string choices_direction() { return choices_of(kDirections); }
std::optional<Op> parse_op(std::string_view s) noexcept { return parse_of(kOps, s); }
std::optional<EpsPlacement> parse_eps_placement(std::string_view s) noexcept { return parse_of(kPlacements, s); }
std::optional<Variance> parse_variance(std::string_view s) noexcept { return parse_of(kVariances, s); }
std::optional<Affine> parse_affine(std::string_view s) noexcept { return parse_of(kAffines, s); }
std::string choices_eps_placement() { return choices_of(kPlacements); }
std::string choices_variance() { return choices_of(kVariances); }
std::string choices_affine() { return choices_of(kAffines); }
std::string choices_op() { return choices_of(kOps); }

bool centers(Op op) noexcept {
  return op == Op::layer_norm || op == Op::group_norm || op == Op::instance_norm ||
         op == Op::batch_norm || op == Op::ada_layer_norm;
}

void validate(const Problem& p) {
  const Convention& c = p.conv;
  if (!(c.eps >= 0) || !std::isfinite(c.eps))
    throw SpecError("convention.eps", fmt::format("eps must be finite and >= 0, got {}", c.eps));
  const Tensor* x = p.input(std::string(primary_input(p.op)));
  if (!x) throw SpecError(fmt::format("inputs.{}", primary_input(p.op)), fmt::format("input {} is required", primary_input(p.op)));
  detail::validate_direction(p);  // spec/backward.cpp: dy iff backward
  if (p.op != Op::layer_norm && p.op != Op::rms_norm) {
    detail::validate_family(p);  // spec/families.cpp
    return;
  }
  if (c.eps_placement == EpsPlacement::clamp_norm && p.op == Op::layer_norm) {
    // clamp_norm is max(sqrt(v), eps): defined for every op, nothing to reject.
  }
  const Shape& ns = c.normalized_shape;
  const Shape& xs = x->shape();
  if (ns.empty()) throw SpecError("convention.normalized_shape", "normalized_shape must not be empty");
  if (ns.size() > xs.size())
    throw SpecError("convention.normalized_shape",
                    fmt::format("normalized_shape {} has more dims than x {}", shape_str(ns), shape_str(xs)));
  for (std::size_t k = 0; k < ns.size(); ++k)
    if (ns[k] != xs[xs.size() - ns.size() + k] || ns[k] <= 0)
      throw SpecError("convention.normalized_shape",
                      fmt::format("normalized_shape {} is not the trailing dims of x {}", shape_str(ns), shape_str(xs)));
  const bool need_gamma = c.affine != Affine::none, need_beta = c.affine == Affine::gamma_beta;
  for (const char* name : {"gamma", "beta"}) {
    const bool need = std::string_view(name) == "gamma" ? need_gamma : need_beta;
    const Tensor* t = p.input(name);
    if (need && !t)
      throw SpecError(fmt::format("inputs.{}", name),
                      fmt::format("affine = {} needs input {}", to_string(c.affine), name));
    if (!need && t)
      throw SpecError(fmt::format("inputs.{}", name),
                      fmt::format("input {} given but affine = {} does not use it", name, to_string(c.affine)));
    if (t && t->shape() != ns)
      throw SpecError(fmt::format("inputs.{}.shape", name),
                      fmt::format("{} has shape {}, expected normalized_shape {}", name, shape_str(t->shape()), shape_str(ns)));
  }
  if (c.variance == Variance::unbiased && numel(ns) < 2)
    throw SpecError("convention.variance", "unbiased variance needs at least 2 elements per group");
  for (auto& [name, t] : p.inputs)
    if (name != "x" && name != "gamma" && name != "beta" && name != "dy")  // dy: validate_direction
      throw SpecError("inputs." + name, fmt::format("unknown input '{}' for {} (expected x, gamma, beta)", name, to_string(p.op)));
}

RowLayout row_layout(const Problem& p) {
  RowLayout l;
  l.m = numel(p.conv.normalized_shape);
  l.rows = l.m ? numel(p.x().shape()) / l.m : 0;
  return l;
}

}  // namespace normcheck
