// What the exact reference returns for a problem: per output, the exact values, their one
// correct rounding, and the condition magnitudes the stab metric divides by.
#pragma once

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "core/tensor.hpp"

namespace normcheck {

/// One output of the reference for a Problem.
/// rounded: the exact result rounded once (RNE) to the problem's out_dtype, same shape as
///          the backend's output;
/// exact64: the exact values correctly rounded to binary64 (not via a long double, which
///          would round twice);
/// the exact values as long doubles (64-bit significand on x86-64: an f64 output's ULP error
///          is measured to 2^-11 ULP, and every output's exact value keeps its side of each
///          binary64, so of each rounding boundary of every output format, to 2^-64 relative:
///          a value just below 2^k is measured with the spacing below 2^k), held in one of two
///          forms and read with exact_at() / exact_values():
///   exact: the long doubles themselves (f64 outputs; outputs built by hand, exact64 empty);
///   tail:  for the other dtypes, each long double L as its difference from exact64 r, which
///          has at most 12 significant bits (|L - r| <= ulp53(r)/2 + ulp64/2 and both are
///          multiples of ulp64 near r), stored exactly as the float (L - r) 2^-E, E = r's binary
///          exponent (0 where r is 0, subnormal or not finite: there L = r is used, far outside
///          every non-f64 format's range). 4 bytes instead of 16 per element (issue 15).
/// cond:    per-element condition magnitude (ops/common/row_norm.hpp), absolute units.
struct ExactOutput {
  Tensor rounded;
  std::vector<long double> exact;
  std::vector<double> cond;
  std::vector<double> exact64;
  std::vector<float> tail;
  /// Element i's exact value as a long double (either form; bit for bit the long double).
  long double exact_at(std::size_t i) const {
    if (!exact.empty()) return exact[i];
    const double r = exact64[i];
    if (tail.empty() || tail[i] == 0) return r;
    const int e = detail::frexp_exponent(std::fabs(r)) - 1;  // r = +-m 2^e, m in [1, 2); normal here (tail_of)
    return static_cast<long double>(r) + static_cast<long double>(tail[i]) * static_cast<long double>(detail::pow2(e));  // exact
  }
  /// The tail of long double L against its binary64 rounding r (see above); 0 where not kept.
  static float tail_of(long double L, double r) {
    if (!(std::fabs(r) >= 0x1p-1022) || !std::isfinite(r) || !(std::fabs(L) < 0x1p1024L)) return 0;
    // 2^-e as a double (subnormal for e = 1023: still exact), no ldexpl call (it was 17% of
    // the reference's time); L - r is exact (Sterbenz), the scaling exact in long double.
    const int e = detail::frexp_exponent(std::fabs(r)) - 1;
    const long double s = (L - static_cast<long double>(r)) * static_cast<long double>(detail::pow2(-e));
    return static_cast<float>(s);  // 0, or <= 12 significant bits in [2^-65, 2^-52]: exact
  }
  /// Every exact value as a long double (a copy; for probes and tests on small outputs).
  std::vector<long double> exact_values() const {
    std::vector<long double> v(size());
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = exact_at(i);
    return v;
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
