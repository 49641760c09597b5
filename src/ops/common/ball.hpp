// DDBall: a number type for the reference templates that evaluates in double-double with a
// rigorous error radius, and answers every question (a comparison, a rounding) either with
// the answer the exact value has or by throwing Uncertain. A template instantiated on DDBall
// therefore returns exactly what its MPFR instantiation returns (bit for bit: the roundings to
// the output dtype, to binary64 and to long double; the condition magnitudes, a bound formed
// in binary64 from the midpoints, within (m + 16) 2^-52 relative: row_norm.hpp cond_t) or
// throws; the caller recomputes what threw in MPFR (row_reference.cpp). This is Ziv's strategy (a fast
// evaluation with a proven error bound, the slow one only when the bound cannot decide),
// as CORE-MATH uses it for correctly rounded functions.
//
// Representation: the exact value lies in [m - r, m + r], m = h + l an unevaluated
// double-double (|l| <= ulp(h)/2), r >= 0 a double. An input (a value of any dtype: every
// one is a double) is exact: r = 0.
//
// Error analysis (u = 2^-53; every bound is relative to the exact result of the operation
// on the midpoints; Joldes, Muller, Popescu, "Tight and rigorous error bounds for basic
// building blocks of double-word arithmetic", ACM TOMS 44(2), 2017, hal-01351529v3):
//   a + b   Algorithm 6 (AccurateDWPlusDW): 3u^2 + 13u^3 <= 4u^2 = kAdd;
//           Algorithm 4 (DWPlusFP) when b is a double: 2u^2 <= kAdd.
//   a * b   Algorithm 10 (DWTimesDW1): 7u^2 (+ O(u^3)) <= 8u^2 = kMul;
//           Algorithm 8 (DWTimesFP2) when b is a double: 3u^2 <= kMul.
//   a / b   Algorithm 17 (DWDivDW2): 15u^2 + 56u^3 <= 16u^2 = kDiv.
//   sqrt(a) no published bound is used: the result z is checked a posteriori,
//           |sqrt(a) - z| <= |a - z^2| / z, with a - z^2 evaluated by the two operations above
//           (their own bounds added).
// The radius of a result adds the propagated radii of the operands (interval arithmetic on
// the midpoint-radius form: |x'y' - xy| <= |x| r_y + |y| r_x + r_x r_y, |x'/y' - x/y| <=
// (|x| r_y + |y| r_x) / (|y| (|y| - r_y)), |sqrt(t) - sqrt(a)| <= r_a / sqrt(a)) and the
// operation's own bound; radii are computed in double and then scaled by (1 + 2^-50), which
// covers their own roundings (at most 8 per radius, each <= u relative), and a nonzero radius
// gains kTiny = 2^-1000, which covers the absolute error of an underflow inside them. The
// published bounds hold without underflow or overflow: every operand and result must lie in
// [2^-900, 2^900] in magnitude or be an exact zero, else the operation throws Uncertain (so
// every partial product of a double-double, down to 2^-106 of the result, stays normal).
//
// Exact results have r = 0: an input, T(0); x + 0, 0 * x, 0 / y of exact values; and the
// operations that are error-free on exact operands: a double plus a double-word when the one
// rounding of Algorithm 4 is exact (checked by a TwoSum), the product of two doubles
// (TwoProduct), a quotient of doubles that is a double (th * b = a exactly), the square
// root of a perfect square. So a tie (gamma * round(n) + beta exactly at a midpoint of bf16)
// is decided here as MPFR decides it. Any other computed value has r > 0, so a result that
// is exactly zero in exact arithmetic but not known to be (2 - mean([1, 2, 4]) * 3 / 3...)
// is a ball around 0 whose roundings disagree in sign: it throws, and MPFR decides it.
#pragma once

#if defined(__FAST_MATH__)
#error "the double-double reference needs IEEE arithmetic: do not build it with -ffast-math"
#endif

#include <array>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <limits>

#include "core/dtype.hpp"
#include "spec/exact.hpp"

namespace normcheck::reference {

/// Thrown by a DDBall operation whose answer the error radius cannot decide (a comparison
/// of overlapping balls, a rounding whose interval holds a rounding boundary, a value out of
/// the range where the error bounds hold). Not an error: the caller evaluates in MPFR.
struct Uncertain {
  int line = 0;  ///< where in ball.hpp (for diagnostics)
};

namespace dd {

/// TwoSum (Knuth): s + t = a + b exactly, s = fl(a + b).
inline void two_sum(double a, double b, double& s, double& t) {
  s = a + b;
  const double a1 = s - b, b1 = s - a1;
  t = (a - a1) + (b - b1);
}
/// Fast2Sum (Dekker), for |a| >= |b| or a = 0: s + t = a + b exactly.
inline void fast_two_sum(double a, double b, double& s, double& t) {
  s = a + b;
  t = b - (s - a);
}
/// Whether std::fma is the processor's fused multiply-add (one instruction behind glibc's
/// fma, chosen by its ifunc), decided once per process; false where only a software fma
/// exists (baseline x86-64 without FMA3), where Dekker's product is the faster of the two,
/// and under NORMCHECK_NO_FMA (the test of that path on a CPU with FMA).
inline const bool kHardwareFma = [] {
  if (std::getenv("NORMCHECK_NO_FMA") != nullptr) return false;
#if defined(__FMA__) || defined(__aarch64__)
  return true;
#elif defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("fma") != 0;
#else
  return false;
#endif
}();

/// For a function whose inlined body runs the certified path's arithmetic: NC_BALL_FMA
/// compiles it with FMA enabled and everything it calls inlined (std::fma then inlines to the
/// instruction), NC_BALL_PLAIN as any other function (not flattened: it is the path of a CPU
/// without FMA, and a second flattened copy doubled the compile time of dyt's reference);
/// the caller picks by kHardwareFma (certified_rows.hpp ball_row). Not GCC's
/// target_clones: an exception (Uncertain) thrown in a clone was not caught by its caller (GCC
/// 12 took the dispatcher for nothrow; found by the cli tests).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__FMA__)
#define NC_BALL_DISPATCH 1
#define NC_BALL_FMA __attribute__((target("fma"), flatten, noinline))
#define NC_BALL_PLAIN __attribute__((noinline))
#endif

/// TwoProduct: p + e = a b exactly, p = fl(a b), for |a|, |b| <= 2^995 and |a b| >= 2^-969
/// (no underflow in e). With a hardware FMA, e = fma(a, b, -p): the exact a b - p is a double
/// in that range, so its one rounding is exact; else Dekker's product (Veltkamp's split;
/// the build uses -ffp-contract=off (CMakeLists.txt), so no product is fused). Both return
/// the same exact e, so the choice never changes a result (ball_test compares them); the FMA
/// made dyt's certified reference ~20% faster (issue 15).
inline void two_prod_dekker(double a, double b, double& p, double& e) {
  constexpr double kSplit = 134217729.0;  // 2^27 + 1
  p = a * b;
  const double ca = kSplit * a, ah = ca - (ca - a), al = a - ah;
  const double cb = kSplit * b, bh = cb - (cb - b), bl = b - bh;
  e = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
}
inline void two_prod(double a, double b, double& p, double& e) {
  if (kHardwareFma) {
    p = a * b;
    e = std::fma(a, b, -p);
    return;
  }
  two_prod_dekker(a, b, p, e);
}

/// Whether x0 + (the terms) equals zh + zl exactly, shown by error-free steps: x0 - zh by
/// Sterbenz's lemma, then TwoSums that leave no error, then - zl; false where not shown.
inline bool sum_is(double zh, double zl, double x0, std::initializer_list<double> terms) {
  if (!(x0 / 2 <= zh && zh <= 2 * x0) && !(2 * x0 <= zh && zh <= x0 / 2)) return false;  // Sterbenz's condition
  double acc = x0 - zh, s, t;  // exact
  for (double term : terms) {
    two_sum(acc, term, s, t);
    if (t != 0) return false;
    acc = s;
  }
  two_sum(acc, -zl, s, t);
  return t == 0 && s == 0;
}
/// Whether (zh + zl) b == ah + al exactly (so that zh + zl is the exact quotient). Sufficient,
/// not necessary: true only when every step of the check is error-free (TwoProduct for both
/// products, Sterbenz for ah - p1, and TwoSums that leave no error) and the exact residual
/// is 0; a false answer only means "not shown". For operands in the range DDBall allows.
inline bool exact_product(double zh, double zl, double b, double ah, double al) {
  double p1, e1, p2, e2, s, t;
  two_prod(zh, b, p1, e1);
  two_prod(zl, b, p2, e2);
  if (!(p1 / 2 <= ah && ah <= 2 * p1) && !(2 * p1 <= ah && ah <= p1 / 2)) return false;  // Sterbenz's condition
  double acc = ah - p1;  // exact
  for (double term : {al, -e1, -p2, -e2}) {
    two_sum(acc, term, s, t);
    if (t != 0) return false;
    acc = s;
  }
  return acc == 0;
}

}  // namespace dd

/// A double-double midpoint h + l and a radius r (see the file comment).
class DDBall {
 public:
  /// Condition magnitudes (a bound) from a ball: its midpoint in binary64 (row_norm.hpp cond_t).
  using cond_type = double;
  friend double cond_of(const DDBall& b) { return b.h_; }

