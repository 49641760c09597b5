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
///          the backend's output;
/// exact64: the exact values correctly rounded to binary64 (not via a long double, which
///          would round twice);
/// exact:   the exact values as long doubles (64-bit significand on x86-64), kept only where
///          they carry more than exact64: an f64 output, whose ULP error is then measured to
///          2^-11 ULP, and outputs built by hand (tests, literal values; exact64 empty). For
///          the other dtypes (53 bits against at most 24 of the output) exact64 is the exact
///          value for every measure, and dropping the long doubles saves 16 of a large case's
///          bytes per element (issue 15);
/// cond:    per-element condition magnitude (ops/common/row_norm.hpp), absolute units.
/// Read the exact values with exact_at() or exact_values(), which pick the stored form.
struct ExactOutput {
  Tensor rounded;
  std::vector<long double> exact;
  std::vector<double> cond;
  std::vector<double> exact64;
  /// Element i's exact value: exact[i] where the long doubles are kept, else exact64[i].
  long double exact_at(std::size_t i) const { return exact.empty() ? exact64[i] : exact[i]; }
  /// Every exact value as a long double (a copy; for probes and tests on small outputs).
  std::vector<long double> exact_values() const {
    return exact.empty() ? std::vector<long double>(exact64.begin(), exact64.end()) : exact;
  }
  std::vector<double> exact_f64() const {
    return exact64.empty() ? std::vector<double>(exact.begin(), exact.end()) : exact64;
  }
  /// The number of elements (of whichever exact form is stored).
  std::size_t size() const { return exact.empty() ? exact64.size() : exact.size(); }
};

/// All outputs of the reference, by name ("y", ...).
using ExactOutputs = std::map<std::string, ExactOutput>;

}  // namespace normcheck
