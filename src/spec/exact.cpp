#include "spec/exact.hpp"

#include <cfloat>
#include <mutex>

namespace normcheck {

namespace {

/// Guards the maps of CondMagnitudes::set and ExactOutput::set_rounded, which the
/// references call from their row threads; entries are rare (values outside binary32's
/// normal range, long doubles on a rounding boundary), so one lock for all is enough.
std::mutex& rare_entries_mutex() {
  static std::mutex m;
  return m;
}

/// q as a Tensor of dtype t holds it (core/tensor.hpp): int8 has no NaN (stored as 0).
double as_stored(DType t, double q) noexcept { return t == DType::int8 && std::isnan(q) ? 0.0 : q; }

/// Whether binary64 r may lie on a rounding boundary of a float format of precision p
/// (a midpoint, or the overflow threshold max_finite + ulp/2): each has at most p + 1
/// significant bits, so r's low 52 - p fraction bits are then 0.
/// (p < 53: formats narrower than binary64.)
bool may_be_boundary(double r, int p) noexcept {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &r, sizeof bits);
  return (bits & ((std::uint64_t{1} << (52 - p)) - 1)) == 0;
}

/// Whether two doubles have the same bits (a NaN's sign and payload, a zero's sign).
bool same_bits(double a, double b) noexcept { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace

CondMagnitudes::CondMagnitudes(const std::vector<double>& v) {
  resize(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) set(i, v[i]);
}

void CondMagnitudes::set_other(std::size_t i, double c) {
  if (std::isnan(c)) {
    f_[i] = std::numeric_limits<float>::quiet_NaN();
  } else if (c == 0 || std::isinf(c)) {
    f_[i] = static_cast<float>(c);
  } else {
    std::uint32_t b = kWide;
    std::memcpy(&f_[i], &b, sizeof b);
    const std::lock_guard<std::mutex> lock(rare_entries_mutex());
    wide_[i] = c;
  }
}

std::vector<double> CondMagnitudes::to_doubles() const {
  std::vector<double> v(f_.size());
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = (*this)[i];
  return v;
}

ExactOutput ExactOutput::of_values(DType dt, Shape s, std::vector<long double> values, std::vector<double> cond) {
  ExactOutput o;
  o.dtype = dt;
  o.shape = std::move(s);
  o.exact = std::move(values);
  if (cond.empty()) o.cond.resize(o.exact.size());  // 0: the strictest allowance
  else o.cond = CondMagnitudes(cond);
  return o;
}

double ExactOutput::derived_rounding(std::size_t i) const {
  if (exact64.empty()) return as_stored(dtype, round_to(dtype, exact[i], rounding));
  const double r = exact64[i];
  if (dtype == DType::f64) return rounding == Rounding::nearest_even ? r : round_to(dtype, exact_at(i), rounding);
  // Unless r is on a boundary, the tail cannot matter and L rounds as r does (nearly every
  // element: one rounding of a binary64; binary32's RNE is the hardware's, with gradual
  // underflow). The boundaries of a float format of precision p have at most p + 1 bits;
  // int8's (half-integers, integers toward zero, up to 128.5) at most 9, so p = 8.
  const float t = tail.empty() ? 0.0f : tail[i];
  const int p = dtype == DType::int8 ? 8 : format_info(dtype).precision;
  if (t == 0 || !may_be_boundary(r, p)) {
    if (dtype == DType::f32 && rounding == Rounding::nearest_even) return static_cast<double>(static_cast<float>(r));
    return as_stored(dtype, round_to(dtype, r, rounding));
  }
  // On a boundary. To nearest even: L = r + t 2^E (exact_at) as an unevaluated sum, lo's sign
  // deciding a midpoint (t 2^E may lose bits below 2^-1074, far below every such format's
  // boundaries; set_rounded() compares anyway). Otherwise the long double itself.
  if (rounding == Rounding::nearest_even && dtype != DType::int8) {
    const int e = detail::frexp_exponent(std::fabs(r)) - 1;
    return round_sum_to(dtype, r, static_cast<double>(t) * detail::pow2(e));
  }
  return as_stored(dtype, round_to(dtype, exact_at(i), rounding));
}

bool ExactOutput::rounding_derived(std::size_t i) const {
  // To nearest even in a float format, the exact value's rounding and the long double L's can
  // only differ where L is on a boundary m; L = RN64(exact) = m puts the exact value within
  // half an ulp64 of m, which has at most 54 bits, so r = RN53(exact) is m as well. Where r
  // cannot be a boundary the two agree (nearly every element).
  return rounding == Rounding::nearest_even && dtype != DType::int8 && !exact64.empty() &&
         (dtype == DType::f64 || !may_be_boundary(exact64[i], format_info(dtype).precision));
}

void ExactOutput::set_rounded(std::size_t i, double q) {
  q = as_stored(dtype, q);
  if (rounding_derived(i) || same_bits(derived_rounding(i), q)) return;
  const std::lock_guard<std::mutex> lock(rare_entries_mutex());
  unlike[i] = q;
}

Tensor ExactOutput::rounded() const {
  Tensor t(dtype, shape, Tensor::Uninitialized{});
  const std::int64_t n = t.size();
  if (rounding == Rounding::nearest_even && dtype != DType::int8 && dtype != DType::f64 && !exact64.empty()) {
    // Tensor::set rounds a binary64 within the format's range once (RNE): r itself where its
    // tail cannot matter (derived_rounding), then the kept roundings over it. (Beyond the
    // range and for NaN through rounded_at(): Tensor::set keeps a NaN's sign, and makes
    // fp8_e4m3fn's -500 a -NaN, where round_to gives the one quiet NaN.)
    const FormatInfo& f = format_info(dtype);
    const int p = f.precision;
    for (std::int64_t i = 0; i < n; ++i) {
      const auto k = static_cast<std::size_t>(i);
      const double r = exact64[k];
      const bool plain = std::fabs(r) <= f.max_finite && (tail.empty() || tail[k] == 0 || !may_be_boundary(r, p));
      t.set(i, plain ? r : rounded_at(k));
    }
    for (const auto& [k, q] : unlike) t.set(static_cast<std::int64_t>(k), q);
    return t;
  }
  for (std::int64_t i = 0; i < n; ++i) t.set(i, rounded_at(static_cast<std::size_t>(i)));
  return t;
}

}  // namespace normcheck