  DDBall() = default;
  DDBall(double v) : h_(v) {}  // NOLINT: an exact value, as T(x) for MPFR
  template <std::integral I>
  DDBall(I n) : h_(static_cast<double>(n)) {  // NOLINT: exact for |n| <= 2^53
    if (!(std::fabs(h_) <= 0x1p53)) throw Uncertain{__LINE__};
  }

  /// The ball (mid, 0, radius): for a value the caller has proven to lie within `radius` of
  /// the double `mid` (dyt's saturated tanh). Throws Uncertain outside the bounds' range.
  static DDBall around(double mid, double radius) {
    if (!(radius >= 0)) throw Uncertain{__LINE__};
    return result(mid, 0.0, radius);
  }

  double hi() const { return h_; }
  double lo() const { return l_; }
  double radius() const { return r_; }
  bool exact_zero() const { return h_ == 0 && r_ == 0; }

  /// Correctly rounded conversions (throw Uncertain where the interval holds a boundary).
  explicit operator double() const;
  explicit operator long double() const;
  /// The value rounded once, to nearest-even, to the format t, as round_to(t, exact) does.
  friend double round_to(DType t, const DDBall& x);

  friend DDBall operator-(const DDBall& a) { return DDBall(-a.h_, -a.l_, a.r_); }
  friend DDBall operator+(const DDBall& a, const DDBall& b) { return add(a, b); }
  friend DDBall operator-(const DDBall& a, const DDBall& b) { return add(a, -b); }
  friend DDBall operator*(const DDBall& a, const DDBall& b) { return mul(a, b); }
  friend DDBall operator/(const DDBall& a, const DDBall& b) { return div(a, b); }
  DDBall& operator+=(const DDBall& b) { return *this = add(*this, b); }
  DDBall& operator-=(const DDBall& b) { return *this = add(*this, -b); }
  DDBall& operator*=(const DDBall& b) { return *this = mul(*this, b); }
  DDBall& operator/=(const DDBall& b) { return *this = div(*this, b); }

  /// Order of the exact values; throws Uncertain when the balls overlap (unless both are
  /// the same exact value). NaN compares false, as in MPFR and IEEE.
  friend bool operator<(const DDBall& a, const DDBall& b) { return sign_of(a - b) < 0; }
  friend bool operator>(const DDBall& a, const DDBall& b) { return sign_of(a - b) > 0; }
  friend bool operator<=(const DDBall& a, const DDBall& b) { return sign_of(a - b) <= 0 && !unordered(a, b); }
  friend bool operator>=(const DDBall& a, const DDBall& b) { return sign_of(a - b) >= 0 && !unordered(a, b); }

  friend DDBall sqrt(const DDBall& a);
  friend DDBall exp(const DDBall& z);
  template <int N>
  friend void exp_n(const DDBall* z, DDBall* out);
  friend DDBall expm1(const DDBall& z);
  friend bool row_moments(const DDBall* x, std::int64_t m, bool center, std::int64_t dof, DDBall& mu, DDBall& v, DDBall* d);
  friend DDBall abs(const DDBall& a) {
    if (std::signbit(a.h_) || (a.h_ == 0 && a.r_ > 0)) return a.h_ == 0 ? DDBall(0.0, 0.0, a.r_) : -a;
    return a;
  }
  friend DDBall fabs(const DDBall& a) { return abs(a); }
  /// a 2^k (k in [-1022, 1023]) without an operation's error: a scaling by a power of two is
  /// exact while every part stays normal (else Uncertain; NaN, inf and 0 pass through).
  friend DDBall ldexp(const DDBall& a, int k) {
    if (!std::isfinite(a.h_) || a.exact_zero()) return DDBall(a.h_ * ::normcheck::detail::pow2(k), a.l_, a.r_);
    const double s = ::normcheck::detail::pow2(k), h = a.h_ * s, l = a.l_ * s;
    if (a.l_ != 0 && !(std::fabs(l) >= 0x1p-1022)) throw Uncertain{__LINE__};  // l lost bits (or all of them)
    return a.r_ == 0 ? exact(h, l) : result(h, l, a.r_ * s);
  }
  friend bool isfinite(const DDBall& a) { return std::isfinite(a.h_); }
  friend bool isnan(const DDBall& a) { return std::isnan(a.h_); }
  friend bool isinf(const DDBall& a) { return std::isinf(a.h_); }

 private:
  DDBall(double h, double l, double r) : h_(h), l_(l), r_(r) {}

  static constexpr double kAdd = 0x1p-104, kMul = 0x1p-103, kDiv = 0x1p-102;
  static constexpr double kUp = 1 + 0x1p-50, kDown = 1 - 0x1p-50, kTiny = 0x1p-1000;
  static constexpr double kMin = 0x1p-900, kMax = 0x1p900;

