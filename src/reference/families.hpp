// Dispatch of the family references (every op but layer_norm / rms_norm).
#pragma once

#include "reference/reference.hpp"

namespace normcheck::reference::detail {

/// Working precision: working_bits() of the widest dtype among the problem's inputs.
/// Throws SpecError if p is invalid.
ExactOutputs evaluate_family_exact(const Problem& p);
ExactOutputs evaluate_family_double(const Problem& p);

}  // namespace normcheck::reference::detail
