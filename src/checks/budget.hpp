// Default error budgets (gates) per op and dtype: data, with the analysis beside it.
#pragma once

#include <cstdint>
#include <string>

#include "checks/metrics.hpp"
#include "spec/op.hpp"

namespace normcheck {


/// The default gate for a problem (op, out dtype, accumulation dtype, group size m).
/// See budget.cpp for the error analysis behind the formula.
Gate default_gate(const Problem& p);

/// Group size m (values per normalization statistic) of a validated problem.
std::int64_t group_size(const Problem& p);

/// Backward only: the number of values R each parameter-gradient element (dgamma, dbeta,
/// ds, db, dg) sums; 0 for a forward problem or an op without parameter gradients.
std::int64_t param_reduction_size(const Problem& p);

}  // namespace normcheck
