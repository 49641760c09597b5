// CPU rms_norm backward: dx = (1/D) (g dy - (k/m') n sum(g dy n)), dgamma (dL/dw for
// one_plus_w), dbeta; binary32 accumulation for f16/bf16/f32 (binary64 for f64). Algorithm
// and error bound: row_backward.hpp, backward_kernel.hpp (no centering).
#include "ops/common/cpu_kernels.hpp"
#include "ops/common/row_backward.hpp"

namespace normcheck::kernels::cpu {

void rms_norm_backward(const Problem& p, Outputs& out) {
  if (detail::use_f64(p)) detail::row_norm_backward_rows<double>(p, out, false);
  else detail::row_norm_backward_rows<float>(p, out, false);
}

}  // namespace normcheck::kernels::cpu
