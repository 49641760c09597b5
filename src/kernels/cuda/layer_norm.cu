// CUDA layer_norm forward: stable two-pass kernel, binary32 accumulation for f32/f16/bf16
// storage (binary64 for f64 data or an f64 accumulation convention).
//
// Per row (row_norm_body.hpp): scan max|x| and finiteness (NaN/inf row -> NaN), scale by
// s = 2^-e (exact), mu = (sum x s) / d, ss = sum (x s - mu)^2 (fma per square),
// r = 1 / D_s(ss / dof) in binary64 rounded once to binary32, y = (x s - mu) r, then the
// affine step, rounded once to the output dtype. Work split: one warp per row for
// d <= 1024, one block per row above (launch.hpp); 16-byte vector accesses when the row
// starts allow, scalar tail. Accumulation order: per-thread sequential sums in column
// order, then a 32-lane butterfly (and one over the warps of a block).
// Error bound: |y^ - y| <= ulp_out/2 + (n_t + 16) u c_i worst case, n_t <= d/G + W + 1 the
// per-thread length (G threads per row, W the vector width), typically
// (sqrt(n_t + 10) + 6) u c_i; derivation in row_norm_body.hpp.
#include "kernels/cuda/row_norm.cuh"

namespace normcheck::kernels::cuda {

void launch_layer_norm(const RowNormArgs& a, const LaunchConfig& cfg, DType acc, void* stream) {
  detail::launch_row_norm<true>(a, cfg, acc, stream);
}

}  // namespace normcheck::kernels::cuda
