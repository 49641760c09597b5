// CPU layer_norm backward: dx, dgamma, dbeta with binary32 accumulation for f16/bf16/f32
// (binary64 for f64 or acc_dtype f64). Algorithm and error bound: row_backward.hpp and
// backward_kernel.hpp (dx = rstd (g dy - mean(g dy) - n mean(g dy n)), n the forward
// kernel's, the row scaled by 2^-e as the forward does, dy by its own 2^-e).
#include "ops/common/cpu_kernels.hpp"
#include "ops/common/row_backward.hpp"

namespace normcheck::kernels::cpu {

void layer_norm_backward(const Problem& p, Outputs& out) {
  if (detail::use_f64(p)) detail::row_norm_backward_rows<double>(p, out, true);
  else detail::row_norm_backward_rows<float>(p, out, true);
}

}  // namespace normcheck::kernels::cpu
