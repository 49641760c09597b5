// Reference for l2_normalize and scale_norm, a plain loop template on the number type T.
//
// Formulas (shared/spec/worked-examples.md "Formulas"): over each group of m values along
// the reduced axes (spec/op.hpp reduced_axes), with the sum of squares v = sum_j x_j^2
// (not a mean: no variance estimator) and D = D(v) per eps_placement (clamp_norm, the
// default, gives max(||x||_2, eps) as torch.nn.functional.normalize):
//   l2_normalize: y_i = x_i / D;     scale_norm: y_i = g x_i / D  (g one learned scalar).
// The zero vector gives 0 for eps > 0 (0/0 = NaN for eps = 0). A group holding NaN or an
// infinity gives NaN for its m outputs only.
//
// Condition magnitude: dy_i/dx_j = g (delta_ij / D - k x_i x_j / D^3) with k the
// denominator sensitivity (row_norm.hpp: 1 when D = sqrt(v + eps) or ||x|| >= eps,
// 0 when the clamp holds), so by the triangle inequality
//   sum_j |dy_i/dx_j x_j| <= |g|/D (|x_i| + k |n_i| sum_j x_j^2 / D),   n_i = x_i / D,
// plus the affine term |dy_i/dg g| = |g n_i|: O(m) per group.
// Exactness: the sum of squares of m values has relative error <= (m+1) 2^-P (no
// cancellation), each further operation 2^-P.
#pragma once

#include "ops/common/certified_rows.hpp"
#include "ops/common/family_common.hpp"
#include "ops/common/row_norm.hpp"
#include "spec/layout.hpp"

namespace normcheck::reference {

/// y_i = gain x_i / D(sum x^2) for one group of m values, with cond as above.
template <class T>
void l2_group(const T* x, std::int64_t m, const Convention& c, const T& gain, T* y, double* cond) {
  using std::abs; using std::isfinite;
  bool finite = true;
  for (std::int64_t j = 0; j < m; ++j) finite = finite && isfinite(x[j]);
  if (!finite) {
    for (std::int64_t j = 0; j < m; ++j) { y[j] = T(NAN); cond[j] = NAN; }
    return;
  }
  T ss(0);
  for (std::int64_t j = 0; j < m; ++j) ss += x[j] * x[j];
  const T D = denominator(ss, c);
  const T k = denominator_sensitivity(ss, D, c);
  const T g = abs(gain), ssd = ss / D;
  for (std::int64_t j = 0; j < m; ++j) {
    const T n = x[j] / D;
    y[j] = gain * n;
    cond[j] = static_cast<double>(g / D * (abs(x[j]) + k * abs(n) * ssd) + g * abs(n));
  }
}

/// l2_normalize / scale_norm forward in T; with `fast`, each group first in double-double
/// with a certified radius (ops/common/certified_rows.hpp: bit-identical to T's result).
template <class T>
ExactOutputs l2_normalize(const Problem& p, bool fast = false) {
  const Tensor& x = p.x();
  const ReductionLayout l = reduction_layout(x.shape(), reduced_axes(p));
  const double gain = p.op == Op::scale_norm ? p.inputs.at("g").get(0) : 1.0;
  const auto m = static_cast<std::int64_t>(l.member.size());
  ExactOutput y = detail::make_output(p.out_dtype, x.shape());
  // One group in U (T or DDBall), every output of the group written.
  auto one_group = [&](std::int64_t g, auto tag) {
    using U = typename decltype(tag)::type;
    std::vector<U> xg(static_cast<std::size_t>(m)), yg(xg.size());
    std::vector<double> cg(xg.size());
    for (std::int64_t j = 0; j < m; ++j) xg[j] = U(x.get(l.base[g] + l.member[j]));
    l2_group(xg.data(), m, p.conv, U(gain), yg.data(), cg.data());
    for (std::int64_t j = 0; j < m; ++j) detail::put(y, l.base[g] + l.member[j], yg[j], cg[j]);
  };
  detail::certified_rows<T>(static_cast<std::int64_t>(l.base.size()), fast, x.size() > detail::kParallelMin, one_group);
  ExactOutputs o;
  o.emplace("y", std::move(y));
  return o;
}

}  // namespace normcheck::reference
