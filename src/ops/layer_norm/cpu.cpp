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
// condition magnitude of ops/common/row_norm.hpp; typically sqrt(m/8) u c_i
// (checks/budget.cpp turns this into the default gate).
#include "ops/common/row_kernel.hpp"
#include "ops/common/cpu_kernels.hpp"
#include "ops/common/cpu_rows_fast.hpp"

namespace normcheck::kernels::cpu {

void layer_norm_forward(const Problem& p, Outputs& out) {
  // Every element of y and of the statistics is written below (no zero fill).
  Tensor y(p.out_dtype, p.x().shape(), Tensor::Uninitialized{});
  // The saved statistics (optional outputs): mean and rstd per row.
  const std::int64_t rows = row_layout(p).rows;
  Tensor mean(saved_stat_dtype(p), Shape{rows}, Tensor::Uninitialized{}), rstd(saved_stat_dtype(p), Shape{rows}, Tensor::Uninitialized{});
  if (detail::normalize_rows_fast(p, y, true, &mean, &rstd)) {
  } else if (p.x().dtype() == DType::f64 || p.conv.acc_dtype == DType::f64) detail::normalize_rows<double>(p, y, true, &mean, &rstd);
  else detail::normalize_rows<float>(p, y, true, &mean, &rstd);
  out["y"] = std::move(y);
  out["mean"] = std::move(mean);
  out["rstd"] = std::move(rstd);
}

}  // namespace normcheck::kernels::cpu
