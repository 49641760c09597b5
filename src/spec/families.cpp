// Spec of the normalization families beyond layer_norm / rms_norm: convention
// defaults, inputs and outputs, every validation rule (each SpecError names its field),
// and the index layouts the reference, the kernels and the mutants share.
#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "spec/op.hpp"

namespace normcheck {

Convention default_convention(Op op) {
  Convention c;
  if (op == Op::l2_normalize) {
    c.eps_placement = EpsPlacement::clamp_norm;
    c.eps = 1e-12;
  } else if (op == Op::scale_norm) {
    c.eps_placement = EpsPlacement::clamp_norm;
  }
  return c;
}

std::string_view primary_input(Op op) noexcept { return op == Op::qk_norm ? "q" : "x"; }

namespace {

void need(bool ok, const std::string& field, const std::string& msg) {
  if (!ok) throw SpecError(field, msg);
}

/// Rejects inputs outside `allowed`.
void only_inputs(const Problem& p, std::initializer_list<std::string_view> allowed) {
  for (auto& [name, t] : p.inputs)
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end() && name != "dy") {  // dy: validate_direction
      std::string list;
      for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      throw SpecError("inputs." + name, fmt::format("unknown input '{}' for {} (expected {})", name, to_string(p.op), list));
    }
}

/// Requires input `name` iff `present`, and when present with `shape` (numel only if
/// `numel_only`, for the one-element scalars).
void input_rule(const Problem& p, const std::string& name, bool present, const Shape& shape, const std::string& why,
                bool numel_only = false) {
  const Tensor* t = p.input(name);
  if (present && !t) throw SpecError("inputs." + name, fmt::format("input {} is required ({})", name, why));
  if (!present && t) throw SpecError("inputs." + name, fmt::format("input {} given but not used ({})", name, why));
  if (!t) return;
  const bool ok = numel_only ? numel(t->shape()) == numel(shape) : t->shape() == shape;
  if (!ok)
    throw SpecError("inputs." + name + ".shape",
                    fmt::format("{} has shape {}, expected {}", name, shape_str(t->shape()),
                                numel_only ? "one element" : shape_str(shape)));
}

void affine_inputs(const Problem& p, const Shape& shape, const char* gamma = "gamma", const char* beta = "beta") {
  const Affine a = p.conv.affine;
  const std::string why = fmt::format("affine = {}", to_string(a));
  input_rule(p, gamma, a != Affine::none, shape, why);
  input_rule(p, beta, a == Affine::gamma_beta, shape, why);
}

void biased_only(const Problem& p, const char* what) {
  need(p.conv.variance == Variance::biased, "convention.variance",
       fmt::format("{} has no variance estimator to choose (it divides by a norm, not a mean)", what));
}

void no_affine(const Problem& p, const char* why) {
  need(p.conv.affine == Affine::none, "convention.affine", fmt::format("{} takes affine = none ({})", to_string(p.op), why));
}

void validate_channels(const Problem& p) {
  const Convention& c = p.conv;
  const Shape& xs = p.x().shape();
  const std::size_t lead = p.op == Op::batch_norm && c.sequence ? 1 : 0;
  need(xs.size() >= 2 + lead, "inputs.x.shape",
       fmt::format("{} needs x of shape {}[N, C, *spatial], got {}", to_string(p.op), lead ? "[S, " : "[", shape_str(xs)));
  const ChannelLayout l = channel_layout(p);
  affine_inputs(p, Shape{l.c});
  std::int64_t m = l.spatial;
  if (p.op == Op::group_norm) {
    need(c.num_groups >= 1, "convention.num_groups", "group_norm needs num_groups >= 1");
    need(l.c % c.num_groups == 0, "convention.num_groups",
         fmt::format("num_groups = {} does not divide the {} channels of x {}", c.num_groups, l.c, shape_str(xs)));
    m *= l.c / c.num_groups;
  }
  if (p.op == Op::batch_norm) {
    only_inputs(p, {"x", "gamma", "beta", "running_mean", "running_var"});
    if (c.momentum)
      need(*c.momentum >= 0 && *c.momentum <= 1, "convention.momentum",
           fmt::format("momentum must be in [0, 1], got {}", *c.momentum));
    need(c.num_batches_tracked >= 0, "convention.num_batches_tracked", "num_batches_tracked must be >= 0");
    const std::string why = fmt::format("track_running_stats = {}", c.track_running_stats);
    input_rule(p, "running_mean", c.track_running_stats, Shape{l.c}, why);
    input_rule(p, "running_var", c.track_running_stats, Shape{l.c}, why);
    if (const Tensor* rv = p.input("running_var"))
      for (std::int64_t i = 0; i < rv->size(); ++i)
        need(!(rv->get(i) < 0), "inputs.running_var", fmt::format("running_var[{}] = {} is negative", i, rv->get(i)));
    const bool batch_stats = c.training || !c.track_running_stats;
    m = l.n * l.spatial;
    // PyTorch: "Expected more than 1 value per channel when training".
    if (batch_stats)
      need(m >= 2, "inputs.x.shape",
           fmt::format("batch_norm with batch statistics needs more than one value per channel: x {} has N * spatial = {}",
                       shape_str(xs), m));
  } else {
    only_inputs(p, {"x", "gamma", "beta"});
  }
  if (c.variance == Variance::unbiased)
    need(m >= 2, "convention.variance", "unbiased variance needs at least 2 elements per group");
}

void validate_l2(const Problem& p) {
  only_inputs(p, p.op == Op::scale_norm ? std::initializer_list<std::string_view>{"x", "g"}
                                        : std::initializer_list<std::string_view>{"x"});
  biased_only(p, to_string(p.op).data());
  no_affine(p, p.op == Op::scale_norm ? "its gain is the scalar input g" : "it has no parameters");
  const Shape& xs = p.x().shape();
  const auto r = static_cast<std::int64_t>(xs.size());
  if (!p.conv.axes.empty()) {
    std::set<std::int64_t> seen;
    for (auto a : p.conv.axes) {
      need(a >= -r && a < r, "convention.axes", fmt::format("axis {} out of range for x {}", a, shape_str(xs)));
      need(seen.insert(a < 0 ? a + r : a).second, "convention.axes", fmt::format("axis {} given twice", a));
    }
  } else {
    const Shape& ns = p.conv.normalized_shape;
    need(!ns.empty() && ns.size() <= xs.size() && std::equal(ns.begin(), ns.end(), xs.end() - static_cast<std::ptrdiff_t>(ns.size())),
         "convention.normalized_shape",
         fmt::format("normalized_shape {} is not the trailing dims of x {}", shape_str(ns), shape_str(xs)));
  }
  if (p.op == Op::scale_norm) input_rule(p, "g", true, Shape{1}, "scale_norm's learned scalar", true);
}

void validate_ada(const Problem& p) {
  only_inputs(p, {"x", "scale", "shift", "gate"});
  no_affine(p, "scale and shift are the affine");
  const Shape& xs = p.x().shape();
  need(xs.size() >= 2, "inputs.x.shape", fmt::format("{} needs x of shape [B, *, d], got {}", to_string(p.op), shape_str(xs)));
  const Shape& ns = p.conv.normalized_shape;
  need(ns.size() == 1 && ns[0] == xs.back(), "convention.normalized_shape",
       fmt::format("{} normalizes the last dim only: normalized_shape must be [{}]", to_string(p.op), xs.back()));
  const Shape bd{xs.front(), xs.back()};
  input_rule(p, "scale", true, bd, "the modulation (1 + scale)");
  input_rule(p, "shift", true, bd, "the modulation shift");
  input_rule(p, "gate", p.conv.gated, bd, fmt::format("gated = {}", p.conv.gated));
  if (p.conv.variance == Variance::unbiased)
    need(xs.back() >= 2, "convention.variance", "unbiased variance needs at least 2 elements per group");
}

void validate_qk(const Problem& p) {
  only_inputs(p, {"q", "k", "q_gamma", "k_gamma", "g"});
  const Tensor* k = p.input("k");
  need(k != nullptr, "inputs.k", "qk_norm needs input k [B, H, S, d_k]");
  const Shape& qs = p.x().shape();
  const Shape& ks = k->shape();
  need(qs.size() == 4, "inputs.q.shape", fmt::format("q must be [B, H, T, d_k], got {}", shape_str(qs)));
  need(ks.size() == 4 && ks[0] == qs[0] && ks[1] == qs[1] && ks[3] == qs[3], "inputs.k.shape",
       fmt::format("k must be [B, H, S, d_k] with q's B, H, d_k {}, got {}", shape_str(qs), shape_str(ks)));
  const Shape dk{qs[3]};
  if (p.conv.qk_form == QkForm::rms) {
    need(p.conv.affine != Affine::gamma_beta, "convention.affine", "qk_norm (rms form) has gains only: none | gamma | one_plus_w");
    const std::string why = fmt::format("qk_form = rms, affine = {}", to_string(p.conv.affine));
    input_rule(p, "q_gamma", p.conv.affine != Affine::none, dk, why);
    input_rule(p, "k_gamma", p.conv.affine != Affine::none, dk, why);
    input_rule(p, "g", false, Shape{1}, "only the l2 form has the scalar g", true);
    if (p.conv.variance == Variance::unbiased)
      need(qs[3] >= 2, "convention.variance", "unbiased variance needs at least 2 elements per group");
  } else {
    no_affine(p, "the l2 form's only parameter is the scalar g");
    biased_only(p, "qk_norm (l2 form)");
    input_rule(p, "g", true, Shape{1}, "the l2 form's learned scale", true);
    input_rule(p, "q_gamma", false, dk, "qk_form = l2");
    input_rule(p, "k_gamma", false, dk, "qk_form = l2");
  }
}

}  // namespace

