// The row loop of the layer_norm / rms_norm backward kernels (layer_norm_backward.cpp,
// rms_norm_backward.cpp): x viewed as [rows, m], rows over OpenMP threads.
//
// Pass 1 (rows in parallel): load x and dy into A buffers, group_backward_in_place
// (backward_kernel.hpp: the forward's n, then dx = (a - mean(a) - (k/m') n S) / D with
// a = g dy), store dx; keep n (A) for pass 2 when the convention has parameters.
// Pass 2 (columns in parallel): dgamma_j = sum_r dy_rj n_rj and dbeta_j = sum_r dy_rj over
// the R = rows values of column j, kLanes partial sums over r (the accumulation order of
// blocked_sum): error <= (R/8 + 4) u sum |dy n| worst case, ~ sqrt(R/8) u in practice, plus
// n's own error through |dy| nu: within the gate's sqrt(R) + sqrt(m) (checks/budget.cpp).
#pragma once

#include "core/region_errors.hpp"
#include "ops/common/backward_kernel.hpp"
#include "spec/layout.hpp"

namespace normcheck::kernels::cpu::detail {

template <class A>
void row_norm_backward_rows(const Problem& p, Outputs& out, bool center) {
  const RowLayout l = row_layout(p);
  const Tensor& x = p.x();
  const Tensor& dy = p.inputs.at("dy");
  const std::vector<A> gain = affine_gain<A>(p);
  const bool params = !gain.empty();
  const std::int64_t dof = dof_of(p.conv, l.m);
  Tensor dx(p.out_dtype, x.shape());
  std::vector<A> nall(params ? static_cast<std::size_t>(x.size()) : 0);
  RegionErrors errors;  // (core/region_errors.hpp: an exception may not leave the region)
#pragma omp parallel if (l.rows * l.m > 32768)
  {
    std::vector<A> xb, gb;
    errors.run([&] { xb.resize(static_cast<std::size_t>(l.m)); gb.resize(xb.size()); });
#pragma omp for schedule(static)
    for (std::int64_t r = 0; r < l.rows; ++r) errors.run([&] {
      load_row(x, r * l.m, l.m, xb.data());
      load_row(dy, r * l.m, l.m, gb.data());
      group_backward_in_place(xb.data(), gb.data(), l.m, center, dof, p.conv, params ? gain.data() : nullptr);
      store_row(dx, r * l.m, l.m, gb.data());
      if (params) std::copy(xb.begin(), xb.end(), nall.begin() + r * l.m);
    });
  }
  errors.rethrow();
  out["dx"] = std::move(dx);
  if (!params) return;
  std::vector<A> dgamma(static_cast<std::size_t>(l.m)), dbeta(dgamma.size());
  const Reader<A> rd{dy.data(), dy.dtype()};
#pragma omp parallel for schedule(static) if (l.rows * l.m > 32768)
  for (std::int64_t j = 0; j < l.m; ++j) {
    dgamma[j] = blocked_sum_n<A>(l.rows, [&](std::int64_t r) { return rd(r * l.m + j) * nall[r * l.m + j]; });
    dbeta[j] = blocked_sum_n<A>(l.rows, [&](std::int64_t r) { return rd(r * l.m + j); });
  }
  store_param_grads(p, out, dgamma, dbeta);
}

}  // namespace normcheck::kernels::cpu::detail
