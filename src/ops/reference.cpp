#include "ops/reference.hpp"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cmath>
#include <cstring>

#include "spec/op_def.hpp"

namespace normcheck::reference {

int working_bits(const Problem& p) {
  // Over every input (x, parameters, modulations, running stats): the widest exponent range
  // and precision; log2 of the largest input size bounds log2 m for every op.
  int emax = INT_MIN, emin = INT_MAX, prec = 0;
  std::int64_t n = 1;
  for (const auto& [name, t] : p.inputs) {
    prec = std::max(prec, format_info(t.dtype()).precision);
    n = std::max(n, t.size());
    const std::int64_t size = t.size();
    auto scan = [&](auto value) {  // value(i): element i as a double (no dtype switch per element)
      for (std::int64_t i = 0; i < size; ++i) {
        const double v = value(i);
        if (v == 0 || !std::isfinite(v)) continue;
        const int e = normcheck::detail::frexp_exponent(std::fabs(v));  // frexp's exponent
        emax = std::max(emax, e);
        emin = std::min(emin, e);
      }
    };
    if (t.dtype() == DType::f32 || t.dtype() == DType::bf16) {
      // binary32 and bfloat16 (a binary32's top half): the smallest and largest nonzero finite
      // magnitude as the order of their bits (the order of the values for non-negative
      // floats; inf and NaN lie above 0x7f7fffff), then frexp's exponent of just those two.
      std::uint32_t lo = 0xffffffffu, hi = 0;
      const bool f32 = t.dtype() == DType::f32;
      for (std::int64_t i = 0; i < size; ++i) {
        std::uint32_t u;
        if (f32) std::memcpy(&u, t.as<float>() + i, 4);
        else u = static_cast<std::uint32_t>(t.as<std::uint16_t>()[i]) << 16;
        u &= 0x7fffffffu;
        const bool counted = u != 0 && u <= 0x7f7fffffu;
        lo = counted && u < lo ? u : lo;
        hi = counted && u > hi ? u : hi;
      }
      if (hi != 0) {
        float a, b;
        std::memcpy(&a, &lo, 4);
        std::memcpy(&b, &hi, 4);
        emin = std::min(emin, normcheck::detail::frexp_exponent(static_cast<double>(a)));
        emax = std::max(emax, normcheck::detail::frexp_exponent(static_cast<double>(b)));
      }
    } else {
      const Tensor& tensor = t;  // (clang before 16 cannot capture a structured binding: P1091)
      scan([&tensor](std::int64_t i) { return tensor.get(i); });
    }
  }
  int log2m = 0;
  while ((std::int64_t{1} << log2m) < n) ++log2m;
  const int range = emax == INT_MIN ? 0 : emax - emin;
  return std::max(range + prec + log2m + 1, 160 + log2m);
}

/// Whether the long double L is a binary64 midpoint (r: a binary64 value next to L, such as
/// its binary64 rounding): |L - r| is half the spacing of binary64 between r and L.
bool is_binary64_midpoint(long double L, double r) {
  if (!std::isfinite(r) || L == static_cast<long double>(r)) return false;  // (subnormal r too: the long double holds their midpoints)
  const double other = std::nextafter(r, L > r ? HUGE_VAL : -HUGE_VAL);  // r's neighbour on L's side
  if (!std::isfinite(other))  // beyond the largest finite value: the overflow threshold 2^1024 - 2^970
    return std::fabs(L) == 0x1p1024L - 0x1p970L;
  return 2 * L == static_cast<long double>(r) + static_cast<long double>(other);  // exact: both sides fit 64 bits
}

namespace {

/// Whether the binary64 value r is a midpoint between two adjacent values of dt (f32, bf16,
/// f16), or dt's overflow threshold (its largest finite value plus half its spacing there).
bool narrow_midpoint(DType dt, double r) {
  if (!std::isfinite(r)) return false;
  const double q = round_to(dt, r);
  if (q == r) return false;
  if (!std::isfinite(q)) {
    const FormatInfo& f = format_info(dt);
    return std::fabs(r) == f.max_finite + std::ldexp(1.0, f.max_exp - f.precision - 1);
  }
  const double other = 2 * r - q;  // the value of dt across the midpoint, if r is one (exact then)
  return std::isfinite(other) && round_to(dt, other) == other && other != q;
}

}  // namespace

bool is_midpoint_of(DType dt, double r) {
  std::uint64_t b;  // a midpoint of binary32 or narrower has at most 25 significant bits: r's low 28 bits are 0
  std::memcpy(&b, &r, 8);
  return (b & 0x0fffffffu) == 0 && narrow_midpoint(dt, r);
}

namespace {
std::atomic<std::uint64_t> g_undecided{0}, g_certified{0}, g_recomputed{0};
std::atomic<bool> g_fast{true};
}  // namespace

void note_undecided_rounding() { ++g_undecided; }
std::uint64_t undecided_roundings() { return g_undecided.load(); }
FastPathCounts fast_path_counts() { return {g_certified.load(), g_recomputed.load()}; }
void add_fast_path_counts(std::uint64_t certified, std::uint64_t recomputed) {
  g_certified += certified;
  g_recomputed += recomputed;
}
void set_fast_path(bool on) { g_fast = on; }
bool fast_path_enabled() { return g_fast; }

const ExactOutputs& evaluate_exact(const ValidProblem& p) {
  return p.memo_exact([&] { return p->op.def().reference(p); });
}
ExactOutputs evaluate_exact(const Problem& p) { return evaluate_exact(validate(p)); }
ExactOutputs evaluate_double(const ValidProblem& p) { return p->op.def().reference_double(p); }
ExactOutputs evaluate_double(const Problem& p) { return evaluate_double(validate(p)); }

}  // namespace normcheck::reference
