#include "ops/common/row_reference.hpp"

#include "ops/common/family_common.hpp"
#include "ops/common/precision.hpp"
#include "ops/common/row_norm.hpp"
#include "ops/common/row_norm_backward.hpp"
#include "spec/layout.hpp"
#include "spec/op_def.hpp"

namespace normcheck::reference {

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

  const RowLayout l = row_layout(p);
  const std::vector<T> gamma = load<T>(p.input("gamma")), beta = load<T>(p.input("beta"));
  const Tensor& x = p.x();
  ExactOutput out{Tensor(p.out_dtype, x.shape()), std::vector<long double>(static_cast<std::size_t>(x.size())),
                  std::vector<double>(static_cast<std::size_t>(x.size())), std::vector<double>(static_cast<std::size_t>(x.size()))};
  const bool center = p.op.def().centers;
  // The saved statistics (optional outputs, ops/common/row_op.hpp): per row, in stat_dtype.
  const DType sdt = saved_stat_dtype(p);
  ExactOutput mean = detail::make_output(sdt, Shape{l.rows}), rstd = detail::make_output(sdt, Shape{l.rows});
#pragma omp parallel for schedule(dynamic, 1)
  for (std::int64_t r = 0; r < l.rows; ++r) {
    std::vector<T> xr(static_cast<std::size_t>(l.m)), yr(static_cast<std::size_t>(l.m));
    for (std::int64_t j = 0; j < l.m; ++j) xr[j] = T(x.get(r * l.m + j));
    GroupStatistics<T> st;
    normalize_group(xr.data(), l.m, center, p.conv, gamma.data(), beta.data(), yr.data(),
                    out.cond.data() + r * l.m, static_cast<const T*>(nullptr), &st);
    for (std::int64_t j = 0; j < l.m; ++j) {
      const std::int64_t i = r * l.m + j;
      out.exact[i] = static_cast<long double>(yr[j]);
      out.exact64[i] = round_to(DType::f64, yr[j]);
      out.rounded.set(i, round_to(p.out_dtype, yr[j]));
    }
    detail::put(mean, r, st.mean, st.c_mean);
    detail::put(rstd, r, st.rstd, st.c_rstd);
  }
  ExactOutputs o;
  o.emplace("y", std::move(out));
  if (center) o.emplace("mean", std::move(mean));
  o.emplace("rstd", std::move(rstd));
  return o;
}

}  // namespace


template <class T>
ExactOutputs rows(const Problem& p) {
  return p.conv.direction == Direction::backward ? row_norm_backward<T>(p) : evaluate_rows<T>(p);
}

ExactOutputs row_reference(const ValidProblem& vp) {
  const Problem& p = *vp;
  return detail::at_working_precision(p, [&](auto t) { return rows<typename decltype(t)::type>(p); });
}

ExactOutputs row_reference_double(const ValidProblem& vp) { return rows<double>(*vp); }

}  // namespace normcheck::reference
