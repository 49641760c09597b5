// CPU layer_norm forward: stable two-pass kernel with binary32 accumulation for
// f16/bf16/f32 inputs (binary64 for f64), rows spread over OpenMP threads.
//
// Per row of m values (row_kernel.hpp for the shared pieces):
//   0. load (convert to the accumulation type A), scan max|x| and finiteness;
//      a row holding NaN/inf gives NaN everywhere;
//   1. scale by s = 2^-e (exact), mu_s = blocked_sum(x s) / m;
//   2. ss = blocked_sum((x s - mu_s)^2)          (two-pass: no E[x^2]-E[x]^2 cancellation)
//   3. r = 1 / D_s(ss / m') in binary64, rounded once to A;
//   4. y = ((x s - mu_s) r) gamma + beta, rounded once to the output dtype.
// Error bound (A with unit roundoff u): the mean carries <= (m/8 + 4) u (1/m) sum|x|,
// the centered values one more u, the variance <= (m/8 + 6) u relative, the denominator
// and the products about 4u: |y^ - y| <= ulp_out/2 + (m/8 + 10) u c_i worst case, with c_i the
// condition magnitude of reference/row_norm.hpp; typically sqrt(m/8) u c_i
// (checks/budget.cpp turns this into the default gate).
#include <omp.h>

#include "kernels/cpu/row_kernel.hpp"
#include "kernels/cpu/row_norm.hpp"

namespace normcheck::kernels::cpu {

namespace {

template <class A>
void layer_norm_rows(const Problem& p, Tensor& y) {
  using namespace detail;
  const RowLayout l = row_layout(p);
  const Tensor& x = p.x();
  const AffineParams<A> aff(p);
  const std::int64_t dof = p.conv.variance == Variance::unbiased ? l.m - 1 : l.m;
#pragma omp parallel if (l.rows * l.m > 32768)
  {
    std::vector<A> buf(static_cast<std::size_t>(l.m));
#pragma omp for schedule(static)
    for (std::int64_t r = 0; r < l.rows; ++r) {
      A* a = buf.data();
      load_row(x, r * l.m, l.m, a);
      A amax;
      bool nonfinite;
      scan_row(a, l.m, amax, nonfinite);
      if (nonfinite) {
        nan_row(a, l.m);
      } else {
        const double s = row_scale(static_cast<double>(amax), sizeof(A) == 4 ? 100 : 1000);
        const A sa = static_cast<A>(s);
        for (std::int64_t j = 0; j < l.m; ++j) a[j] *= sa;  // exact
        const A mu = blocked_sum(a, l.m, [](A v) { return v; }) / static_cast<A>(l.m);
        for (std::int64_t j = 0; j < l.m; ++j) a[j] -= mu;
        const A ss = blocked_sum(a, l.m, [](A v) { return v * v; });
        const A rstd = static_cast<A>(inv_scaled_denominator(static_cast<double>(ss) / static_cast<double>(dof), s, ss == 0, p.conv));
        for (std::int64_t j = 0; j < l.m; ++j) a[j] *= rstd;
        aff.apply(a, l.m);
      }
      store_row(y, r * l.m, l.m, a);
    }
  }
}

}  // namespace

void layer_norm_forward(const Problem& p, Outputs& out) {
  Tensor y(p.out_dtype, p.x().shape());
  if (p.x().dtype() == DType::f64 || p.conv.acc_dtype == DType::f64) layer_norm_rows<double>(p, y);
  else layer_norm_rows<float>(p, y);
  out["y"] = std::move(y);
}

}  // namespace normcheck::kernels::cpu
