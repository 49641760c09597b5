// Floating-point formats of tensors and their correct rounding.
//
// Every float format here is a binary IEEE-754-style format described by its
// precision p (significand bits, hidden bit included), its minimum normal
// exponent and its maximum finite value. Rounding from any wider number type
// (double, long double, Boost.Multiprecision) is done once, to nearest with
// ties to even, with gradual underflow (subnormals) and overflow to +-inf;
// NaN stays NaN. Source: IEEE 754-2019 sections 4.3.1 and 7.4.
//
// The 8-bit formats (quantized outputs) follow the OCP 8-bit Floating Point
// Specification (OFP8) rev. 1.0 (2023), section 5.3, and its conversion rules:
//   fp8_e4m3fn: 4 exponent bits (bias 7), 3 fraction bits, no infinities, one NaN
//     per sign (0x7f, 0xff: S.1111.111); max 448 = 1.75 * 2^8, min normal 2^-6,
//     min subnormal 2^-9. A value rounding beyond 448 (|x| > 464, the tie 464
//     going to even 448) and +-inf become NaN: the format has no infinity.
//   fp8_e5m2: 5 exponent bits (bias 15), 2 fraction bits, IEEE-like: +-inf
//     (0x7c, 0xfc), NaNs (exponent 31, fraction != 0; 0x7e written); max 57344 =
//     1.75 * 2^15, min normal 2^-14, min subnormal 2^-16; overflow to +-inf at
//     |x| >= 61440 (max + ulp/2, the tie going to even 2^16 = inf).
//   int8: two's complement integers -128..127; one quantization step is 1. No NaN
//     and no infinity: rounding saturates to -128 / 127 and NaN is stored as 0
//     (what CUDA's cvt.rni.sat.s8.f32 and most kernels do).
// round_to_saturating() is the "saturating" conversion of OFP8 5.3.2 (and of
// CUDA's __NV_SATFINITE): +-inf and finite values beyond the range clamp to +-max.
#pragma once

#include <cmath>
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include <fmt/format.h>

