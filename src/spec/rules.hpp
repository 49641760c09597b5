// Building blocks of the ops' validation rules (OpDef::validate): each throws SpecError
// naming the field, so the parser can point at the line that set it.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

#include "spec/op.hpp"

namespace normcheck::rules {

/// Throws SpecError(field, msg) unless ok.
void need(bool ok, const std::string& field, const std::string& msg);
/// Rejects inputs outside `allowed` (dy is the direction's: always allowed here).
void only_inputs(const Problem& p, std::initializer_list<std::string_view> allowed);
/// Requires input `name` iff `present`, and when present of shape `shape` (only its element
/// count when `numel_only`, for one-element scalars). `why` names the rule in messages.
void input_rule(const Problem& p, const std::string& name, bool present, const Shape& shape, const std::string& why,
                bool numel_only = false);
/// gamma iff affine != none, beta iff gamma_beta, both of `shape`.
void affine_inputs(const Problem& p, const Shape& shape, const char* gamma = "gamma", const char* beta = "beta");
/// variance must be biased: the op divides by a norm, not a mean.
void biased_only(const Problem& p, std::string_view what);
/// affine must be none (`why`: what the op has instead).
void no_affine(const Problem& p, const char* why);
/// normalized_shape non-empty, positive, and the trailing dims of x.
void trailing_dims(const Problem& p);
/// unbiased variance needs m >= 2 values per statistic.
void unbiased_needs_two(const Problem& p, std::int64_t m);

}  // namespace normcheck::rules
