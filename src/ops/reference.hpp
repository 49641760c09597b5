// The exact reference: evaluates a problem in multiprecision and rounds once. Each op's
// formula is a template on the number type in its folder (ops/<op>/reference.hpp); this is
// the entry that dispatches through the op table.
#pragma once

#include "spec/exact.hpp"
#include "spec/op.hpp"

namespace normcheck::reference {

using normcheck::ExactOutput;
using normcheck::ExactOutputs;

/// Working precision P in bits the reference needs for problem p (ops/common/row_norm.hpp
/// "Exactness"): the sum of any group of x is exact when P >= (e_max - e_min) + p_x +
/// ceil(log2 m) + 1, with e_max, e_min the exponents of the largest and smallest nonzero
/// |x| and p_x the precision of x's dtype; the result is then within (m + 8) 2^-P relative,
/// and we also ask P >= 160 + log2 m so that this is below 2^-100 ULP of binary64. The
/// reference runs at the smallest of 256, 512, 1024, 2304 bits that is >= P.
int working_bits(const Problem& p);

/// Evaluates p exactly (MPFR at working_bits(p)), either direction: its op's `reference`.
ExactOutputs evaluate_exact(const ValidProblem& p);
/// validate(p), then evaluate_exact: for callers holding a plain Problem (tests, tools).
/// Throws SpecError if p is invalid.
ExactOutputs evaluate_exact(const Problem& p);

/// The same formula in binary64, for quick checks and tests of the template itself.
/// Outputs are rounded from the double result (so not always correctly rounded).
ExactOutputs evaluate_double(const ValidProblem& p);
ExactOutputs evaluate_double(const Problem& p);

}  // namespace normcheck::reference