namespace normcheck {

/// Storage format of a tensor: IEEE binary64/32/16, Google bfloat16, and the 8-bit
/// formats of quantized outputs: OCP FP8 E4M3FN and E5M2, and int8 (see above).
enum class DType : std::uint8_t { f64, f32, f16, bf16, fp8_e4m3fn, fp8_e5m2, int8 };

/// Rounding of a real to a format: to nearest with ties to even (IEEE's default and
/// every FP8 hardware conversion), to nearest with ties away from zero (C's round(),
/// some int8 kernels), toward zero (truncation).
enum class Rounding : std::uint8_t { nearest_even, nearest_away, toward_zero };

/// Parameters of a binary floating-point format.
/// `precision`: significand bits including the hidden one (53, 24, 11, 8; 4 and 3 for
/// fp8_e4m3fn and fp8_e5m2; int8: 8, with min_exp = max_exp = 8 so that its quantum
/// is always 2^0 = 1).
/// `min_exp`: exponent e of the smallest normal number 2^(e-1) in the frexp
/// convention (x = m * 2^e, m in [0.5, 1)); `max_finite`: largest finite value.
struct FormatInfo {
  int precision;
  int min_exp;
  int max_exp;  // frexp exponent of the largest finite value
  double max_finite;
  double min_normal;
  double min_subnormal;
  std::size_t bytes;
};

/// Static description of `t` (IEEE 754 table 3.5; bfloat16: 8 exponent bits, 7 fraction bits).
const FormatInfo& format_info(DType t) noexcept;

/// "f64" | "f32" | "f16" | "bf16" | "fp8_e4m3fn" | "fp8_e5m2" | "int8".
std::string_view dtype_name(DType t) noexcept;
/// Parses a dtype name; also accepts the aliases float64/double, float32/float,
/// float16/half, bfloat16, float8_e4m3fn, float8_e5m2 (PyTorch's, ml_dtypes' names) and
/// i8. Returns nullopt for anything else.
std::optional<DType> parse_dtype(std::string_view s) noexcept;
/// All dtype names, for messages: "f64 | f32 | ... | int8".
std::string dtype_choices();
/// The 8-bit formats of quantized outputs (fp8_e4m3fn, fp8_e5m2, int8): their outputs are
/// judged in quantization steps (checks/metrics.cpp), and no kernel accumulates in them.
bool is_quantized(DType t) noexcept;
/// Whether the format has infinities (every float format but fp8_e4m3fn; not int8).
bool has_inf(DType t) noexcept;
/// Whether the format has NaN (every float format; not int8).
bool has_nan(DType t) noexcept;

/// Unit roundoff u = 2^-p of the format (half an ULP of 1): 2^-53 for f64, 2^-24 for f32,
/// 2^-11 for f16, 2^-8 for bf16.
double unit_roundoff(DType t) noexcept;

/// Rounds `x` (any real number type with frexp/ldexp/rint/isnan/isinf found by ADL or std)
/// once, to nearest-even, to the format `t`, and returns the result as a double (exact:
/// every value of every format here is a double). Subnormals are produced by gradual
/// underflow; values at or beyond max_finite + ulp/2 become +-inf; NaN stays NaN.
/// The current rounding mode of `Real` must be round-to-nearest-even (the default of
/// both IEEE doubles and MPFR). Source: IEEE 754-2019 4.3.1 (roundTiesToEven), 7.4.
/// Rounds `x` (any real number type with frexp/ldexp/trunc/isnan/isinf found by ADL
/// or std) once, in rounding mode `mode`, to the format `t`, and returns the result as a
/// double (exact: every value of every format here is a double). Float formats: gradual
/// underflow; a result beyond max_finite is +-inf, or NaN for fp8_e4m3fn (no infinity),
/// and so is an infinite x; NaN stays NaN. int8: the nearest integer per `mode`,
/// saturated to [-128, 127] (+-inf too); NaN stays NaN here (Tensor::set stores 0), and a
/// zero is +0 (int8 has no -0). Independent of Real's own rounding mode: the integer part is
/// truncated and the remainder compared with one half exactly. Source: IEEE 754-2019 4.3,
/// 7.4; OFP8 rev. 1.0 5.3.
template <class Real>
double round_to(DType t, const Real& x, Rounding mode) {
  using std::frexp; using std::ldexp; using std::trunc; using std::isnan; using std::isinf;
  if (isnan(x)) return std::numeric_limits<double>::quiet_NaN();
  if (t == DType::int8) {
    if (isinf(x)) return x > 0 ? 127.0 : -128.0;
    if (x >= Real(127)) return 127.0;
    if (x <= Real(-128)) return -128.0;
  } else if (isinf(x)) {
    if (t == DType::fp8_e4m3fn) return std::numeric_limits<double>::quiet_NaN();
    return x > 0 ? HUGE_VAL : -HUGE_VAL;
  }
  if (x == 0) return t != DType::int8 && (x < 0 || std::signbit(static_cast<double>(x))) ? -0.0 : 0.0;
  const FormatInfo& f = format_info(t);
  if constexpr (std::is_same<Real, double>::value) {
    // The hot case of the reference's fast path: a double, to nearest even, no int8. The
    // hardware's own rounding (IEEE RNE) makes x + c a multiple of 2^q when c = 1.5 2^(q+52)
    // (|x| < 2^(q+p+1) <= 2^(q+51) keeps x + c in c's binade, whose ULP is 2^q), and
    // (x + c) - c is then exact. Same result as the general path below (dtype_test checks).
    const double ax = std::fabs(x);
    if (mode == Rounding::nearest_even && t == DType::f64) return x;
    if (mode == Rounding::nearest_even && t != DType::int8 && ax >= 0x1p-900 && ax <= 0x1p900) {
      std::uint64_t bits = 0;
      std::memcpy(&bits, &x, sizeof bits);  // (not std::bit_cast: nvcc compiles this header as C++17)
      const int e = static_cast<int>((bits >> 52) & 0x7ff) - 1022;  // x = m 2^e, |m| in [0.5, 1)
      const int q = (e < f.min_exp ? f.min_exp : e) - f.precision;
      const std::uint64_t cbits = static_cast<std::uint64_t>(q + 52 + 1023) << 52;
      double c = 0;
      std::memcpy(&c, &cbits, sizeof c);
      c *= 1.5;
      const double r = (x + c) - c;
      if (std::fabs(r) > f.max_finite) {
        if (t == DType::fp8_e4m3fn) return std::numeric_limits<double>::quiet_NaN();
        return r > 0 ? HUGE_VAL : -HUGE_VAL;
      }
      if (r == 0.0) return x < 0 ? -0.0 : 0.0;
      return r;
    }
  }
  int e = 0;
  (void)frexp(x, &e);  // x = m 2^e, |m| in [0.5,1)
  // Quantum exponent: ULP = 2^(q) with q = e - p for normals, fixed below min_exp.
  const int q = (e < f.min_exp ? f.min_exp : e) - f.precision;
  Real scaled = ldexp(x, -q);  // exact: a power-of-two scaling
  // Round to an integer from the exact remainder: trunc, then one step away from zero when
  // the remainder exceeds one half, or equals it and the mode says so (ties away; ties to
  // even when the truncation is odd). Not rint(): Boost.Multiprecision's rint on MPFR
  // numbers rounds ties away from zero (rint(mpfr 0.5) = 1), which is not IEEE's rint.
  Real n = trunc(scaled);
  if (mode != Rounding::toward_zero) {
    const Real frac = scaled - n;  // exact: |scaled| < 2^(p+1), so the remainder fits
    const Real af = frac < 0 ? Real(-frac) : frac;
    const bool odd = static_cast<std::int64_t>(static_cast<double>(n)) % 2 != 0;  // n is an integer below 2^54: exact
    if (af > Real(0.5) || (af == Real(0.5) && (mode == Rounding::nearest_away || odd))) n += frac < 0 ? -1 : 1;
  }
  double r = std::ldexp(static_cast<double>(n), q);  // n has <= p+1 bits: exact
  if (t == DType::int8) return r == 0.0 ? 0.0 : r;  // |x| < 127 here: no saturation left
  if (std::fabs(r) > f.max_finite) {
    if (t == DType::fp8_e4m3fn) return std::numeric_limits<double>::quiet_NaN();
    return r > 0 ? HUGE_VAL : -HUGE_VAL;
  }
  if (r == 0.0) return x < 0 ? -0.0 : 0.0;
  return r;
}

/// Rounds the unevaluated sum hi + lo once, to nearest-even, to the format `t`, where hi is
/// a double and lo the (sign-carrying) remainder of the exact value beyond it, |lo| <=
/// ulp(hi) / 2 (a TwoSum pair). round_to(t, hi) alone rounds twice where hi is exactly a
/// midpoint of t and lo != 0: the exact value then lies on lo's side of the midpoint. For t
/// = f64 the result is hi (the pair's own rounding). Source: the sticky bit of IEEE 754
/// rounding; Boldo and Melquiond, "Emulation of FMA and correctly rounded sums" (2008).
double round_sum_to(DType t, double hi, double lo) noexcept;

/// Rounds `x` once, to nearest-even, to the format `t` (round_to above with
/// Rounding::nearest_even): subnormals by gradual underflow; values at or beyond
/// max_finite + ulp/2 become +-inf (NaN for fp8_e4m3fn); NaN stays NaN; int8 saturates.
template <class Real>
double round_to(DType t, const Real& x) {
  return round_to(t, x, Rounding::nearest_even);
}

/// The saturating conversion (OFP8 5.3.2, CUDA __NV_SATFINITE): x clamped to
/// [-max_finite, max_finite] ([-128, 127] for int8), +-inf included, then rounded per
/// `mode`. NaN stays NaN. Clamping first is exact (the bounds are values of the format),
/// so this equals the clamp of the non-saturating result wherever that one is finite.
template <class Real>
double round_to_saturating(DType t, const Real& x, Rounding mode = Rounding::nearest_even) {
  using std::isnan;
  if (isnan(x)) return std::numeric_limits<double>::quiet_NaN();
  const double hi = t == DType::int8 ? 127.0 : format_info(t).max_finite, lo = t == DType::int8 ? -128.0 : -hi;
  if (x >= Real(hi)) return hi;
  if (x <= Real(lo)) return lo;
  return round_to(t, x, mode);
}

/// ULP of the format at `r` (the spacing of the format's values at |r|): 2^(e-p) for
/// |r| in [2^(e-1), 2^e), the subnormal spacing below the normal range, the ULP of
/// max_finite for |r| beyond it; 1 (one quantization step) for int8. Returns NaN for NaN.
double ulp(DType t, double r) noexcept;
/// Long-double overload for metrics computed against an exact value.
long double ulp(DType t, long double r) noexcept;

namespace detail {
/// 2^k as a double, exactly, for -1074 <= k <= 1023 (subnormal below -1022).
inline double pow2(int k) noexcept {
  const std::uint64_t bits = k >= -1022 ? static_cast<std::uint64_t>(k + 1023) << 52 : std::uint64_t{1} << (k + 1074);
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

/// frexp's exponent of a (a = f 2^e, 0.5 <= f < 1) for finite a > 0 of at most double's
/// range, without a library call: the exponent field of a's binary64 rounding, less one
/// where that rounding carried a (long double) a just below 2^k up to 2^k (rounding is
/// monotone and 2^k is a double, so it never carries downward). Subnormal doubles: frexp.
template <class R>
int frexp_exponent(R a) noexcept {
  const double d = static_cast<double>(a);
  if (!(d >= 0x1p-1022)) {
    int e = 0;
    std::frexp(a, &e);
    return e;
  }
  std::uint64_t bits;
  std::memcpy(&bits, &d, sizeof bits);
  int e = static_cast<int>(bits >> 52) - 1022;  // the sign bit is 0
  if (static_cast<R>(pow2(e - 1)) > a) --e;
  return e;
}
}  // namespace detail

/// ulp() of one format with its constants loaded once, inline: for loops over many elements
/// (metrics). UlpOf(t)(r) == ulp(t, r) for every r, in double and long double.
class UlpOf {
 public:
  explicit UlpOf(DType t) noexcept
      : int8_(t == DType::int8), precision_(format_info(t).precision), min_exp_(format_info(t).min_exp),
        max_finite_(format_info(t).max_finite) {}
  template <class R>
  R operator()(R r) const noexcept {
    if (std::isnan(r)) return r;
    if (int8_) return 1;  // one quantization step
    R a = std::fabs(r);
    if (std::isinf(a) || a > static_cast<R>(max_finite_)) a = static_cast<R>(max_finite_);
    int e = a == 0 ? min_exp_ : detail::frexp_exponent(a);
    if (e < min_exp_) e = min_exp_;
    return static_cast<R>(detail::pow2(e - precision_));  // e - precision >= -1074 for every format
  }

