// Dispatch of the backward references (every op with a backward; spec/backward.cpp).
#pragma once

#include "reference/reference.hpp"

namespace normcheck::reference::detail {

/// The gradients dx, dgamma, dbeta (ds, db; dg) of a backward problem, exact (MPFR at
/// working_bits(p)) or in binary64. Formulas and condition magnitudes:
/// row_norm_backward.hpp. Throws SpecError if p is invalid.
ExactOutputs evaluate_backward_exact(const Problem& p);
ExactOutputs evaluate_backward_double(const Problem& p);

}  // namespace normcheck::reference::detail
