#include "ops/common/row_reference.hpp"

#include <optional>

#include "ops/common/ball.hpp"
#include "ops/common/certified_rows.hpp"
#include "ops/common/family_common.hpp"
#include "ops/common/precision.hpp"
#include "ops/common/row_norm.hpp"
#include "ops/common/row_norm_backward.hpp"
#include "spec/layout.hpp"
#include "spec/op_def.hpp"

namespace normcheck::reference {

namespace {

/// The outputs of a forward row-norm problem, filled row by row.
struct RowOutputs {
  ExactOutput y, mean, rstd;
};

/// gamma and beta as T, loaded once per problem.
template <class T>
struct Params {
  std::vector<T> gamma, beta;
  explicit Params(const Problem& p) : gamma(detail::load_all<T>(p.input("gamma"))), beta(detail::load_all<T>(p.input("beta"))) {}
};

/// Evaluates row r of x in T and stores all of its outputs (each element of the row, so a
/// failed DDBall attempt's partial writes are overwritten). Throws Uncertain when T is
/// DDBall and its radius cannot decide.
template <class T>
void evaluate_row(const Problem& p, const RowLayout& l, std::int64_t r, const Params<T>& a, RowOutputs& o) {
  const Tensor& x = p.x();
  Scratch<T, 1> xr(l.m);  // row_norm.hpp: per-thread buffers for DDBall
  Scratch<T, 2> yr(l.m);
  Scratch<double, 9> cr(l.m);  // the row's condition magnitudes (ExactOutput keeps them in binary32)
  for (std::int64_t j = 0; j < l.m; ++j) xr[j] = T(x.get(r * l.m + j));
  GroupStatistics<T> st;
  normalize_group(xr.data(), l.m, p.op.def().centers, p.conv, a.gamma.data(), a.beta.data(), yr.data(),
                  cr.data(), static_cast<const T*>(nullptr), &st);
  for (std::int64_t j = 0; j < l.m; ++j) {
    const std::int64_t i = r * l.m + j;
    detail::put_exact(o.y, i, yr[j]);
    if (!o.y.rounding_derived(static_cast<std::size_t>(i)))
      o.y.set_rounded(static_cast<std::size_t>(i), detail::round_output(p.out_dtype, yr[j], o.y.exact64[static_cast<std::size_t>(i)]));
    o.y.cond.set(static_cast<std::size_t>(i), cr[j]);
  }
  detail::put(o.mean, r, st.mean, st.c_mean);
  detail::put(o.rstd, r, st.rstd, st.c_rstd);
}

/// Every row in double-double with a certified radius (DDBall) when the fast path is on,
/// and in T (MPFR) where that cannot decide or the fast path is off.
template <class T>
ExactOutputs evaluate_rows(const Problem& p, const bool fast) {
  const RowLayout l = row_layout(p);
  const Tensor& x = p.x();
  const DType sdt = saved_stat_dtype(p);  // the saved statistics (ops/common/row_op.hpp)
  RowOutputs o{detail::make_output(p.out_dtype, x.shape()), detail::make_output(sdt, Shape{l.rows}),
               detail::make_output(sdt, Shape{l.rows})};
  const Params<T> params(p);
  const std::optional<Params<DDBall>> params_dd = fast ? std::optional<Params<DDBall>>(p) : std::nullopt;
  detail::certified_rows<T>(l.rows, fast, true, [&](std::int64_t r, auto tag) {
    using U = typename decltype(tag)::type;
    if constexpr (std::is_same_v<U, DDBall>) evaluate_row<DDBall>(p, l, r, *params_dd, o);
    else evaluate_row<T>(p, l, r, params, o);
  });
  ExactOutputs out;
  out.emplace("y", std::move(o.y));
  if (p.op.def().centers) out.emplace("mean", std::move(o.mean));
  out.emplace("rstd", std::move(o.rstd));
  return out;
}

}  // namespace


template <class T>
ExactOutputs rows(const Problem& p, bool fast) {
  return p.conv.direction == Direction::backward ? row_norm_backward<T>(p) : evaluate_rows<T>(p, fast);
}

ExactOutputs row_reference(const ValidProblem& vp) {
  const Problem& p = *vp;
  return detail::at_working_precision(p, [&](auto t) { return rows<typename decltype(t)::type>(p, fast_path_enabled()); });
}

ExactOutputs row_reference_double(const ValidProblem& vp) { return rows<double>(*vp, false); }

}  // namespace normcheck::reference
