// Pieces shared by the family references (batch_norm.hpp, group_norm.hpp,
// l2_normalize.hpp, ada_norm.hpp, qk_norm.hpp): loading inputs into T and storing one
// exact value with its single rounding and its condition magnitude.
#pragma once

#include <cstdint>
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
  ExactOutput o{Tensor(dt, s), {}, {}, {}, {}};
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

/// Stores the exact value v of element i of a make_output() output: rounded once to binary64
/// and once to a long double, kept as such (f64 outputs) or as its tail against the binary64
/// (spec/exact.hpp); not its rounding to the output dtype.
template <class T>
void put_exact(ExactOutput& o, std::int64_t i, const T& v) {
  const auto k = static_cast<std::size_t>(i);
  const double r = round_to(DType::f64, v);
  o.exact64[k] = r;
  if (!o.exact.empty()) o.exact[k] = static_cast<long double>(v);
  else o.tail[k] = long_double_tail(v, r);
}

/// Stores the exact value v of element i (put_exact), rounded once (RNE) to the output dtype,
/// with its condition magnitude c (absolute units).
template <class T>
void put(ExactOutput& o, std::int64_t i, const T& v, double c) {
  put_exact(o, i, v);
  o.rounded.set(i, round_to(o.rounded.dtype(), v));
  o.cond[static_cast<std::size_t>(i)] = c;
}

}  // namespace normcheck::reference::detail
