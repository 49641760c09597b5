// l2_normalize and scale_norm (scale_norm = g * l2_normalize with one learned scalar g):
// the pieces their OpDefs (op.cpp, scale_norm.cpp) share.
#pragma once

#include <map>
#include <string>

#include "spec/convention.hpp"
#include "spec/exact.hpp"
#include "spec/op.hpp"
#include "spec/op_def.hpp"

namespace normcheck::ops::l2 {

/// x only (scale_norm: x and g [1]); biased; no affine; axes in range and distinct, or
/// normalized_shape the trailing dims of x.
void validate(const Problem& p);
std::map<std::string, Shape> outputs(const Problem& p);
/// l2_normalize: dx; scale_norm: dx and dg.
std::map<std::string, Shape> backward_outputs(const Problem& p);
/// The groups of the reduced axes; m = the product of their sizes.
ReductionLayout groups(const Problem& p);
std::int64_t group_size(const Problem& p);
/// scale_norm's dg sums every element; l2_normalize has no parameter.
std::int64_t param_reduction(const Problem& p);
ExactOutputs reference_exact(const ValidProblem& p);
ExactOutputs reference_double(const ValidProblem& p);
void cpu(const ValidProblem& p, Outputs& out);
/// The `axes` key: axes of x reduced over (negative from the end), any subset.
extern const ConventionKey axes_key;
std::vector<MutantDef> mutants();
/// OpDef::sample: x [rows, width] over the last axis (sometimes axes = [0]: strided
/// groups); scale_norm's g U(0.5, 2).
void sample(Sampler& s, Problem& p);

}  // namespace normcheck::ops::l2
