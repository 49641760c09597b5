// Floating-point formats of tensors and their correct rounding.
//
// Every format here is a binary IEEE-754-style format described by its
// precision p (significand bits, hidden bit included), its minimum normal
// exponent and its maximum finite value. Rounding from any wider number type
// (double, long double, Boost.Multiprecision) is done once, to nearest with
// ties to even, with gradual underflow (subnormals) and overflow to +-inf;
// NaN stays NaN. Source: IEEE 754-2019 sections 4.3.1 and 7.4.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace normcheck {

/// Storage format of a tensor: IEEE binary64/32/16 and Google bfloat16.
enum class DType : std::uint8_t { f64, f32, f16, bf16 };

/// Parameters of a binary floating-point format.
/// `precision`: significand bits including the hidden one (53, 24, 11, 8).
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

/// "f64" | "f32" | "f16" | "bf16".
std::string_view dtype_name(DType t) noexcept;
/// Parses a dtype name; also accepts the aliases float64/double, float32/float,
/// float16/half, bfloat16. Returns nullopt for anything else.
std::optional<DType> parse_dtype(std::string_view s) noexcept;

/// Unit roundoff u = 2^-p of the format (half an ULP of 1): 2^-53 for f64, 2^-24 for f32,
/// 2^-11 for f16, 2^-8 for bf16.
double unit_roundoff(DType t) noexcept;

/// Rounds `x` (any real number type with frexp/ldexp/rint/isnan/isinf found by ADL or std)
/// once, to nearest-even, to the format `t`, and returns the result as a double (exact:
/// every value of every format here is a double). Subnormals are produced by gradual
/// underflow; values at or beyond max_finite + ulp/2 become +-inf; NaN stays NaN.
/// The current rounding mode of `Real` must be round-to-nearest-even (the default of
/// both IEEE doubles and MPFR). Source: IEEE 754-2019 4.3.1 (roundTiesToEven), 7.4.
template <class Real>
double round_to(DType t, const Real& x) {
  using std::frexp; using std::ldexp; using std::rint; using std::isnan; using std::isinf;
  if (isnan(x)) return std::numeric_limits<double>::quiet_NaN();
  if (isinf(x)) return x > 0 ? HUGE_VAL : -HUGE_VAL;
  if (x == 0) return x < 0 || std::signbit(static_cast<double>(x)) ? -0.0 : 0.0;
  const FormatInfo& f = format_info(t);
  int e = 0;
  (void)frexp(x, &e);  // x = m 2^e, |m| in [0.5,1)
  // Quantum exponent: ULP = 2^(q) with q = e - p for normals, fixed below min_exp.
  const int q = (e < f.min_exp ? f.min_exp : e) - f.precision;
  Real scaled = ldexp(x, -q);  // exact: a power-of-two scaling
  Real n = rint(scaled);       // round to integer, ties to even
  double r = std::ldexp(static_cast<double>(n), q);  // n has <= p+1 bits: exact
  if (std::fabs(r) > f.max_finite) return r > 0 ? HUGE_VAL : -HUGE_VAL;
  if (r == 0.0) return x < 0 ? -0.0 : 0.0;
  return r;
}

/// ULP of the format at `r` (the spacing of the format's values at |r|): 2^(e-p) for
/// |r| in [2^(e-1), 2^e), the subnormal spacing below the normal range, the ULP of
/// max_finite for |r| beyond it. Returns NaN for NaN.
double ulp(DType t, double r) noexcept;
/// Long-double overload for metrics computed against an exact value.
long double ulp(DType t, long double r) noexcept;

/// Whether the double `v` is exactly a value of format `t` (NaN and +-inf included).
bool representable(DType t, double v) noexcept;

namespace detail {
/// IEEE binary16 bits <-> double. to: exact; from: correctly rounded (RNE).
double half_bits_to_double(std::uint16_t h) noexcept;
std::uint16_t double_to_half_bits(double v) noexcept;
/// bfloat16 bits (upper half of a binary32) <-> double.
double bf16_bits_to_double(std::uint16_t h) noexcept;
std::uint16_t double_to_bf16_bits(double v) noexcept;
/// binary16 -> binary32, exact, by table (the kernels' hot path).
float half_bits_to_float(std::uint16_t h) noexcept;
/// binary32 -> binary16 / bfloat16, correctly rounded (RNE), by bit manipulation.
std::uint16_t float_to_half_bits(float v) noexcept;
std::uint16_t float_to_bf16_bits(float v) noexcept;
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