  /// An upper bound of |h + l|.
  double mag() const { return std::fabs(h_) * (1 + 0x1p-52); }
  static bool nan2(const DDBall& a, const DDBall& b) { return std::isnan(a.h_) || std::isnan(b.h_); }
  static bool unordered(const DDBall& a, const DDBall& b) { return nan2(a, b); }
  static void operand(const DDBall& a) {
    if (!(std::fabs(a.h_) <= kMax)) throw Uncertain{__LINE__};
  }
  /// A computed result (h, l) with radius bound r (before the scaling of the radius).
  static DDBall result(double h, double l, double r) {
    const double ah = std::fabs(h);  // NaN or inf from finite operands (an overflow inside) fails the test too
    if (!(ah <= kMax) || (ah < kMin && !(h == 0 && l == 0)) || !(r < HUGE_VAL)) throw Uncertain{__LINE__};
    return DDBall(h, l, r * kUp + kTiny);
  }
  /// An exactly computed result (h, l): radius 0, the same range rule.
  static DDBall exact(double h, double l) {
    const double ah = std::fabs(h);
    if (!(ah <= kMax) || (ah < kMin && !(h == 0 && l == 0)) || !std::isfinite(l)) throw Uncertain{__LINE__};
    return DDBall(h, l, 0.0);
  }
  static DDBall nan() { return DDBall(NAN, 0.0, 0.0); }
  /// -1, 0 or 1: the sign of the exact value; throws Uncertain if the ball holds 0 and is not
  /// exactly 0; 2 for NaN (every comparison with it is false).
  static int sign_of(const DDBall& d) {
    if (std::isnan(d.h_)) return 2;
    if (d.exact_zero()) return 0;
    if (std::fabs(d.h_) * (1 - 0x1p-52) > d.r_ * kUp) return d.h_ < 0 ? -1 : 1;
    throw Uncertain{__LINE__};
  }

  static DDBall add(const DDBall& a, const DDBall& b);
  static DDBall mul(const DDBall& a, const DDBall& b);
  static DDBall div(const DDBall& a, const DDBall& b);
  template <int N>
  static void horner_inv_factorials_n(DDBall* p, const DDBall* r, int hi, int lo);
  template <int N>
  static void factorial_series_n(const DDBall* w, int lo, int dd_hi, int top, double slope, double konst, DDBall* out);
  static DDBall factorial_series(const DDBall& w, int lo, int dd_hi, int top, double slope, double konst) {
    DDBall o;
    factorial_series_n<1>(&w, lo, dd_hi, top, slope, konst, &o);
    return o;
  }

