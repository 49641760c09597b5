// The reference of the row-wise norms (layer_norm, rms_norm) in either direction: rows of
// x [..., normalized_shape] through normalize_group (row_norm.hpp) or row_norm_backward.
#pragma once

#include "ops/reference.hpp"

namespace normcheck::reference {

/// Exact (MPFR at working_bits(p)) and binary64 evaluations of a layer_norm / rms_norm
/// problem, forward (y) or backward (dx, dgamma, dbeta).
ExactOutputs row_reference(const ValidProblem& p);
ExactOutputs row_reference_double(const ValidProblem& p);

}  // namespace normcheck::reference
