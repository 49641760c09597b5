// CUDA rms_norm forward, binary32 accumulation for f32/f16/bf16 storage (binary64 for f64
// data or an f64 accumulation convention).
//
// Per row (row_norm_body.hpp): scan max|x| and finiteness (NaN/inf row -> NaN), scale by
// s = 2^-e (exact), ss = sum (x s)^2 (fma per square; all terms >= 0, so the sum's
// relative error is at most gamma(n_t + 10)), r = 1 / D_s(ss / dof) in binary64 rounded
// once to binary32, y = (x s) r, then the affine step, rounded once to the output dtype.
// Work split, vector accesses and accumulation order as layer_norm.cu.
// Error bound: |y^ - y| <= ulp_out/2 + (n_t/2 + 10) u c_i worst case (the sum of squares
// enters through a square root), n_t <= d/G + W + 1; derivation in row_norm_body.hpp.
#include "kernels/cuda/row_norm.cuh"

namespace normcheck::kernels::cuda {

void launch_rms_norm(const RowNormArgs& a, const LaunchConfig& cfg, DType acc, void* stream) {
  detail::launch_row_norm<false>(a, cfg, acc, stream);
}

}  // namespace normcheck::kernels::cuda
