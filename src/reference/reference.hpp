// The exact reference: evaluates a Problem in multiprecision and rounds once.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "spec/op.hpp"

namespace normcheck::reference {

/// One output of the reference for a Problem.
/// rounded: the exact result rounded once (RNE) to the problem's out_dtype, same shape as
///          the backend's output; exact: the high-precision value itself, carried as a long
///          double (64-bit significand on x86-64, so an f64 output's ULP error is measured to
///          2^-11 ULP); cond: per-element condition magnitude (row_norm.hpp), absolute units.
struct ExactOutput {
  Tensor rounded;
  std::vector<long double> exact;
  std::vector<double> cond;
};

/// All outputs of the reference, by name ("y", ...).
using ExactOutputs = std::map<std::string, ExactOutput>;

/// Working precision in bits used for inputs of dtype t: enough for exact sums of any
/// m < 2^60 values of t (range of t in bits + 60 + guard): 256 for f16, 512 for f32 and
/// bf16, 2304 for f64. See row_norm.hpp "Exactness".
int working_bits(DType t) noexcept;

/// Evaluates p exactly (MPFR at working_bits of x's dtype). Throws SpecError if p is invalid.
ExactOutputs evaluate_exact(const Problem& p);

/// The same formula in binary64, for quick checks and tests of the template itself.
/// Outputs are rounded from the double result (so not always correctly rounded).
ExactOutputs evaluate_double(const Problem& p);

}  // namespace normcheck::reference