  double h_ = 0, l_ = 0, r_ = 0;
};

inline DDBall DDBall::add(const DDBall& a, const DDBall& b) {
  if (nan2(a, b)) return nan();
  if (b.exact_zero() && !a.exact_zero()) return a;
  if (a.exact_zero() && !b.exact_zero()) return b;
  if (a.exact_zero() && b.exact_zero()) return DDBall(a.h_ + b.h_);  // IEEE's sign of 0 + 0
  operand(a); operand(b);
  double zh, zl;
  if (b.l_ == 0 || a.l_ == 0) {  // Algorithm 4: a double-word plus a double
    const DDBall& w = b.l_ == 0 ? a : b;
    const double d = b.l_ == 0 ? b.h_ : a.h_;
    double sh, sl, v, ve;
    dd::two_sum(w.h_, d, sh, sl);
    dd::two_sum(w.l_, sl, v, ve);  // v = fl(w.l + sl), as Algorithm 4; ve its error
    dd::two_sum(sh, v, zh, zl);    // where Algorithm 4's Fast2Sum is exact, this is the same
    // Exact operands and no error in v: the sum is exact (both TwoSums are error-free).
    if (ve == 0 && a.r_ == 0 && b.r_ == 0) return exact(zh, zl);
  } else {  // Algorithm 6
    double sh, sl, th, tl, vh, vl;
    dd::two_sum(a.h_, b.h_, sh, sl);
    dd::two_sum(a.l_, b.l_, th, tl);
    dd::fast_two_sum(sh, sl + th, vh, vl);
    dd::fast_two_sum(vh, tl + vl, zh, zl);
  }
  return result(zh, zl, a.r_ + b.r_ + kAdd * std::fabs(zh) * (1 + 0x1p-52));
}

inline DDBall DDBall::mul(const DDBall& a, const DDBall& b) {
  if (nan2(a, b)) return nan();
  if (a.exact_zero() || b.exact_zero()) {
    if (!std::isfinite(a.h_) || !std::isfinite(b.h_)) return nan();
    // An exact 0 with IEEE's sign, which needs the other factor's sign for certain: a ball
    // whose midpoint is +0 may hold a negative exact value (0 * (x - mean) with the mean's
    // 2^-300 part lost gave +0 for MPFR's -0; found by a hunt).
    if (!a.exact_zero()) (void)sign_of(a);
    if (!b.exact_zero()) (void)sign_of(b);
    return DDBall(a.h_ * b.h_);
  }
  operand(a); operand(b);
  double ch, cl1, zh, zl;
  dd::two_prod(a.h_, b.h_, ch, cl1);
  // Two exact doubles: TwoProduct is error-free (the range check of exact() keeps e normal).
  if (a.l_ == 0 && b.l_ == 0 && a.r_ == 0 && b.r_ == 0) {
    if (ch == 0) throw Uncertain{__LINE__};  // nonzero operands: an underflow
    return exact(ch, cl1);
  }
  const double cl2 = a.h_ * b.l_ + a.l_ * b.h_;  // Algorithm 10 (Algorithm 8 when a.l or b.l is 0)
  dd::fast_two_sum(ch, cl1 + cl2, zh, zl);
  if (zh == 0 && a.h_ != 0 && b.h_ != 0) throw Uncertain{__LINE__};  // nonzero midpoints: an underflow
  // An exact double-double times an exact double whose product is a double-double (1, a power
  // of two, a short factor): exact where error-free steps show zh + zl = (w_h + w_l) d, i.e.
  // (ch - zh) + cl1 + p2 + e2 - zl = 0 with w_l d = p2 + e2 by TwoProduct (no underflow in e2:
  // |p2| >= 2^-969). Without it, batch_norm's running mean 1 * mu of a binary64 mean that was
  // exactly a long double tie became a ball, which no rounding of it could decide (the whole
  // problem went to MPFR).
  if (a.r_ == 0 && b.r_ == 0 && (a.l_ == 0 || b.l_ == 0)) {
    const double wl = a.l_ == 0 ? b.l_ : a.l_, d = a.l_ == 0 ? a.h_ : b.h_;
    double p2, e2;
    dd::two_prod(wl, d, p2, e2);
    if ((wl == 0 || std::fabs(p2) >= 0x1p-969) && dd::sum_is(zh, zl, ch, {cl1, p2, e2})) return exact(zh, zl);
  }
  const double ma = a.mag(), mb = b.mag();
  return result(zh, zl, ma * b.r_ + mb * a.r_ + a.r_ * b.r_ + kMul * std::fabs(zh) * (1 + 0x1p-52));
}

inline DDBall DDBall::div(const DDBall& a, const DDBall& b) {
  if (nan2(a, b)) return nan();
  if (b.exact_zero()) {  // +-inf, or NaN for 0/0, as IEEE and MPFR: needs a's sign for certain
    if (a.exact_zero() || !std::isfinite(a.h_)) return a.exact_zero() ? nan() : DDBall(a.h_ / b.h_);
    return DDBall((sign_of(a) < 0) != static_cast<bool>(std::signbit(b.h_)) ? -INFINITY : INFINITY);
  }
  const double bmin = std::fabs(b.h_) * (1 - 0x1p-52);  // a lower bound of |b_mid|
  if (!(bmin * kDown > b.r_ * kUp)) throw Uncertain{__LINE__};  // b's ball may hold 0
  if (a.exact_zero()) return DDBall(a.h_ / b.h_);
  operand(a); operand(b);
  // Algorithm 17: th = ah / bh, minus b th by Algorithm 7, the remainder over bh.
  const double th = a.h_ / b.h_;
  double ph, pl1, ph2, pl2, rh, rl, zh, zl;
  dd::two_prod(th, b.h_, ph, pl1);
  // Two exact doubles whose quotient is a double (th bh = ah exactly): exact.
  if (a.l_ == 0 && b.l_ == 0 && a.r_ == 0 && b.r_ == 0 && ph == a.h_ && pl1 == 0) return exact(th, 0.0);
  dd::fast_two_sum(ph, b.l_ * th, ph2, pl2);
  dd::fast_two_sum(ph2, pl2 + pl1, rh, rl);
  const double pi_h = a.h_ - rh;  // exact (Sterbenz)
  const double delta = pi_h + (a.l_ - rl);
  dd::fast_two_sum(th, delta / b.h_, zh, zl);
  if (zh == 0 && a.h_ != 0) throw Uncertain{__LINE__};  // a nonzero quotient that underflowed
  if (a.r_ == 0 && b.r_ == 0 && b.l_ == 0 && dd::exact_product(zh, zl, b.h_, a.h_, a.l_)) return exact(zh, zl);
  const double ma = a.mag();
  double prop = 0;
  if (a.r_ > 0 || b.r_ > 0) prop = (ma * b.r_ + std::fabs(b.h_) * (1 + 0x1p-52) * a.r_) * kUp / ((bmin - b.r_ * kUp) * bmin * kDown);
  return result(zh, zl, prop + kDiv * std::fabs(zh) * (1 + 0x1p-52));
}

inline DDBall sqrt(const DDBall& a) {
  if (std::isnan(a.h_)) return a;
  if (a.exact_zero()) return a;  // sqrt(+-0) = +-0
  if (!(a.h_ > 0) || !(a.h_ * (1 - 0x1p-52) > a.r_ * DDBall::kUp)) {
    if (a.h_ < 0 && a.r_ == 0) return DDBall::nan();  // an exact negative: NaN, as MPFR
    throw Uncertain{__LINE__};                                 // the ball may hold negatives
  }
  DDBall::operand(a);
  // z ~ sqrt(a): one Newton step from the double square root (exactness is not needed:
  // the error of z is bounded below).
  const double s = std::sqrt(a.h_);
  double p, e, zh, zl;
  dd::two_prod(s, s, p, e);
  if (a.l_ == 0 && a.r_ == 0 && p == a.h_ && e == 0) return DDBall::exact(s, 0.0);  // a perfect square
  dd::fast_two_sum(s, (((a.h_ - p) - e) + a.l_) / (2 * s), zh, zl);
  const DDBall z(zh, zl, 0.0);
  // |a - z^2| <= |d| + kAdd |d| + kMul z^2, d = a - z*z evaluated with those two bounds.
  const DDBall q = DDBall::mul(z, z), d = DDBall::add(DDBall(a.h_, a.l_, 0.0), -DDBall(q.h_, q.l_, 0.0));
  const double res = (std::fabs(d.h_) * (1 + 0x1p-51) + DDBall::kMul * std::fabs(q.h_) * (1 + 0x1p-51)) * DDBall::kUp;
  const double zmin = zh * (1 - 0x1p-52);
  const double err = res / zmin * DDBall::kUp;                    // |sqrt(a_mid) - z|
  if (!(zmin - err > 0)) throw Uncertain{__LINE__};
  const double prop = a.r_ / ((zmin - err) * DDBall::kDown) * DDBall::kUp;  // r_a / sqrt(a_mid)
  return DDBall::result(zh, zl, err + prop);
}


/// exp and expm1 of a ball (for tanh and cosh: dyt's reference). The steps that round are
/// DDBall operations (each carries its own bound and its operands' radii); the errors that are
/// not such roundings are bounded below and added to a radius:
///   reduction   z = (256 q + j) ln2/256 + r, k = 256 q + j = nearest integer to z_mid 256/ln2
///               (|k| <= 221,600; j in [0, 256)), r = z - k L, L = ln2/256 as a double-double
///               ball (CRlibm's ln2 double-double, 0x1.62e42fefa39efp-1 + 0x1.abc9e3b39803fp-56,
///               within 5.8e-34 of ln2, divided by 256: radius 2^-117), so r's ball holds
///               z - k ln2/256; checked |r_mid| <= 0.00136 (ln2/512 = 0.001354 plus the
///               roundings of k's product), and rho = |r_h| + |r_l| + r_r <= 0.00137.
///   table       2^(j/256) as balls: 2^(2^-i), i = 1..8, by repeated DDBall square roots from
///               2, and their products over j's set bits (<= 8 DDBall products), built once.
///   polynomial  exp(r) = c0 + r (c1 + r (c2 + r (c3 + r (c4 + r Q(r))))), c_n = 1/n! as the
///               balls inv_factorial(n), Q(r) = sum_{n >= 5} r^(n-5) / n!. Those five steps are
///               DDBall operations; Q is evaluated in binary64 from r_h alone (Horner on the
///               doubles of c9..c5: qd) and enters as the ball (qd, radius E_Q), which holds
///               Q(r') for every r' in r's ball:
///                 |Q(r') - Q(r_h)| <= (|r_l| + r_r) sup|Q'| <= (|r_l| + r_r) 2^-9 (1/6! (1 + 2 rho));
///                 the series past n = 9: <= 2 rho^5 / 10! <= 2^-68;
///                 the doubles of c_n (within 2^-52 c_n of 1/n!): <= 2^-52 (1/5!)(1.002) <= 2^-58.9;
///                 Horner in binary64 (degree 4): <= gamma_8 (1/5!)(1.002) <= 2^-56.9 (Higham
///                 2002, 5.3);
///               so E_Q = (|r_l| + r_r) 2^-9 + 2^-56 (the three constants sum below 2^-56.5).
///               Q's error reaches exp(r) times r^5 <= 2^-47.5: below 2^-103.
///   result      exp(r) 2^(j/256) (a DDBall product) times 2^q: an exact scaling of the
///               midpoint and the radius (within range, else Uncertain).
///   expm1       for |z_mid| < 1/64: z E(z), E(z) = sum_{n >= 1} z^(n-1) / n! = c1 + z (c2 + ...
///               + z (c7 + z R(z))), the seven steps as DDBall operations and R(z) = sum_{n >= 8}
///               z^(n-8) / n! in binary64 from z_h (Horner on c14..c8), the ball (rd, E_R),
///               with rho <= 1/64 + 2^-20: (|z_l| + z_r) sup|R'| <= (|z_l| + z_r) 2^-18; past
///               n = 14: <= 2 rho^7 / 15! <= 2^-81; coefficients: <= 2^-52 (1/8!)(1.01) <= 2^-67;
///               Horner (degree 6): <= gamma_12 (1/8!)(1.002) <= 2^-64.7; E_R = (|z_l| + z_r)
///               2^-18 + 2^-64, reaching E(z) times z^7 <= 2^-41.9. Otherwise exp(z) - 1: its
///               cancellation costs at most 6 bits there (|expm1 z| >= 0.0155).
/// Throws Uncertain outside |z| <= 600 (2^865: results stay in the range of the bounds) and
/// where z's radius exceeds 2^-20 (a ball that wide decides nothing downstream).
/// 1/n! for n <= 25 as balls (1/n = 1 / n, then products: each a DDBall operation, so the
/// radii hold the exact values), computed once.
inline const DDBall& inv_factorial(int n) {
  static const std::array<DDBall, 26> table = [] {
    std::array<DDBall, 26> t{};
    t[0] = DDBall(1.0);
    for (int k = 1; k < 26; ++k) t[static_cast<std::size_t>(k)] = t[static_cast<std::size_t>(k - 1)] / DDBall(k);
    return t;
  }();
  return table[static_cast<std::size_t>(n)];
}

/// 2^(j/256) for j in [0, 256) as balls (exp's table, built once; see above).
inline const DDBall& exp2_256th(int j) {
  static const std::array<DDBall, 256> table = [] {
    std::array<DDBall, 8> f{};  // f[i] = 2^(2^i / 256)
    DDBall root = DDBall(2.0);
    for (int i = 7; i >= 0; --i) f[static_cast<std::size_t>(i)] = root = sqrt(root);
    std::array<DDBall, 256> t{};
    for (int k = 0; k < 256; ++k) {
      DDBall v(1.0);
      for (int i = 0; i < 8; ++i)
        if (k >> i & 1) v = v * f[static_cast<std::size_t>(i)];
      t[static_cast<std::size_t>(k)] = v;
    }
    return t;
  }();
  return table[static_cast<std::size_t>(j)];
}

/// sum_{n >= lo} w^(n - lo) / n! as a ball (exp's and expm1's polynomials): the terms from
/// n = dd_hi + 1 to top by Horner in binary64 on w_h and the doubles of 1/n!, entering as a
/// ball of radius (|w_l| + w_r) slope + konst (the caller's bound on that part's error, the
/// series past `top` included, for every member of w's ball), then horner_inv_factorials down
/// to lo. N series side by side (w[0..N), into out[0..N)): the same steps on each, interleaved.
template <int N>
inline void DDBall::factorial_series_n(const DDBall* w, int lo, int dd_hi, int top, double slope, double konst, DDBall* out) {
  const DDBall* c = &inv_factorial(0);  // the table's 26 balls
  for (int k = 0; k < N; ++k) {
    double t = c[top].h_;
    for (int n = top - 1; n > dd_hi; --n) t = t * w[k].h_ + c[n].h_;
    out[k] = DDBall(t, 0.0, ((std::fabs(w[k].l_) + w[k].r_) * slope + konst) * kUp);
  }
  horner_inv_factorials_n<N>(out, w, dd_hi, lo);
}

/// Horner on the balls 1/n!: p <- p r + inv_factorial(n) for n = hi, hi - 1, ..., lo (exp's and
/// expm1's polynomials). Each step is mul's Algorithm 10 and add's Algorithm 6 with their
/// radii, as those operations compute them (Algorithm 6 also where an operand's low part is 0:
/// its bound holds for any double-word), without their per-step tests: the range they check
/// (every operand and result in [2^-900, 2^900] or exactly 0) holds for every step when
/// r_h = r_l = 0 or 2^-400 <= |r_h| <= 2^-5 (r_r <= 2^-20), and 2^-60 <= p_h <= 2 c_(hi+1)
/// (c_n = 1/n!) with p_r <= 2^-40, checked once: by induction p_(n+1) <= 2 c_(n+1), so
/// |p r| <= 2^-4 c_(n+1) (1 + 2^-19) <= c_n / 8 and each sum lies in [c_n / 2, 2 c_n] with
/// c_n >= 1/25! > 2^-84; each product lies in [2^-485, 1] or is exactly 0. The absolute
/// error of an underflow in a low part's product is covered by kTiny, as in mul. Otherwise
/// the generic operations run. N polynomials side by side (p[k] with r[k]): each step runs for
/// every k before the next step, so the N independent latency chains overlap (dyt's pairs);
/// each k's arithmetic is exactly the N = 1 sequence.
template <int N>
inline void DDBall::horner_inv_factorials_n(DDBall* p, const DDBall* r, int hi, int lo) {
  const auto fast_ok = [&](int k) {
    const bool r_ok = (r[k].h_ == 0 && r[k].l_ == 0) || (std::fabs(r[k].h_) >= 0x1p-400 && std::fabs(r[k].h_) <= 0x1p-5);
    return hi < 25 && r_ok && p[k].h_ >= 0x1p-60 && p[k].h_ <= 2 * inv_factorial(hi + 1).h_ && p[k].r_ <= 0x1p-40 && r[k].r_ <= 0x1p-20;
  };
  bool all = true;
  for (int k = 0; k < N; ++k) all = all && fast_ok(k);
  if (!all) {
    for (int k = 0; k < N; ++k) {
      if constexpr (N > 1) {
        if (fast_ok(k)) {
          horner_inv_factorials_n<1>(p + k, r + k, hi, lo);
          continue;
        }
      }
      for (int n = hi; n >= lo; --n) p[k] = p[k] * r[k] + inv_factorial(n);
    }
    return;
  }
  const DDBall* cs = &inv_factorial(0);  // the table's 26 balls
  double mr[N], h[N], l[N], rad[N];
  for (int k = 0; k < N; ++k) {
    mr[k] = std::fabs(r[k].h_) * (1 + 0x1p-52);
    h[k] = p[k].h_;
    l[k] = p[k].l_;
    rad[k] = p[k].r_;
  }
  for (int n = hi; n >= lo; --n) {
    const DDBall& c = cs[n];
    for (int k = 0; k < N; ++k) {
      // mul(p, r): Algorithm 10
      double ch, cl1, ph, pl;
      dd::two_prod(h[k], r[k].h_, ch, cl1);
      dd::fast_two_sum(ch, cl1 + (h[k] * r[k].l_ + l[k] * r[k].h_), ph, pl);
      const double pr = (std::fabs(h[k]) * (1 + 0x1p-52) * r[k].r_ + mr[k] * rad[k] + rad[k] * r[k].r_ + kMul * std::fabs(ph) * (1 + 0x1p-52)) * kUp + kTiny;
      // add(p r, c_n): Algorithm 6
      double sh, sl, th, tl, vh, vl;
      dd::two_sum(ph, c.h_, sh, sl);
      dd::two_sum(pl, c.l_, th, tl);
      dd::fast_two_sum(sh, sl + th, vh, vl);
      dd::fast_two_sum(vh, tl + vl, h[k], l[k]);
      rad[k] = (pr + c.r_ + kAdd * std::fabs(h[k]) * (1 + 0x1p-52)) * kUp + kTiny;
    }
  }
  for (int k = 0; k < N; ++k) p[k] = DDBall(h[k], l[k], rad[k]);
}

/// exp of N balls side by side: out[k] = exp(z[k]), the same steps and bits as N calls of exp,
/// with the polynomials' double-double chains interleaved (horner_inv_factorials_n) so that
/// their latencies overlap (dyt evaluates pairs, issue 15). Throws Uncertain where any
/// element's exp would.
template <int N>
inline void exp_n(const DDBall* z, DDBall* out) {
  const DDBall L(0x1.62e42fefa39efp-9, 0x1.abc9e3b39803fp-64, 0x1p-117);
  DDBall r[N];
  double kd[N];
  bool special[N];
  for (int k = 0; k < N; ++k) {
    special[k] = std::isnan(z[k].h_) || z[k].exact_zero();
    kd[k] = 0;
    if (special[k]) {  // NaN stays NaN, exp(+-0) = 1; r = 0 runs through the shared steps unused
      out[k] = std::isnan(z[k].h_) ? z[k] : DDBall(1.0);
      r[k] = DDBall(0.0);
      continue;
    }
    if (!(std::fabs(z[k].h_) <= 600) || !(z[k].r_ <= 0x1p-20)) throw Uncertain{__LINE__};
    kd[k] = std::nearbyint(z[k].h_ * 369.3299304675746);  // 256 / ln2 (any k: r is checked)
    r[k] = kd[k] == 0 ? z[k] : z[k] - DDBall(kd[k]) * L;
    if (!(std::fabs(r[k].h_) <= 0.00136)) throw Uncertain{__LINE__};
  }
  DDBall p[N];
  DDBall::factorial_series_n<N>(r, 0, 4, 9, 0x1p-9, 0x1p-56, p);  // E_Q above
  for (int k = 0; k < N; ++k) {
    if (special[k]) continue;
    const auto kk = static_cast<std::int64_t>(kd[k]);
    const int j = static_cast<int>(kk & 255);
    const int q = static_cast<int>((kk - j) / 256);
    const DDBall pj = p[k] * exp2_256th(j);
    // |q| <= 866: 2^q is a normal double, so each product is ldexp's correctly rounded scaling
    // (exact unless it underflows, whose absolute error result()'s kTiny covers, as before).
    const double s = ::normcheck::detail::pow2(q);
    out[k] = DDBall::result(pj.h_ * s, pj.l_ * s, pj.r_ * s);
  }
}

inline DDBall exp(const DDBall& z) {
  DDBall out;
  exp_n<1>(&z, &out);
  return out;
}

inline DDBall expm1(const DDBall& z) {
  if (std::isnan(z.h_)) return z;
  if (z.exact_zero()) return z;  // expm1(+-0) = +-0
  if (!(std::fabs(z.h_) < 0.015625)) return exp(z) - DDBall(1.0);
  if (!(z.r_ <= 0x1p-20)) throw Uncertain{__LINE__};
  return z * DDBall::factorial_series(z, 1, 7, 14, 0x1p-18, 0x1p-64);  // E_R above
}

/// tanh(z) = expm1(2z) / (expm1(2z) + 2) for |z| <= 1, sign(z) (1 - e^(-2|z|)) / (1 + e^(-2|z|))
/// beyond; cosh(z) = (e^z + e^-z) / 2, by the operations above (each carries its own bound;
/// the identities are exact).
inline DDBall tanh(const DDBall& z) {
  if (std::isnan(z.hi()) || z.exact_zero()) return z;
  if (std::isinf(z.hi())) return DDBall(z.hi() > 0 ? 1.0 : -1.0);
  if (std::fabs(z.hi()) <= 1) {
    const DDBall e = expm1(DDBall(2.0) * z);
    return e / (e + DDBall(2.0));
  }
  // |z| > 1: tanh |z| = (1 - E) / (1 + E), E = e^(-2|z|) <= e^-2 (no overflow in the radii, no
  // cancellation); z's sign is certain (exp refuses a radius over 2^-20).
  const DDBall E = exp(DDBall(-2.0) * abs(z));
  const DDBall t = (DDBall(1.0) - E) / (DDBall(1.0) + E);
  return z.hi() < 0 ? -t : t;
}
inline DDBall cosh(const DDBall& z) {
  if (std::isnan(z.hi())) return z;
  if (std::isinf(z.hi())) return DDBall(INFINITY);
  if (z.exact_zero()) return DDBall(1.0);
  const DDBall e = exp(z);
  return (e + DDBall(1.0) / e) * DDBall(0.5);
}

/// The moments of a group of m exact doubles for normalize_group (row_norm.hpp row_moments):
/// mu = (1/m) sum x (0 unless center), d_j = x_j - mu, v = (1/dof) sum d_j^2, as balls that
/// hold the exact values, in fused loops without the generic operations' per-step radii.
/// Returns false (the caller runs the generic loops) unless every x_j is an exact double
/// (r = l = 0) with |x_j| in [2^-400, 2^400] or 0, and m <= 2^40; throws Uncertain where a
/// result leaves the range of the bounds (as the generic operations do).
///
/// Error analysis (u = 2^-53; JMP 2017 as in the file comment):
///   sum    S_k = S_(k-1) + x_k by Algorithm 4 (the last Fast2Sum as a TwoSum: the same
///          result where it is exact): |S_k - (S_(k-1) + x_k)| <= 2u^2 |S_k|, so the sum of
///          m doubles errs by <= 2u^2 sum_k |S_k|; 0 when no step rounded (every TwoSum
///          error-free), as the generic add decides. mu = S / m by the generic division.
///   d_j    x_j - mu_mid by Algorithm 4: |d_j - d*_j| <= rho_j = r_mu + 4u^2 |d_j| with
///          d*_j = x_j - mu the exact value (4u^2 covers Algorithm 4's 2u^2 relative to the
///          exact difference and the step to |d_j|).
///   q_j    d_j^2 by Algorithm 10: <= 8u^2 d_j^2 (7u^2 + O(u^3)).
///   ss     sum q_j by Algorithm 6: <= 4u^2 sum_k P_k (P_k the partial sums, all >= 0).
///   total  |ss - sum d*_j^2| <= sum_j (2 |d_j| rho_j + rho_j^2) + 8u^2 sum d_j^2 + 4u^2 sum P_k
///          <= 2 r_mu A1 + 2 m r_mu^2 + 17u^2 A2 + 4u^2 A3,
///          A1 = sum |d_j|, A2 = sum d_j^2, A3 = sum P_k (2 |d_j| 4u^2|d_j| = 8u^2 d_j^2 and
///          rho_j^2 <= 2 r_mu^2 + 32u^4 d_j^2 fold into 17u^2 A2). A1, A2, A3 are summed in
///          double from the midpoints' high parts: each within (m + 2) 2^-52 relative of the
///          sums of the exact magnitudes, so the bound is scaled by 1 + (m + 4) 2^-51.
///   v      ss / dof by the generic division.
inline bool row_moments(const DDBall* x, std::int64_t m, bool center, std::int64_t dof, DDBall& mu, DDBall& v, DDBall* d) {
  if (m <= 0 || m > (std::int64_t{1} << 40)) return false;
  for (std::int64_t j = 0; j < m; ++j) {
    const double a = std::fabs(x[j].h_);
    if (x[j].l_ != 0 || x[j].r_ != 0 || !(a <= 0x1p400) || (a != 0 && a < 0x1p-400)) return false;
  }
  constexpr double u2 = 0x1p-106;
  const double scale = 1 + static_cast<double>(m + 4) * 0x1p-51;
  mu = DDBall(0.0);
  if (center) {
    double sh = 0, sl = 0, partial = 0;
    bool exact = true;
    for (std::int64_t j = 0; j < m; ++j) {
      double s, t, w, we;
      dd::two_sum(sh, x[j].h_, s, t);
      dd::two_sum(sl, t, w, we);
      dd::two_sum(s, w, sh, sl);
      exact = exact && we == 0;
      partial += std::fabs(sh);
    }
    const DDBall sum = exact ? DDBall::exact(sh, sl) : DDBall::result(sh, sl, 2 * u2 * partial * (1 + 0x1p-51) * scale);
    mu = sum / DDBall(m);
  }
  const double mh = mu.h_, ml = mu.l_, rmu = mu.r_;
  double qh = 0, ql = 0, a1 = 0, a2 = 0, a3 = 0;
  for (std::int64_t j = 0; j < m; ++j) {
    double s, t, w, we, dh, dl;
    dd::two_sum(x[j].h_, -mh, s, t);
    dd::two_sum(-ml, t, w, we);
    dd::two_sum(s, w, dh, dl);
    if (x[j].h_ == 0 && mu.exact_zero()) dh = x[j].h_ + -mh;  // 0 - 0: IEEE's sign (-0 - +0 = -0), as the generic add
    const double adh = std::fabs(dh);
    if (!(adh <= 0x1p440) || (adh < 0x1p-440 && !(dh == 0 && dl == 0))) throw Uncertain{__LINE__};
    const double rd = rmu + (we == 0 ? 0.0 : 4 * u2 * adh * (1 + 0x1p-51));
    d[j] = rd == 0 ? DDBall(dh, dl, 0.0) : DDBall(dh, dl, rd * DDBall::kUp + DDBall::kTiny);
    double ph, pl;  // d_j^2, Algorithm 10
    dd::two_prod(dh, dh, ph, pl);
    dd::fast_two_sum(ph, pl + 2 * (dh * dl), ph, pl);
    double sh, sl, th, tl, vh, vl;  // (qh, ql) += (ph, pl), Algorithm 6
    dd::two_sum(qh, ph, sh, sl);
    dd::two_sum(ql, pl, th, tl);
    dd::fast_two_sum(sh, sl + th, vh, vl);
    dd::fast_two_sum(vh, tl + vl, qh, ql);
    a1 += adh;
    a2 += ph;
    a3 += qh;
  }
  const double r_ss = (2 * rmu * a1 * (1 + 0x1p-51) + 2 * static_cast<double>(m) * rmu * rmu + 17 * u2 * a2 + 4 * u2 * a3) * scale;
  const DDBall ss = qh == 0 && ql == 0 && r_ss == 0 ? DDBall(0.0) : DDBall::result(qh, ql, r_ss);
  v = ss / DDBall(dof);
  return true;
}

namespace dd {

/// Calls round(h, l) on both outward endpoints of x as normalized pairs and returns the
/// common result; throws Uncertain if they differ (in value or in the sign of a zero).
/// Sound for any rounding that is monotone on the pair's exact value.
template <class R, class F>
R certain(const DDBall& x, F&& round) {
  if (x.radius() == 0 || std::isnan(x.hi())) return round(x.hi(), x.lo());
  // Widen by the error of forming each endpoint (<= 2u^2 of |h|, here 2^-100).
  const double rr = (x.radius() + std::fabs(x.hi()) * 0x1p-100) * (1 + 0x1p-52);
  double s, t, eh, el;
  two_sum(x.hi(), -rr, s, t);
  two_sum(s, t + x.lo(), eh, el);
  const R down = round(eh, el);
  two_sum(x.hi(), rr, s, t);
  two_sum(s, t + x.lo(), eh, el);
  const R up = round(eh, el);
  if (!(down == up) || std::signbit(static_cast<double>(down)) != std::signbit(static_cast<double>(up))) throw Uncertain{__LINE__};
  return down;
}

}  // namespace dd

inline DDBall::operator double() const {
  return dd::certain<double>(*this, [](double h, double) { return h; });  // two_sum's s = RN(s + t)
}
namespace dd {

/// h rounded to nearest-even to a significand of p <= 52 bits (binary64's exponent range: the
/// format's rounding of h wherever that result is normal in the format and within its range),
/// by integer arithmetic on h's bits: add half a unit less one plus the kept last bit, then
/// clear the 53 - p low bits (a carry out of the significand moves into the exponent, as it
/// should). For finite normal h only.
inline double round_significand(double h, int p) {
  std::uint64_t b;
  std::memcpy(&b, &h, sizeof b);
  const int drop = 53 - p;
  b += ((std::uint64_t{1} << (drop - 1)) - 1) + ((b >> drop) & 1);
  b &= ~((std::uint64_t{1} << drop) - 1);
  double c;
  std::memcpy(&c, &b, sizeof c);
  return c;
}

/// Whether every point of the ball h + l +- r rounds, to nearest, to the candidate c of a
/// float format of `precision` <= 53 bits (c: the caller's rounding of h; h itself for
/// binary64), decided without certain()'s two endpoint roundings. False (not decided) unless
/// |c| lies in [min_normal, max_finite] and is not a power of two (whose spacing differs on
/// its two sides), and |(h - c) + l| + r < spacing(c) / 2 strictly: inside that open interval
/// every point rounds to c and no tie is reachable. Margins: h - c is exact (Sterbenz: c is
/// h's rounding, within a factor 2), the sum with l errs by at most 2^-53 of |o|, and both
/// terms are scaled by 1 + 2^-50, which covers that and the test's own roundings.
inline bool quick_decides(double h, double l, double r, double c, int precision, double min_normal, double max_finite) {
  const double ac = std::fabs(c);
  if (!(ac >= min_normal && ac <= max_finite)) return false;
  const int e = ::normcheck::detail::frexp_exponent(ac);         // |c| in [2^(e-1), 2^e)
  if (ac == ::normcheck::detail::pow2(e - 1)) return false;       // a power of two: a narrower spacing below
  const double half = ::normcheck::detail::pow2(e - precision - 1);
  const double o = (h - c) + l;
  return std::fabs(o) * (1 + 0x1p-50) + r * (1 + 0x1p-50) < half;
}

}  // namespace dd

inline DDBall::operator long double() const {
  // Quick decision: c = RN64(h + l) (both halves are exact in long double: one rounding);
  // c - h is exact (Sterbenz) and o = (h + l) - c, the rounding error of a double-word's
  // rounding, is a long double, so the subtraction returns it exactly. Every point within r
  // of h + l rounds to c when |o| + r is below half of c's spacing 2^(e-64) (c not a power
  // of two; c normal in binary64's range), as in quick_decides.
  if (r_ > 0 && std::fabs(h_) >= 0x1p-900 && std::fabs(h_) <= 0x1p900 && std::numeric_limits<long double>::digits == 64) {
    const long double c = static_cast<long double>(h_) + static_cast<long double>(l_);
    const long double o = static_cast<long double>(l_) - (c - static_cast<long double>(h_));
    const long double ac = std::fabs(c);
    const int e = ::normcheck::detail::frexp_exponent(ac);
    if (ac != static_cast<long double>(::normcheck::detail::pow2(e - 1)) &&
        (std::fabs(o) + static_cast<long double>(r_)) * (1 + 0x1p-60L) < static_cast<long double>(::normcheck::detail::pow2(e - 65)))  // e >= -899 here
      return c;
  }
  // Both halves are exact in long double, so their long-double sum is rounded once.
  return dd::certain<long double>(*this, [](double h, double l) {
    return l == 0 ? static_cast<long double>(h) : static_cast<long double>(h) + static_cast<long double>(l);  // -0 + 0 would be +0
  });
}
inline double round_to(DType t, const DDBall& x) {
  const double ah = std::fabs(x.hi());
  if (x.radius() > 0 && ah >= 0x1p-900 && ah <= 0x1p900) {
    // binary64 and binary32 (the hot cases) without the format table: the candidate is h
    // itself, or h's conversion to float (IEEE's RNE, with overflow to inf, which
    // quick_decides then declines); the other float formats through round_to(t, h).
    if (t == DType::f64) {
      if (dd::quick_decides(x.hi(), x.lo(), x.radius(), x.hi(), 53, 0x1p-1022, std::numeric_limits<double>::max())) return x.hi();
    } else if (t == DType::f32) {
      const double c = static_cast<float>(x.hi());
      if (dd::quick_decides(x.hi(), x.lo(), x.radius(), c, 24, 0x1p-126, std::numeric_limits<float>::max())) return c;
    } else if (!is_quantized(t)) {
      const FormatInfo& f = format_info(t);
      if (ah >= f.min_normal) {
        const double c = dd::round_significand(x.hi(), f.precision);
        if (dd::quick_decides(x.hi(), x.lo(), x.radius(), c, f.precision, f.min_normal, f.max_finite)) return c;
      }
    }
  }
  if (t == DType::f64) return static_cast<double>(x);
  return dd::certain<double>(x, [t](double h, double l) { return round_sum_to(t, h, l); });
}

/// round_to(t, x, mode) of the exact value: to nearest-even as above; the other modes are left
/// to MPFR (Uncertain), which the quantizing norms' `rounding` key alone asks for.
inline double round_to(DType t, const DDBall& x, Rounding mode) {
  if (mode != Rounding::nearest_even) throw Uncertain{__LINE__};
  return round_to(t, x);
}

/// The exact value's long double L = RN64(x) kept as its tail against r64 = RN53(x) (the
/// caller's certified binary64 rounding): (L - r64) 2^-E, E = r64's binary exponent
/// (spec/exact.hpp ExactOutput::tail_of, which the MPFR path uses on its long double), from
/// the ball in binary64 arithmetic (x87 long doubles were 15% of the row norms' time).
/// With delta = x - r64 (|delta| <= ulp53(r64)/2), L - r64 is delta rounded to nearest-even
/// on the long double grid beside r64: multiples of u = 2^(E-63), or of u/2 on the smaller-
/// magnitude side of an r64 that is a power of two (the binade below); r64 is an even
/// multiple of either, so the parity of the multiple is L's last bit and the rounding is
/// nearbyint's (ties to even) of delta / u. delta's ball: delta_mid = (h - r64) + l (h - r64
/// exact, Sterbenz; the sum one rounding, <= 2^-53 |delta_mid|, none when h = r64), radius
/// (r + 2^-51 |delta_mid|) (1 + 2^-50), covering that rounding and the two of delta_mid +-
/// radius; radius 0 for an exact ball with h = r64 (delta_mid = l exactly: an exact tie of the
/// long double grid then rounds to even as the conversion does). The tail is monotone in x,
/// so equal tails at both ends decide every point; else Uncertain.
/// |r64| outside [2^-900, 2^900] (or not finite): from the long double conversion.
inline float long_double_tail(const DDBall& x, double r64) {
  const double ar = std::fabs(r64);
  if (!(ar >= 0x1p-900 && ar <= 0x1p900) || !(std::fabs(x.hi()) >= 0x1p-900)) return ExactOutput::tail_of(static_cast<long double>(x), r64);
  std::uint64_t b;
  std::memcpy(&b, &r64, sizeof b);
  const int e = static_cast<int>((b >> 52) & 0x7ff) - 1023;     // r64 = +-m 2^e, m in [1, 2)
  const bool pow2 = (b & ((std::uint64_t{1} << 52) - 1)) == 0;    // |r64| = 2^e
  const double dm = (x.hi() - r64) + x.lo();
  const double rad = x.radius() == 0 && x.hi() == r64 ? 0.0 : (x.radius() + std::fabs(dm) * 0x1p-51) * (1 + 0x1p-50);
  const double coarse = ::normcheck::detail::pow2(63 - e), fine = ::normcheck::detail::pow2(64 - e);
  const auto tail = [&](double d) -> float {  // the tail of r64 + d
    const bool below = pow2 && d != 0 && std::signbit(d) != std::signbit(r64);
    // d / spacing (an exact scaling, |v| <= 2^11 + 1) to the nearest integer, ties to even:
    // v + 1.5 2^52 lies in the binade of spacing 1, so the sum rounds v to an integer (the
    // default rounding mode) and the subtraction is exact (nearbyint was a library call).
    const double v = d * (below ? fine : coarse);
    const double n = (v + 0x1.8p52) - 0x1.8p52;
    return static_cast<float>(below ? n * 0x1p-64 : n * 0x1p-63);
  };
  const float lo = tail(dm - rad);
  if (rad == 0) return lo;
  if (tail(dm + rad) != lo) throw Uncertain{__LINE__};
  return lo;
}

}  // namespace normcheck::reference

