#include "core/dtype.hpp"

#include <array>
#include <cstring>

namespace normcheck {

namespace {
// precision, min_exp (frexp), max_exp (frexp), max_finite, min_normal, min_subnormal, bytes
constexpr FormatInfo kF64{53, -1021, 1024, 1.7976931348623157e308, 0x1p-1022, 0x1p-1074, 8};
constexpr FormatInfo kF32{24, -125, 128, 0x1.fffffep127, 0x1p-126, 0x1p-149, 4};
constexpr FormatInfo kF16{11, -13, 16, 65504.0, 0x1p-14, 0x1p-24, 2};
constexpr FormatInfo kBF16{8, -125, 128, 0x1.fep127, 0x1p-126, 0x1p-133, 2};
// OFP8 rev. 1.0 table 1: E4M3 max 1.75 * 2^8, min normal 2^-6, min subnormal 2^-9;
// E5M2 max 1.75 * 2^15, min normal 2^-14, min subnormal 2^-16.
constexpr FormatInfo kE4M3FN{4, -5, 9, 448.0, 0x1p-6, 0x1p-9, 1};
constexpr FormatInfo kE5M2{3, -13, 16, 57344.0, 0x1p-14, 0x1p-16, 1};
// int8: quantum 2^(min_exp - precision) = 1 for every |x| < 2^8 (round_to saturates first).
constexpr FormatInfo kI8{8, 8, 8, 127.0, 1.0, 1.0, 1};
}  // namespace

const FormatInfo& format_info(DType t) noexcept {
  switch (t) {
    case DType::f64: return kF64;
    case DType::f32: return kF32;
    case DType::f16: return kF16;
    case DType::bf16: return kBF16;
    case DType::fp8_e4m3fn: return kE4M3FN;
    case DType::fp8_e5m2: return kE5M2;
    case DType::int8: return kI8;
  }
  return kF64;
}

std::string_view dtype_name(DType t) noexcept {
  switch (t) {
    case DType::f64: return "f64";
    case DType::f32: return "f32";
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::fp8_e4m3fn: return "fp8_e4m3fn";
    case DType::fp8_e5m2: return "fp8_e5m2";
    case DType::int8: return "int8";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view s) noexcept {
  if (s == "f64" || s == "float64" || s == "double") return DType::f64;
  if (s == "f32" || s == "float32" || s == "float") return DType::f32;
  if (s == "f16" || s == "float16" || s == "half") return DType::f16;
  if (s == "bf16" || s == "bfloat16") return DType::bf16;
  if (s == "fp8_e4m3fn" || s == "float8_e4m3fn") return DType::fp8_e4m3fn;
  if (s == "fp8_e5m2" || s == "float8_e5m2") return DType::fp8_e5m2;
  if (s == "int8" || s == "i8") return DType::int8;
  return std::nullopt;
}

std::string dtype_choices() { return "f64 | f32 | f16 | bf16 | fp8_e4m3fn | fp8_e5m2 | int8"; }

bool is_quantized(DType t) noexcept { return t == DType::fp8_e4m3fn || t == DType::fp8_e5m2 || t == DType::int8; }
bool has_inf(DType t) noexcept { return t != DType::fp8_e4m3fn && t != DType::int8; }
bool has_nan(DType t) noexcept { return t != DType::int8; }

double unit_roundoff(DType t) noexcept { return std::ldexp(1.0, -format_info(t).precision); }

double ulp(DType t, double r) noexcept { return UlpOf(t)(r); }
long double ulp(DType t, long double r) noexcept { return UlpOf(t)(r); }

double round_sum_to(DType t, double hi, double lo) noexcept {
  const double r = round_to(t, hi);
  if (t == DType::f64 || lo == 0 || !std::isfinite(hi)) return r;
  const FormatInfo& f = format_info(t);
  if (std::fabs(hi) > f.max_finite) {
    // Only at the overflow threshold itself (max_finite + half its ulp, a double) can lo
    // decide (further above, |lo| <= ulp(hi) / 2 cannot reach it): toward zero the value is
    // max_finite, away from it the overflow result (inf; NaN for fp8_e4m3fn, whose tie at
    // 464 goes to even, 448, so that hi alone rounds into range). Found by a hunt (a dyt
    // output 2^128 - 2^103 - 0.76 came back +inf from the certified path) and by a review
    // (e4m3fn's 464 + lo came back 448).
    int e = 0;
    std::frexp(f.max_finite, &e);  // max_finite in [2^(e-1), 2^e): its ulp is 2^(e - p)
    const double threshold = f.max_finite + std::ldexp(1.0, e - f.precision - 1);
    if (std::fabs(hi) != threshold) return r;
    return std::signbit(lo) == std::signbit(hi) ? round_to(t, 2 * hi) : std::copysign(f.max_finite, hi);
  }
  const double d = hi - r;  // exact: r is hi's nearest value of t
  if (d == 0) return r;     // hi is a value of t: |lo| < half its ulp cannot move it
  const double other = hi + d;
  // hi is a midpoint iff the value as far beyond hi as r is below it is a value of t too
  // (and hi + d was formed exactly).
  const bool midpoint = other - hi == d && round_to(t, other) == other;
  return midpoint && std::signbit(lo) == std::signbit(d) ? other : r;
}

bool representable(DType t, double v) noexcept {
  if (std::isnan(v)) return has_nan(t);
  if (std::isinf(v)) return has_inf(t);
  double r = round_to(t, v);
  return r == v && std::signbit(r) == std::signbit(v);
}

namespace detail {

double half_bits_to_double(std::uint16_t h) noexcept {
  const int sign = h >> 15, exp = (h >> 10) & 0x1f, frac = h & 0x3ff;
  double v;
  if (exp == 0x1f) v = frac ? std::numeric_limits<double>::quiet_NaN() : HUGE_VAL;
  else if (exp == 0) v = std::ldexp(static_cast<double>(frac), -24);
  else v = std::ldexp(static_cast<double>(frac | 0x400), exp - 25);
  return sign ? -v : v;
}

std::uint16_t double_to_half_bits(double v) noexcept {
  if (std::isnan(v)) return std::signbit(v) ? 0xfe00 : 0x7e00;
  // The common case, a value already rounded to binary16 (the reference's outputs) in its
  // normal range: the bits straight from binary64's (sign, exponent rebiased 1023 -> 15, the
  // top 10 fraction bits; the 42 below them are zero for a binary16 value).
  std::uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  const double av = std::fabs(v);
  if (av >= 0x1p-14 && av <= 65504.0 && (b & ((std::uint64_t{1} << 42) - 1)) == 0) {
    const auto e = static_cast<std::uint16_t>(((b >> 52) & 0x7ff) - 1023 + 15);
    return static_cast<std::uint16_t>(((b >> 48) & 0x8000) | (e << 10) | ((b >> 42) & 0x3ff));
  }
  const double r = round_to(DType::f16, v);
  const std::uint16_t sign = std::signbit(r) ? 0x8000 : 0;
  const double a = std::fabs(r);
  if (std::isinf(a)) return sign | 0x7c00;
  if (a < 0x1p-14) return sign | static_cast<std::uint16_t>(std::ldexp(a, 24));  // subnormal
  int e = 0;
  const double m = std::frexp(a, &e);  // a = m 2^e, m in [0.5,1)
  const auto frac = static_cast<std::uint16_t>(std::ldexp(m, 11)) & 0x3ff;
  return sign | static_cast<std::uint16_t>((e + 14) << 10) | frac;
}

double bf16_bits_to_double(std::uint16_t h) noexcept { return bf16_bits_to_float(h); }

std::uint16_t double_to_bf16_bits(double v) noexcept {
  if (std::isnan(v)) return std::signbit(v) ? 0xffc0 : 0x7fc0;
  // Rounded to bf16 the value is exactly a binary32 whose low 16 bits are zero; a value that
  // already is one (the reference's outputs: the common case) is converted without rounding.
  const float f0 = static_cast<float>(v);
  std::uint32_t u0;
  std::memcpy(&u0, &f0, 4);
  if (static_cast<double>(f0) == v && (u0 & 0xffffu) == 0) return static_cast<std::uint16_t>(u0 >> 16);
  const float f = static_cast<float>(round_to(DType::bf16, v));
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<std::uint16_t>(u >> 16);
}

namespace {
/// OFP8 encodings: exponent bits, fraction bits, bias.
struct Fp8Layout {
  int ebits, mbits, bias;
};
constexpr Fp8Layout fp8_layout(DType t) noexcept { return t == DType::fp8_e4m3fn ? Fp8Layout{4, 3, 7} : Fp8Layout{5, 2, 15}; }

double fp8_decode(DType t, std::uint8_t b) noexcept {
  const Fp8Layout l = fp8_layout(t);
  const int sign = b >> 7, e = (b >> l.mbits) & ((1 << l.ebits) - 1), m = b & ((1 << l.mbits) - 1);
  const int emax = (1 << l.ebits) - 1;
  double v;
  if (t == DType::fp8_e4m3fn && e == emax && m == (1 << l.mbits) - 1) v = std::numeric_limits<double>::quiet_NaN();
  else if (t == DType::fp8_e5m2 && e == emax) v = m ? std::numeric_limits<double>::quiet_NaN() : HUGE_VAL;
  else if (e == 0) v = std::ldexp(static_cast<double>(m), 1 - l.bias - l.mbits);  // subnormal
  else v = std::ldexp(static_cast<double>(m | (1 << l.mbits)), e - l.bias - l.mbits);
  return sign ? -v : v;
}

struct Fp8Table {
  std::array<double, 256> v{};
  explicit Fp8Table(DType t) {
    for (int i = 0; i < 256; ++i) v[static_cast<std::size_t>(i)] = fp8_decode(t, static_cast<std::uint8_t>(i));
  }
};

}  // namespace


double fp8_bits_to_double(DType t, std::uint8_t b) noexcept {
  static const Fp8Table e4m3(DType::fp8_e4m3fn), e5m2(DType::fp8_e5m2);
  return (t == DType::fp8_e4m3fn ? e4m3 : e5m2).v[b];
}

std::uint8_t double_to_fp8_bits(DType t, double v) noexcept {
  const Fp8Layout l = fp8_layout(t);
  const std::uint8_t sign = std::signbit(v) ? 0x80 : 0;
  const double r = round_to(t, v);
  if (std::isnan(r)) return sign | (t == DType::fp8_e4m3fn ? 0x7f : 0x7e);
  if (std::isinf(r)) return sign | 0x7c;  // e5m2 only: e4m3fn rounds to NaN instead
  const double a = std::fabs(r);
  const FormatInfo& f = format_info(t);
  if (a < f.min_normal) return sign | static_cast<std::uint8_t>(a / f.min_subnormal);  // subnormal (or 0): exact
  int e = 0;
  const double m = std::frexp(a, &e);  // a = m 2^e, m in [0.5, 1)
  const int field = e - 1 + l.bias;
  const auto frac = static_cast<int>(std::ldexp(m, l.mbits + 1)) & ((1 << l.mbits) - 1);
  return sign | static_cast<std::uint8_t>((field << l.mbits) | frac);
}


}  // namespace detail
}  // namespace normcheck
