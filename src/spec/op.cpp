#include "spec/op.hpp"

#include <array>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "spec/op_def.hpp"

namespace normcheck {

namespace {
template <class E, std::size_t N>
using Names = std::array<std::pair<E, std::string_view>, N>;

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

std::string_view Op::name() const noexcept { return d_ ? d_->name : std::string_view("?"); }
bool operator<(Op a, Op b) noexcept { return a.name() < b.name(); }
std::string_view to_string(Op op) noexcept { return op.name(); }
std::string_view to_string(EpsPlacement e) noexcept { return name_of(kPlacements, e); }
std::string_view to_string(Variance e) noexcept { return name_of(kVariances, e); }
std::string_view to_string(Affine e) noexcept { return name_of(kAffines, e); }
std::string_view to_string(QkForm e) noexcept { return name_of(kQkForms, e); }
std::string_view to_string(Direction e) noexcept { return name_of(kDirections, e); }
std::optional<QkForm> parse_qk_form(std::string_view s) noexcept { return parse_of(kQkForms, s); }
std::optional<Direction> parse_direction(std::string_view s) noexcept { return parse_of(kDirections, s); }
std::optional<EpsPlacement> parse_eps_placement(std::string_view s) noexcept { return parse_of(kPlacements, s); }
std::optional<Variance> parse_variance(std::string_view s) noexcept { return parse_of(kVariances, s); }
std::optional<Affine> parse_affine(std::string_view s) noexcept { return parse_of(kAffines, s); }
std::string choices_qk_form() { return choices_of(kQkForms); }
std::string choices_direction() { return choices_of(kDirections); }
std::string choices_eps_placement() { return choices_of(kPlacements); }
std::string choices_variance() { return choices_of(kVariances); }
std::string choices_affine() { return choices_of(kAffines); }

const Tensor& Problem::x() const {
  auto it = inputs.find(std::string(op.def().primary_input));
  if (it == inputs.end()) throw SpecError(fmt::format("inputs.{}", op.def().primary_input),
                                          fmt::format("input {} is required", op.def().primary_input));
  return it->second;
}

void check(const Problem& p) {
  if (!p.op) throw SpecError("op", "no op");
  const OpDef& d = p.op.def();
  const Convention& c = p.conv;
  if (!(c.eps >= 0) || !std::isfinite(c.eps))
    throw SpecError("convention.eps", fmt::format("eps must be finite and >= 0, got {}", c.eps));
  if (!p.input(std::string(d.primary_input)))
    throw SpecError(fmt::format("inputs.{}", d.primary_input), fmt::format("input {} is required", d.primary_input));
  if (is_quantized(p.out_dtype) && !d.quantized_out)
    throw SpecError("out_dtype", fmt::format("{} has no quantized output: out_dtype {} needs a quantizing op (rms_norm_quant, "
                                             "layer_norm_quant)", d.name, dtype_name(p.out_dtype)));
  if (is_quantized(c.acc_dtype))
    throw SpecError("convention.acc_dtype", fmt::format("no kernel accumulates in {}", dtype_name(c.acc_dtype)));
  // dy iff backward, with the shape of y (= the shape of x for every op with a backward).
  const Tensor* dy = p.input("dy");
  if (c.direction == Direction::forward) {
    if (dy) throw SpecError("inputs.dy", "input dy given but direction = forward (dy is the backward pass's dL/dy)");
  } else {
    if (!d.has_backward())
      throw SpecError("convention.direction", fmt::format("{} has no backward here ({}): direction = forward", d.name, d.no_backward));
    if (d.validate_backward) d.validate_backward(p);
    if (!dy) throw SpecError("inputs.dy", "direction = backward needs input dy (dL/dy, the shape of y)");
    if (dy->shape() != p.x().shape())
      throw SpecError("inputs.dy.shape",
                      fmt::format("dy has shape {}, expected the shape of y {}", shape_str(dy->shape()), shape_str(p.x().shape())));
  }
  d.validate(p);
}

ValidProblem validate(Problem p) {
  check(p);
  return ValidProblem(std::make_shared<const Problem>(std::move(p)));
}

ValidProblem validate_borrowed(const Problem& p) {
  check(p);
  return ValidProblem(std::shared_ptr<const Problem>(std::shared_ptr<const Problem>(), &p));  // owns nothing
}

std::map<std::string, Shape> output_shapes(const Problem& p) {
  const OpDef& d = p.op.def();
  if (p.conv.direction == Direction::backward) return d.backward_outputs(p);
  auto o = d.outputs(p);
  if (d.optional_outputs) o.merge(d.optional_outputs(p));
  return o;
}

bool is_optional_output(const Problem& p, const std::string& name) {
  const OpDef& d = p.op.def();
  return p.conv.direction == Direction::forward && d.optional_outputs && d.optional_outputs(p).count(name) != 0;
}

DType output_dtype(const Problem& p, const std::string& name) {
  const OpDef& d = p.op.def();
  if (p.conv.direction == Direction::forward && d.output_dtypes) {
    const auto m = d.output_dtypes(p);
    if (auto it = m.find(name); it != m.end()) return it->second;
  }
  return p.out_dtype;
}

DType saved_stat_dtype(const Problem& p) { return p.conv.acc_dtype == DType::f64 ? DType::f64 : DType::f32; }

std::string primary_output(const Problem& p) { return p.conv.direction == Direction::backward ? "dx" : "y"; }

ReductionLayout group_layout(const Problem& p) { return p.op.def().groups(p); }

}  // namespace normcheck
