#include "reference/reference.hpp"

#include <algorithm>
#include <climits>
#include <cmath>

#include "reference/precision.hpp"

#include "reference/backward.hpp"
#include "reference/families.hpp"
#include "reference/row_norm.hpp"

namespace normcheck::reference {

using detail::at_working_precision;

int working_bits(const Problem& p) {
  // Over every input (x, parameters, modulations, running stats): the widest exponent range
  // and precision; log2 of the largest input size bounds log2 m for every op.
  int emax = INT_MIN, emin = INT_MAX, prec = 0;
  std::int64_t n = 1;
  for (const auto& [name, t] : p.inputs) {
    prec = std::max(prec, format_info(t.dtype()).precision);
    n = std::max(n, t.size());
    for (std::int64_t i = 0; i < t.size(); ++i) {
      const double v = t.get(i);
      if (v == 0 || !std::isfinite(v)) continue;
      int e = 0;
      std::frexp(v, &e);
      emax = std::max(emax, e);
      emin = std::min(emin, e);
    }
  }
  int log2m = 0;
  while ((std::int64_t{1} << log2m) < n) ++log2m;
  const int range = emax == INT_MIN ? 0 : emax - emin;
  return std::max(range + prec + log2m + 1, 160 + log2m);
}

namespace {

template <class T>
std::vector<T> load(const Tensor* t) {
  std::vector<T> v;
  if (!t) return v;
  v.reserve(static_cast<std::size_t>(t->size()));
  for (std::int64_t i = 0; i < t->size(); ++i) v.emplace_back(t->get(i));
  return v;
}

template <class T>
ExactOutputs evaluate_rows(const Problem& p) {
  validate(p);
  const RowLayout l = row_layout(p);
  const std::vector<T> gamma = load<T>(p.input("gamma")), beta = load<T>(p.input("beta"));
  const Tensor& x = p.x();
  ExactOutput out{Tensor(p.out_dtype, x.shape()), std::vector<long double>(static_cast<std::size_t>(x.size())),
                  std::vector<double>(static_cast<std::size_t>(x.size())), std::vector<double>(static_cast<std::size_t>(x.size()))};
  const bool center = centers(p.op);
#pragma omp parallel for schedule(dynamic, 1)
  for (std::int64_t r = 0; r < l.rows; ++r) {
    std::vector<T> xr(static_cast<std::size_t>(l.m)), yr(static_cast<std::size_t>(l.m));
    for (std::int64_t j = 0; j < l.m; ++j) xr[j] = T(x.get(r * l.m + j));
    normalize_group(xr.data(), l.m, center, p.conv, gamma.data(), beta.data(), yr.data(),
                    out.cond.data() + r * l.m);
    for (std::int64_t j = 0; j < l.m; ++j) {
      const std::int64_t i = r * l.m + j;
      out.exact[i] = static_cast<long double>(yr[j]);
      out.exact64[i] = round_to(DType::f64, yr[j]);
      out.rounded.set(i, round_to(p.out_dtype, yr[j]));
    }
  }
  ExactOutputs o;
  o.emplace("y", std::move(out));
  return o;
}

}  // namespace

ExactOutputs evaluate_exact(const Problem& p) {
  validate(p);
  if (p.conv.direction == Direction::backward) return detail::evaluate_backward_exact(p);
  if (p.op != Op::layer_norm && p.op != Op::rms_norm) return detail::evaluate_family_exact(p);
  return at_working_precision(p, [&](auto t) { return evaluate_rows<typename decltype(t)::type>(p); });
}

ExactOutputs evaluate_double(const Problem& p) {
  if (p.conv.direction == Direction::backward) return detail::evaluate_backward_double(p);
  if (p.op != Op::layer_norm && p.op != Op::rms_norm) return detail::evaluate_family_double(p);
  return evaluate_rows<double>(p);
}

}  // namespace normcheck::reference
