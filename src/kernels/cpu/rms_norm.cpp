// CPU rms_norm forward, binary32 accumulation for f16/bf16/f32 (binary64 for f64).
//
// Per row: load, scan max|x| and finiteness (NaN/inf row -> NaN), scale by s = 2^-e
// (exact), ss = blocked_sum((x s)^2) (all terms >= 0: relative error <= (m/8 + 4) u),
// r = 1 / D_s(ss / m') in binary64 rounded once to A, y = (x s r) gain (+ beta).
// Error bound: |y^ - y| <= ulp_out/2 + (m/16 + 8) u c_i (c_i from reference/row_norm.hpp).
#include "kernels/cpu/row_kernel.hpp"
#include "kernels/cpu/row_norm.hpp"

namespace normcheck::kernels::cpu {

namespace {

template <class A>
void rms_norm_rows(const Problem& p, Tensor& y) {
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
        const A ss = blocked_sum(a, l.m, [](A v) { return v * v; });
        const A r_inv = static_cast<A>(inv_scaled_denominator(static_cast<double>(ss) / static_cast<double>(dof), s, ss == 0, p.conv));
        for (std::int64_t j = 0; j < l.m; ++j) a[j] *= r_inv;
        aff.apply(a, l.m);
      }
      store_row(y, r * l.m, l.m, a);
    }
  }
}

}  // namespace

void rms_norm_forward(const Problem& p, Outputs& out) {
  Tensor y(p.out_dtype, p.x().shape());
  if (p.x().dtype() == DType::f64 || p.conv.acc_dtype == DType::f64) rms_norm_rows<double>(p, y);
  else rms_norm_rows<float>(p, y);
  out["y"] = std::move(y);
}

}  // namespace normcheck::kernels::cpu
