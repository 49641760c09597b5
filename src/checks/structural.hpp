// Structural properties of a backend's outputs per normalization group (expect.sums_to_zero,
// expect.orthogonal): e.g. LayerNorm's input gradient sums to zero over each row and is
// orthogonal to x when eps = 0; the gradient of any scale-invariant op is orthogonal to x.
#pragma once

#include "cases/case.hpp"
#include "checks/check.hpp"
#include "ops/reference.hpp"

namespace normcheck {

/// Judges `s` on a backend's outputs `out` for problem p (validated), per group of
/// group_layout(p). With a^, b^ the backend's values (inputs: their exact values), a, b the
/// exact ones and E_i = stab_allowance(G, out, a_i, u_acc c_i) the gate's allowance for element i
/// (0 for an input), G the stab limit of `gate` (default_gate(p) when the case gates on
/// another metric), the computed sum of one group obeys, when the property holds exactly,
///   |sum a^_i b^_i| <= sum (E^a_i |b_i| + |a_i| E^b_i + E^a_i E^b_i) + slack,
/// slack = (m + 2) 2^-62 sum |a^_i b^_i| covering the long-double evaluation of the sums
/// (b = 1 for sums_to_zero). Every element within its gate implies it: the property adds a
/// statement about the case (the exact outputs must have it, else FAILED "false in exact
/// arithmetic") and a check a backend cannot pass by luck element by element. MISTRUSTED
/// when no group can discriminate (its budget >= sum |a_i b_i|: any output of the right size
/// passes, e.g. an all-zero gradient).
CheckResult check_structural(const Structural& s, const Problem& p, const Outputs& out,
                             const reference::ExactOutputs& ref, const Gate& gate);

}  // namespace normcheck
