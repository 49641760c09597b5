// What the exact reference returns for a problem: per output, the exact values, their one
// correct rounding, and the condition magnitudes the stab metric divides by.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/tensor.hpp"

namespace normcheck {

/// One output of the reference for a Problem.
/// rounded: the exact result rounded once (RNE) to the problem's out_dtype, same shape as
///          the backend's output; exact: the high-precision value itself, carried as a long
///          double (64-bit significand on x86-64, so an f64 output's ULP error is measured to
///          2^-11 ULP); cond: per-element condition magnitude (ops/common/row_norm.hpp),
///          absolute units.
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

}  // namespace normcheck
