// What the exact reference returns for a problem: per output, the exact values, their one
// correct rounding, and the condition magnitudes the stab metric divides by.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "core/tensor.hpp"

namespace normcheck {

/// Per-element condition magnitudes (ops/common/row_norm.hpp: absolute units, >= 0, inf or
/// NaN where the element has none), held in 4 bytes per element instead of 8 (issue 15):
/// each value is kept as the binary32 nearest it toward zero where it lies in binary32's
/// normal range (or is 0, inf or NaN); a value outside it (a huge or tiny f64 problem's) is
/// kept whole as a double beside them. operator[] returns the kept value, upper() a bound
/// from above.
/// Why toward zero is safe: a magnitude c enters the checks only as an allowance (stab's
/// kernel unit u_acc c + eta, the invariance checks' allowed difference), which a smaller c
/// makes stricter. The kept value is c (1 - d), 0 <= d < 2^-23: a stab at most 2^-23
/// relative larger than with c itself, never smaller. Where a larger allowance is the
/// stricter side (changes_under: a change must exceed it; a structural check's test that a
/// group can show the property at all), the checks read upper() >= c instead, so no check
/// passes that c would fail. set() may be called from several threads for different elements.
class CondMagnitudes {
 public:
  CondMagnitudes() = default;
  /// Kept as set() keeps each value (for hand-built outputs: tests, literal values).
  CondMagnitudes(const std::vector<double>& v);  // NOLINT(google-explicit-constructor): a vector reads as magnitudes
  CondMagnitudes(std::initializer_list<double> v) : CondMagnitudes(std::vector<double>(v)) {}

  /// n elements, each 0.
  void resize(std::size_t n) { f_.assign(n, 0.0f); }
  std::size_t size() const noexcept { return f_.size(); }
  bool empty() const noexcept { return f_.empty(); }
  /// Element i's kept magnitude.
  double operator[](std::size_t i) const {
    const float f = f_[i];
    std::uint32_t b = 0;
    std::memcpy(&b, &f, sizeof b);
    return b == kWide ? wide_.at(i) : static_cast<double>(f);
  }
  /// A bound >= element i's magnitude as set: the kept binary32 f times 1 + 2^-23 (>= f's
  /// next binary32 away from zero, exact in binary64), or the wide value itself.
  double upper(std::size_t i) const {
    const float f = f_[i];
    std::uint32_t b = 0;
    std::memcpy(&b, &f, sizeof b);
    return b == kWide ? wide_.at(i) : static_cast<double>(f) * (1 + 0x1p-23);
  }
  /// Keeps c as element i's magnitude (see the class comment).
  void set(std::size_t i, double c) {
    const double a = std::fabs(c);
    if (a >= 0x1p-126 && a <= 0x1.fffffep127) {  // binary32's normal range
      float f = static_cast<float>(c);           // nearest; one step toward zero if that was away from c
      if (static_cast<double>(std::fabs(f)) > a) {
        std::uint32_t b = 0;
        std::memcpy(&b, &f, sizeof b);
        --b;  // the next binary32 toward zero (f is normal and nonzero; either sign)
        std::memcpy(&f, &b, sizeof b);
      }
      f_[i] = f;
    } else {
      set_other(i, c);
    }
  }
  /// Every kept magnitude as a double.
  std::vector<double> to_doubles() const;

 private:
  /// The bits of a binary32 quiet NaN with a payload that marks a magnitude kept in wide_
  /// (a NaN magnitude is kept as the canonical quiet NaN, 0x7fc00000).
  static constexpr std::uint32_t kWide = 0x7fcafe01u;
  /// set() of 0, inf, NaN and values outside binary32's normal range.
  void set_other(std::size_t i, double c);
  std::vector<float> f_;
  std::map<std::size_t, double> wide_;
};

/// One output of the reference for a Problem: dtype and shape of the backend's output and
/// the exact values, held as
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
/// cond:    per-element condition magnitude (ops/common/row_norm.hpp), absolute units
///          (CondMagnitudes: binary32 toward zero).
/// The exact result rounded once to `dtype` (per `rounding`: RNE, or the quantizing norms'
/// ties-away option) is not stored (issue 15: 4 bytes per element of an f32 output):
/// rounded_at(i) derives it from the long double L, which decides it except where L itself
/// lies on a rounding boundary of dtype (a midpoint, the overflow threshold; for toward_zero,
/// which only a mutant uses, a value of dtype) and the exact
/// value does not (they differ below 2^-64 relative). Where that cannot happen (to nearest
/// even in a float format, a binary64 that is not a boundary: rounding_derived()) a reference
/// does not form the rounding; every other one goes through set_rounded(), which compares it
/// with the derived one and keeps it in `unlike` where the two differ, so rounded_at() is the
/// reference's own rounding bit for bit.
struct ExactOutput {
  DType dtype = DType::f32;
  Shape shape;
  Rounding rounding = Rounding::nearest_even;
  std::vector<long double> exact;
  CondMagnitudes cond;
  std::vector<double> exact64;
  std::vector<float> tail;
  /// The stored roundings that the long double does not decide (element -> value).
  std::map<std::size_t, double> unlike;

  /// An output built by hand from its exact values (as long doubles) and magnitudes
  /// (tests, a case's literal values standing in for the exact ones); rounded_at() is
  /// their rounding unless set_rounded() says otherwise.
  static ExactOutput of_values(DType dt, Shape s, std::vector<long double> values, std::vector<double> cond = {});

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
  /// Element i's exact value rounded once to dtype (the reference's rounding; see above), as a
  /// Tensor of dtype holds it (int8: NaN as 0).
  double rounded_at(std::size_t i) const {
    if (!unlike.empty()) {
      const auto it = unlike.find(i);
      if (it != unlike.end()) return it->second;
    }
    return derived_rounding(i);
  }
  /// Every rounded_at() as a Tensor of dtype and shape (the `reference` backend's output).
  Tensor rounded() const;
  /// Records q as element i's rounding; element i's exact value must be stored first. May be
  /// called from several threads for different elements. An entry is never removed: a row
  /// the certified path left to MPFR stores the same q again (the certified roundings are
  /// MPFR's bit for bit), or MPFR's rounding was undecided and the whole problem is evaluated
  /// again into new outputs (ops/common/precision.hpp).
  void set_rounded(std::size_t i, double q);
  /// Whether element i's rounding is its long double's whatever the exact value (to nearest
  /// even in a float format, its binary64 not on a boundary of dtype; element i's exact value
  /// stored first): set_rounded() would keep nothing, and a reference need not form it (for
  /// MPFR it would test no rounding either: those are at boundaries).
  bool rounding_derived(std::size_t i) const;
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

 private:
  /// Element i's long double rounded once to dtype per `rounding`: for RNE from the binary64
  /// and its tail as an unevaluated sum (core/dtype.hpp round_sum_to: no long double work).
  double derived_rounding(std::size_t i) const;
};

/// All outputs of the reference, by name ("y", ...).
using ExactOutputs = std::map<std::string, ExactOutput>;

}  // namespace normcheck
