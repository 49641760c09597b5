// ada_layer_norm and ada_rms_norm (AdaLN / AdaRMS: y = (1 + scale) N0(x) + shift, scale and
// shift [B, d] broadcast over the tokens, optional gated residual h = x + gate * y): the
// pieces their OpDefs (op.cpp, ada_rms_norm.cpp) share.
#pragma once

#include <map>
#include <string>

#include "spec/convention.hpp"
#include "spec/exact.hpp"
#include "spec/op.hpp"
#include "spec/op_def.hpp"

namespace normcheck::ops::ada {

void validate(const Problem& p);
void validate_backward(const Problem& p);
std::map<std::string, Shape> outputs(const Problem& p);
std::map<std::string, Shape> backward_outputs(const Problem& p);
ReductionLayout groups(const Problem& p);
std::int64_t group_size(const Problem& p);
std::int64_t param_reduction(const Problem& p);
ExactOutputs reference_exact(const ValidProblem& p);
ExactOutputs reference_double(const ValidProblem& p);
void cpu(const ValidProblem& p, Outputs& out);
extern const ConventionKey gated_key;
std::vector<MutantDef> mutants();
/// OpDef::sample: x [B, T, width] (B 1 or 2), scale U(-0.5, 0.5), shift, and sometimes
/// (forward) the gate.
void sample(Sampler& s, Problem& p);

}  // namespace normcheck::ops::ada
