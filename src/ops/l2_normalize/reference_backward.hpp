// Backward reference of l2_normalize and scale_norm, a plain loop template on T.
//
// Each group along the reduced axes is normalize_group_backward's (row_norm_backward.hpp)
// with no centering and m' = 1 (v = sum x^2, D = D(v), clamp_norm by default): with
// n = x / D, a = g dy (g = 1 for l2_normalize),
//   dx_j = (1/D) (a_j - k n_j sum_i a_i n_i)
// (the projection of a off n, scaled: the gradient of a scale-invariant map is orthogonal
// to x when k = 1; where the clamp holds, k = 0 and dx = a / eps). scale_norm also outputs
// dg = sum over every element of dy n (R = numel(x) values), c(dg) = sum (|dy n| + |dy| nu).
#pragma once

#include "core/region_errors.hpp"
#include "ops/common/row_norm_backward.hpp"
#include "spec/layout.hpp"

namespace normcheck::reference {

/// l2_normalize / scale_norm backward of a validated problem (groups along reduced_axes(p);
/// dy of x's shape): dx (x's shape), and for scale_norm dg (the shape of g).
template <class T>
ExactOutputs l2_normalize_backward(const Problem& p) {
  using std::abs;
  const Tensor& x = p.x();
  const Tensor& dyt = p.inputs.at("dy");
  const ReductionLayout l = reduction_layout(x.shape(), reduced_axes(p));
  const auto m = static_cast<std::int64_t>(l.member.size());
  const bool scaled = p.op == Op::scale_norm;
  const T g = scaled ? T(p.inputs.at("g").get(0)) : T(1);
  const std::vector<T> gain(scaled ? static_cast<std::size_t>(m) : 0, g);
  ExactOutput dx = detail::make_output(p.out_dtype, x.shape());
  std::vector<T> nall(static_cast<std::size_t>(x.size())), nuall(nall.size());
  RegionErrors errors;  // (core/region_errors.hpp: an exception may not leave the region)
#pragma omp parallel for schedule(dynamic, 1) if (x.size() > detail::kParallelMin)
  for (std::size_t grp = 0; grp < l.base.size(); ++grp) errors.run([&] {
    std::vector<T> xg(static_cast<std::size_t>(m)), dg(xg.size()), gx(xg.size()), n(xg.size()), nu(xg.size());
    std::vector<double> cg(xg.size());
    for (std::int64_t j = 0; j < m; ++j) {
      xg[j] = T(x.get(l.base[grp] + l.member[j]));
      dg[j] = T(dyt.get(l.base[grp] + l.member[j]));
    }
    normalize_group_backward(xg.data(), dg.data(), m, false, 1, p.conv, scaled ? gain.data() : nullptr,
                             scaled ? gain.data() : nullptr, gx.data(), cg.data(), n.data(), nu.data());
    for (std::int64_t j = 0; j < m; ++j) {
      const std::int64_t e = l.base[grp] + l.member[j];
      detail::put(dx, e, gx[j], cg[j]);
      nall[e] = n[j];
      nuall[e] = nu[j];
    }
  });
  errors.rethrow();
  ExactOutputs o;
  o.emplace("dx", std::move(dx));
  if (scaled) {
    ParamGrad<T> pg(1);
    for (std::int64_t i = 0; i < x.size(); ++i) pg.add(0, T(dyt.get(i)), nall[i], nuall[i]);
    pg.emit(o, p.out_dtype, p.inputs.at("g").shape(), true, false, "dg");
  }
  return o;
}

}  // namespace normcheck::reference
