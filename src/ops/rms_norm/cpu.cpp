// CPU rms_norm forward, binary32 accumulation for f16/bf16/f32 (binary64 for f64).
//
// Per row: load, scan max|x| and finiteness (NaN/inf row -> NaN), scale by s = 2^-e
// (exact), ss = blocked_sum((x s)^2) (all terms >= 0: relative error <= (m/8 + 4) u),
// r = 1 / D_s(ss / m') in binary64 rounded once to A, y = (x s r) gain (+ beta).
// Error bound: |y^ - y| <= ulp_out/2 + (m/16 + 8) u c_i (c_i from ops/common/row_norm.hpp).
#include "ops/common/row_kernel.hpp"
#include "ops/common/cpu_kernels.hpp"
#include "ops/common/cpu_rows_fast.hpp"

namespace normcheck::kernels::cpu {

void rms_norm_forward(const Problem& p, Outputs& out) {
  // Every element of y and of the statistics is written below (no zero fill).
  Tensor y(p.out_dtype, p.x().shape(), Tensor::Uninitialized{});
  // The saved statistics (optional outputs): rstd per row.
  const std::int64_t rows = row_layout(p).rows;
  Tensor rstd(saved_stat_dtype(p), Shape{rows}, Tensor::Uninitialized{});
  if (detail::normalize_rows_fast(p, y, false, nullptr, &rstd)) {
  } else if (p.x().dtype() == DType::f64 || p.conv.acc_dtype == DType::f64) detail::normalize_rows<double>(p, y, false, nullptr, &rstd);
  else detail::normalize_rows<float>(p, y, false, nullptr, &rstd);
  out["y"] = std::move(y);
  out["rstd"] = std::move(rstd);
}

}  // namespace normcheck::kernels::cpu
