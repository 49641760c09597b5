// group_norm and instance_norm (instance_norm is group_norm with G = C): the entries their
// OpDefs (op.cpp, instance_norm.cpp) register.
#pragma once

#include <map>
#include <string>

#include "spec/exact.hpp"
#include "spec/op.hpp"
#include "spec/op_def.hpp"

namespace normcheck::ops::group_norms {

ExactOutputs reference_exact(const ValidProblem& p);
ExactOutputs reference_double(const ValidProblem& p);
void cpu(const ValidProblem& p, Outputs& out);
/// OpDef::sample (spec/sample.hpp). group_norm: x [N, G * cpg, L] with cpg * L = width (cpg
/// channels per group, a divisor of width), G in 1..3, N * G about rows. instance_norm:
/// x [N, C, width], N * C about rows. Affine none | gamma | gamma_beta over C.
void sample(Sampler& s, Problem& p);
/// Inputs x, gamma, beta; the group's size m (>= 2 for unbiased); G divides C (group_norm).
void validate(const Problem& p);
std::map<std::string, Shape> outputs(const Problem& p);
/// The optional outputs: the saved statistics "mean" and "rstd" = 1 / D(var) per (n, group),
/// [N, G] (instance_norm [N, C]), in saved_stat_dtype(p).
std::map<std::string, Shape> saved_statistics(const Problem& p);
std::map<std::string, DType> saved_statistics_dtypes(const Problem& p);
ReductionLayout groups(const Problem& p);
std::int64_t group_size(const Problem& p);

}  // namespace normcheck::ops::group_norms