namespace detail {

void validate_family(const Problem& p) {
  switch (p.op) {
    case Op::group_norm: case Op::instance_norm: case Op::batch_norm: validate_channels(p); break;
    case Op::l2_normalize: case Op::scale_norm: validate_l2(p); break;
    case Op::ada_layer_norm: case Op::ada_rms_norm: validate_ada(p); break;
    case Op::qk_norm: validate_qk(p); break;
    case Op::layer_norm: case Op::rms_norm: break;
  }
}

}  // namespace detail

std::map<std::string, Shape> output_shapes(const Problem& p) {
  if (p.conv.direction == Direction::backward) return detail::backward_output_shapes(p);
  std::map<std::string, Shape> o;
  const Shape& xs = p.x().shape();
  o["y"] = xs;
  if (p.op == Op::batch_norm && p.conv.track_running_stats) {
    const Shape c{channel_layout(p).c};
    o["running_mean"] = c;
    o["running_var"] = c;
  }
  if ((p.op == Op::ada_layer_norm || p.op == Op::ada_rms_norm) && p.conv.gated) o["h"] = xs;
  if (p.op == Op::qk_norm) {
    const Shape& ks = p.inputs.at("k").shape();
    o["q_hat"] = xs;
    o["k_hat"] = ks;
    o["y"] = Shape{xs[0], xs[1], xs[2], ks[2]};
  }
  return o;
}

