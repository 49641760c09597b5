// Pieces shared by the family references (batch_norm.hpp, group_norm.hpp,
// l2_normalize.hpp, ada_norm.hpp, qk_norm.hpp): loading inputs into T and storing one
// exact value with its single rounding and its condition magnitude.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/dtype.hpp"
#include "ops/reference.hpp"

namespace normcheck::reference::detail {

/// Below this many elements a family reference runs on one thread: a parallel region
/// costs more than the work (and much more on an oversubscribed machine).
constexpr std::int64_t kParallelMin = 4096;

/// All values of t as T (exact: every value of every dtype is a double); empty if t is null.
template <class T>
std::vector<T> load_all(const Tensor* t) {
  std::vector<T> v;
  if (!t) return v;
  v.reserve(static_cast<std::size_t>(t->size()));
  for (std::int64_t i = 0; i < t->size(); ++i) v.emplace_back(t->get(i));
  return v;
}

/// An output of shape s in dtype dt, to be filled by put(): the long doubles only for an f64
/// output (spec/exact.hpp ExactOutput).
inline ExactOutput make_output(DType dt, const Shape& s) {
  ExactOutput o;
  o.dtype = dt;
  o.shape = s;
  if (dt == DType::f64) o.exact.resize(static_cast<std::size_t>(numel(s)));
  else o.tail.resize(static_cast<std::size_t>(numel(s)));
  o.exact64.resize(static_cast<std::size_t>(numel(s)));
  o.cond.resize(static_cast<std::size_t>(numel(s)));
  return o;
}

/// The tail of v's long double against its binary64 rounding r (ExactOutput::tail_of); the
/// certified path's DDBall overload (ball.hpp) forms it without long double arithmetic.
template <class T>
float long_double_tail(const T& v, double r) {
  return ExactOutput::tail_of(static_cast<long double>(v), r);
}

/// T is an MPFR number (P > 64 bits), whose roundings the stores test (reference.hpp
/// note_undecided_rounding); not double or DDBall (the balls decide or throw Uncertain).
template <class T>
constexpr bool kMultiprecision = std::numeric_limits<T>::is_specialized && std::numeric_limits<T>::digits > 64;

/// For an MPFR value v of P bits whose rounding to dt may be undecided (the callers' cheap
/// tests): notes it where v - |v| 2^-(P/2) and v + |v| 2^-(P/2) round to different values.
template <class T>
void check_rounding(const T& v, DType dt, Rounding mode = Rounding::nearest_even) {
  using std::abs;
  using std::ldexp;
  const T d = ldexp(abs(v), -(std::numeric_limits<T>::digits / 2));
  if (round_to(dt, T(v - d), mode) != round_to(dt, T(v + d), mode)) note_undecided_rounding();
}

/// Whether a stored value is known exact in T (a sum of inputs, exact at the working
/// precision): its roundings need no test, and one on a boundary would rerun for nothing
/// (every bf16 x + residual that is a bf16 midpoint).
enum class Exact : bool { no, yes };

/// Stores the exact value v of element i of a make_output() output: rounded once to binary64
/// and once to a long double, kept as such (f64 outputs) or as its tail against the binary64
/// (spec/exact.hpp); not its rounding to the output dtype. For MPFR, a binary64 rounding
/// that may be undecided is tested (check_rounding): its long double is then a midpoint.
template <class T>
void put_exact(ExactOutput& o, std::int64_t i, const T& v, Exact exact = Exact::no) {
  const auto k = static_cast<std::size_t>(i);
  const double r = round_to(DType::f64, v);
  o.exact64[k] = r;
  if (!o.exact.empty()) {
    o.exact[k] = static_cast<long double>(v);
    if constexpr (kMultiprecision<T>)
      if (exact == Exact::no && is_binary64_midpoint(o.exact[k], r)) check_rounding(v, DType::f64);
  } else {
    // (a midpoint's tail: +-2^-53, or +-2^-54 on the side of a power of two toward zero)
    const float t = o.tail[k] = long_double_tail(v, r);
    if constexpr (kMultiprecision<T>)
      if (exact == Exact::no && (t == 0x1p-53f || t == -0x1p-53f || t == 0x1p-54f || t == -0x1p-54f) && is_binary64_midpoint(o.exact_at(k), r))
        check_rounding(v, DType::f64);
  }
}

/// For MPFR: v's rounding to dt (narrower than binary64) tested (check_rounding) where v's
/// binary64 rounding r is a midpoint of dt. For roundings stored outside put(): quantized
/// values, a scale stored in binary32 that later values divide by.
/// (mode toward_zero, the quantizing norms' option: the boundaries are dt's nonzero values.)
template <class T>
void test_rounding(DType dt, const T& v, double r, Rounding mode = Rounding::nearest_even) {
  if constexpr (kMultiprecision<T>) {
    if (dt == DType::f64 || !std::isfinite(r)) return;
    const bool boundary = mode == Rounding::toward_zero ? r != 0 && round_to(dt, r, mode) == r : is_midpoint_of(dt, r);
    if (boundary) check_rounding(v, dt, mode);
  }
}
template <class T>
void test_rounding(DType dt, const T& v, Rounding mode = Rounding::nearest_even) {
  if constexpr (kMultiprecision<T>) test_rounding(dt, v, round_to(DType::f64, v), mode);
}

/// v rounded once (RNE) to dt, its rounding tested for MPFR (test_rounding; r: v's binary64
/// rounding).
template <class T>
double round_output(DType dt, const T& v, double r) {
  test_rounding(dt, v, r);
  return round_to(dt, v);
}

/// Stores the exact value v of element i (put_exact), rounded once (RNE) to the output dtype,
/// with its condition magnitude c (absolute units).
template <class T>
void put(ExactOutput& o, std::int64_t i, const T& v, double c, Exact exact = Exact::no) {
  put_exact(o, i, v, exact);
  if (!o.rounding_derived(static_cast<std::size_t>(i))) {
    if (exact == Exact::no) test_rounding(o.dtype, v, o.exact64[static_cast<std::size_t>(i)]);
    o.set_rounded(static_cast<std::size_t>(i), round_to(o.dtype, v));
  }
  o.cond.set(static_cast<std::size_t>(i), c);
}

}  // namespace normcheck::reference::detail
