#include "reference/reference.hpp"

#include <boost/multiprecision/mpfr.hpp>

#include "reference/families.hpp"
#include "reference/row_norm.hpp"

namespace normcheck::reference {

namespace mp = boost::multiprecision;
// Digits10 for >= 256, 512, 2304 bits (bits ~ 3.3219 * digits10).
using mp256 = mp::number<mp::mpfr_float_backend<78>, mp::et_off>;
using mp512 = mp::number<mp::mpfr_float_backend<155>, mp::et_off>;
using mp2304 = mp::number<mp::mpfr_float_backend<694>, mp::et_off>;

int working_bits(DType t) noexcept {
  switch (t) {
    case DType::f16: return 256;
    case DType::f32: case DType::bf16: return 512;
    case DType::f64: return 2304;
  }
  return 2304;
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
                  std::vector<double>(static_cast<std::size_t>(x.size()))};
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
  if (p.op != Op::layer_norm && p.op != Op::rms_norm) return detail::evaluate_family_exact(p);
  switch (p.x().dtype()) {
    case DType::f16: return evaluate_rows<mp256>(p);
    case DType::f32: case DType::bf16: return evaluate_rows<mp512>(p);
    case DType::f64: return evaluate_rows<mp2304>(p);
  }
  return evaluate_rows<mp2304>(p);
}

ExactOutputs evaluate_double(const Problem& p) {
  if (p.op != Op::layer_norm && p.op != Op::rms_norm) return detail::evaluate_family_double(p);
  return evaluate_rows<double>(p);
}

}  // namespace normcheck::reference
