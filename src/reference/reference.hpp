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
  /// The exact values correctly rounded to binary64 (not via the long double, which would
  /// round twice). Empty for outputs built by hand (tests, literal values).
  std::vector<double> exact64;
  std::vector<double> exact_f64() const {
    return exact64.empty() ? std::vector<double>(exact.begin(), exact.end()) : exact64;
  }
};

/// All outputs of the reference, by name ("y", ...).
using ExactOutputs = std::map<std::string, ExactOutput>;

/// Working precision P in bits the reference needs for problem p (row_norm.hpp "Exactness"):
/// the sum of any group of x is exact when P >= (e_max - e_min) + p_x + ceil(log2 m) + 1,
/// with e_max, e_min the exponents of the largest and smallest nonzero |x| and p_x the
/// precision of x's dtype; the result is then within (m + 8) 2^-P relative, and we also
/// ask P >= 160 + log2 m so that this is below 2^-100 ULP of binary64. The reference runs
/// at the smallest of 256, 512, 1024, 2304 bits that is >= P (2304 covers every f64 input).
int working_bits(const Problem& p);

/// Evaluates p exactly (MPFR at working_bits(p)). Throws SpecError if p is invalid.
/// Backward problems (direction = backward) give the gradients dx, dgamma, ... with their
/// condition magnitudes (reference/row_norm_backward.hpp).
ExactOutputs evaluate_exact(const Problem& p);

/// The same formula in binary64, for quick checks and tests of the template itself.
/// Outputs are rounded from the double result (so not always correctly rounded).
ExactOutputs evaluate_double(const Problem& p);

}  // namespace normcheck::reference
