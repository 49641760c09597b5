// The rules layer_norm and rms_norm share (x [..., normalized_shape], gamma/beta
// [normalized_shape] per affine, one statistic per row), for their OpDefs.
#pragma once

#include <map>
#include <string>

#include "spec/convention.hpp"
#include "spec/op.hpp"
#include "spec/op_def.hpp"

namespace normcheck::ops::rows {

/// The key normalized_dtype (Convention::normalized_dtype): a dtype name, or "none"/null for
/// one rounding. layer_norm's and rms_norm's parameter.
extern const ConventionKey kNormalizedDtype;

/// normalized_shape = trailing dims of x; gamma (beta) present iff the affine uses it, of
/// shape normalized_shape; unbiased variance needs m >= 2; inputs x, gamma, beta only.
void validate(const Problem& p);
/// Forward: y of x's shape. Backward: dx, and dgamma/dbeta for the parameters given.
std::map<std::string, Shape> outputs(const Problem& p);
std::map<std::string, Shape> backward_outputs(const Problem& p);
/// The optional outputs: the saved statistics per row, "mean" (layer_norm only) and "rstd"
/// = 1 / D(var), each of shape [rows] (rows = numel(x) / m), in saved_stat_dtype(p).
std::map<std::string, Shape> saved_statistics(const Problem& p);
std::map<std::string, DType> saved_statistics_dtypes(const Problem& p);
/// One group per row of m = numel(normalized_shape) values.
ReductionLayout groups(const Problem& p);
std::int64_t group_size(const Problem& p);
/// OpDef::sample: x [rows, width], affine none | gamma | gamma_beta | one_plus_w, the
/// statistic choices (ops/common/sample.hpp).
void sample(Sampler& s, Problem& p);
/// dgamma/dbeta elements sum over the rows (0 without parameters).
std::int64_t param_reduction(const Problem& p);
/// The row norms' mutants (ops/common/row_mutants.cpp, backward_mutants.cpp); each one's
/// supports() says which of the two ops and which direction it has a kernel for.
std::vector<MutantDef> mutants();

}  // namespace normcheck::ops::rows
