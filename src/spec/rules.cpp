#include "spec/rules.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace normcheck::rules {

void need(bool ok, const std::string& field, const std::string& msg) {
  if (!ok) throw SpecError(field, msg);
}

void only_inputs(const Problem& p, std::initializer_list<std::string_view> allowed) {
  for (auto& [name, t] : p.inputs)
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end() && name != "dy") {
      std::string list;
      for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      throw SpecError("inputs." + name, fmt::format("unknown input '{}' for {} (expected {})", name, to_string(p.op), list));
    }
}

void input_rule(const Problem& p, const std::string& name, bool present, const Shape& shape, const std::string& why,
                bool numel_only) {
  const Tensor* t = p.input(name);
  if (present && !t) throw SpecError("inputs." + name, fmt::format("input {} is required ({})", name, why));
  if (!present && t) throw SpecError("inputs." + name, fmt::format("input {} given but not used ({})", name, why));
  if (!t) return;
  const bool ok = numel_only ? numel(t->shape()) == numel(shape) : t->shape() == shape;
  if (!ok)
    throw SpecError("inputs." + name + ".shape", fmt::format("{} has shape {}, expected {}", name, shape_str(t->shape()),
                                                             numel_only ? "one element" : shape_str(shape)));
}

void affine_inputs(const Problem& p, const Shape& shape, const char* gamma, const char* beta) {
  const Affine a = p.conv.affine;
  const std::string why = fmt::format("affine = {}", to_string(a));
  input_rule(p, gamma, a != Affine::none, shape, why);
  input_rule(p, beta, a == Affine::gamma_beta, shape, why);
}

void biased_only(const Problem& p, std::string_view what) {
  need(p.conv.variance == Variance::biased, "convention.variance",
       fmt::format("{} has no variance estimator to choose (it divides by a norm, not a mean)", what));
}

void no_affine(const Problem& p, const char* why) {
  need(p.conv.affine == Affine::none, "convention.affine", fmt::format("{} takes affine = none ({})", to_string(p.op), why));
}

void trailing_dims(const Problem& p) {
  const Shape& ns = p.conv.normalized_shape;
  const Shape& xs = p.x().shape();
  need(!ns.empty(), "convention.normalized_shape", "normalized_shape must not be empty");
  need(ns.size() <= xs.size(), "convention.normalized_shape",
       fmt::format("normalized_shape {} has more dims than x {}", shape_str(ns), shape_str(xs)));
  for (std::size_t k = 0; k < ns.size(); ++k)
    need(ns[k] == xs[xs.size() - ns.size() + k] && ns[k] > 0, "convention.normalized_shape",
         fmt::format("normalized_shape {} is not the trailing dims of x {}", shape_str(ns), shape_str(xs)));
}

void unbiased_needs_two(const Problem& p, std::int64_t m) {
  if (p.conv.variance == Variance::unbiased)
    need(m >= 2, "convention.variance", "unbiased variance needs at least 2 elements per group");
}

}  // namespace normcheck::rules