 private:
  bool int8_;
  int precision_, min_exp_;
  double max_finite_;
};

/// Whether the double `v` is exactly a value of format `t` (NaN and +-inf included where
/// the format has them: not +-inf for fp8_e4m3fn; neither, nor -0, for int8).
bool representable(DType t, double v) noexcept;

namespace detail {
/// IEEE binary16 bits <-> double. to: exact; from: correctly rounded (RNE).
double half_bits_to_double(std::uint16_t h) noexcept;
std::uint16_t double_to_half_bits(double v) noexcept;
/// bfloat16 bits (upper half of a binary32) <-> double.
double bf16_bits_to_double(std::uint16_t h) noexcept;
std::uint16_t double_to_bf16_bits(double v) noexcept;
/// binary16 -> binary32, exact, without branches or tables (the kernels' loops vectorize):
/// a normal half's exponent and fraction shifted into a binary32 and multiplied by 2^112 (the
/// rebias 15 -> 127, exact); a subnormal half is its integer fraction times 2^-24 (exact, a
/// normal float: no denormals-are-zero mode can touch it); exponent field 31 (inf, NaN with its
/// payload) becomes 255.
inline float half_bits_to_float(std::uint16_t h) noexcept {
  const std::uint32_t em = static_cast<std::uint32_t>(h & 0x7fffu);
  const std::uint32_t shifted = em << 13;
  float f;
  __builtin_memcpy(&f, &shifted, 4);
  f *= 0x1p112f;
  const float sub = static_cast<float>(static_cast<std::int32_t>(em & 0x3ffu)) * 0x1p-24f;
  std::uint32_t un, us;
  __builtin_memcpy(&un, &f, 4);
  __builtin_memcpy(&us, &sub, 4);
  // Masks, not branches (all ones where the condition holds).
  const std::uint32_t is_sub = 0u - static_cast<std::uint32_t>(em < 0x400u);
  const std::uint32_t is_special = 0u - static_cast<std::uint32_t>(em >= 0x7c00u);
  std::uint32_t u = (us & is_sub) | (un & ~is_sub);
  u |= 0x7f800000u & is_special;
  u |= static_cast<std::uint32_t>(h & 0x8000u) << 16;
  __builtin_memcpy(&f, &u, 4);
  return f;
}
/// binary32 -> binary16, correctly rounded (RNE), integer operations and selects only (both
/// the normal and the subnormal rounding are formed, one kept), so it vectorizes: the 24-bit
/// significand rounded to 11 bits (fewer below 2^-14) with the carry into the exponent;
/// >= 65520 -> inf, NaN -> quiet NaN 0x7e00 with the sign.
inline std::uint16_t float_to_half_bits(float v) noexcept {
  std::uint32_t x;
  __builtin_memcpy(&x, &v, 4);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t a = x & 0x7fffffffu;
  // Round to nearest even by adding half a step less one plus the kept lsb, then shifting
  // (bfloat16's trick): the carry runs into the exponent. Normal half: rebias 127 -> 15,
  // 23 -> 10 fraction bits.
  const std::uint32_t rebased = a - (112u << 23);
  const std::uint32_t rn = (rebased + 0xfffu + ((rebased >> 13) & 1u)) >> 13;
  // Subnormal half (a < 2^-14): the significand shifted right by 126 - e (14 .. 25; clamped to
  // [1, 31], where every value below 2^-25 rounds to 0 anyway).
  const std::int32_t e = static_cast<std::int32_t>(a >> 23);
  const std::int32_t sh = std::min<std::int32_t>(std::max<std::int32_t>(126 - e, 1), 31);
  const std::uint32_t m = (a & 0x7fffffu) | 0x800000u;
  const std::uint32_t rs = (m + ((1u << (sh - 1)) - 1u) + ((m >> sh) & 1u)) >> sh;
  // Selected with masks (all ones where the condition holds), from the lowest priority up.
  const std::uint32_t is_sub = 0u - static_cast<std::uint32_t>(a < 0x38800000u);
  const std::uint32_t is_inf = 0u - static_cast<std::uint32_t>(a >= 0x477ff000u);
  const std::uint32_t is_nan = 0u - static_cast<std::uint32_t>(a > 0x7f800000u);
  std::uint32_t r = (rs & is_sub) | (rn & ~is_sub);
  r = (0x7c00u & is_inf) | (r & ~is_inf);
  r = (0x7e00u & is_nan) | (r & ~is_nan);
  return static_cast<std::uint16_t>(sign | r);
}
/// binary32 -> bfloat16, correctly rounded (RNE: add 0x7fff plus the kept lsb, the carry
/// running into the exponent and to inf), NaN kept quiet with its sign. Inline and without
/// branches, so the kernels' store loops vectorize.
inline std::uint16_t float_to_bf16_bits(float v) noexcept {
  std::uint32_t x;
  __builtin_memcpy(&x, &v, 4);
  const bool nan = (x & 0x7fffffffu) > 0x7f800000u;
  const std::uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
  return static_cast<std::uint16_t>(nan ? (x >> 16) | 0x40u : rounded);
}
/// OCP FP8 bits <-> double (t = fp8_e4m3fn or fp8_e5m2). to: exact (by table);
/// from: round_to(t, v) (RNE, non-saturating: NaN 0x7f / 0x7e with v's sign when out of
/// range for e4m3fn / NaN), then the encoding.
double fp8_bits_to_double(DType t, std::uint8_t b) noexcept;
std::uint8_t double_to_fp8_bits(DType t, double v) noexcept;
inline float bf16_bits_to_float(std::uint16_t h) noexcept {
  std::uint32_t u = static_cast<std::uint32_t>(h) << 16;
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
}
}  // namespace detail

}  // namespace normcheck

/// {} of a DType: its name ("bf16").
template <>
struct fmt::formatter<normcheck::DType> : fmt::formatter<std::string_view> {
  template <class Ctx>
  auto format(normcheck::DType v, Ctx& ctx) const {
    return fmt::formatter<std::string_view>::format(normcheck::dtype_name(v), ctx);
  }
};