ChannelLayout channel_layout(const Problem& p) {
  const Shape& xs = p.x().shape();
  ChannelLayout l;
  std::size_t k = 0;
  if (p.op == Op::batch_norm && p.conv.sequence && !xs.empty()) l.steps = xs[k++];
  l.n = k < xs.size() ? xs[k++] : 0;
  l.c = k < xs.size() ? xs[k++] : 0;
  for (; k < xs.size(); ++k) l.spatial *= xs[k];
  return l;
}

std::vector<std::int64_t> reduced_axes(const Problem& p) {
  const auto r = static_cast<std::int64_t>(p.x().shape().size());
  std::vector<std::int64_t> a;
  if (p.conv.axes.empty()) {
    for (auto k = r - static_cast<std::int64_t>(p.conv.normalized_shape.size()); k < r; ++k) a.push_back(k);
  } else {
    for (auto v : p.conv.axes) a.push_back(v < 0 ? v + r : v);
  }
  std::sort(a.begin(), a.end());
  return a;
}

ReductionLayout reduction_layout(const Shape& shape, const std::vector<std::int64_t>& axes) {
  const auto r = static_cast<std::int64_t>(shape.size());
  std::vector<std::int64_t> stride(static_cast<std::size_t>(r), 1);
  for (auto k = r - 1; k > 0; --k) stride[k - 1] = stride[k] * shape[k];
  std::vector<bool> red(static_cast<std::size_t>(r), false);
  for (auto a : axes) red[a] = true;
  // Offsets spanned by a set of axes, row-major over those axes.
  auto span = [&](bool reduced) {
    std::vector<std::int64_t> off{0};
    for (std::int64_t k = 0; k < r; ++k) {
      if (red[k] != reduced) continue;
      std::vector<std::int64_t> next;
      next.reserve(off.size() * static_cast<std::size_t>(shape[k]));
      for (auto o : off)
        for (std::int64_t i = 0; i < shape[k]; ++i) next.push_back(o + i * stride[k]);
      off.swap(next);
    }
    return off;
  };
  ReductionLayout l;
  l.base = span(false);
  l.member = span(true);
  l.contiguous = true;
  for (std::size_t j = 0; j < l.member.size(); ++j) l.contiguous = l.contiguous && l.member[j] == static_cast<std::int64_t>(j);
  return l;
}

}  // namespace normcheck
