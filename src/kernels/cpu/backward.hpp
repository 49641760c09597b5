// CPU backward kernels (direction = backward): declarations. Each takes a validated backward
// Problem (inputs as the forward's plus dy, the shape of x) and writes every output
// output_shapes() defines in out_dtype: dx, and dgamma / dbeta (ds / db; dg) per the op and
// its affine convention. Accumulation in binary32 for f16/bf16/f32 inputs, binary64 for f64
// (or acc_dtype f64). Numerics: backward_kernel.hpp and each kernel's file comment.
#pragma once

#include "spec/op.hpp"

namespace normcheck::kernels::cpu {

void layer_norm_backward(const Problem& p, Outputs& out);    ///< dx, dgamma, dbeta
void rms_norm_backward(const Problem& p, Outputs& out);      ///< dx, dgamma, dbeta
void group_norm_backward(const Problem& p, Outputs& out);    ///< group_norm, instance_norm: dx, dgamma, dbeta
void batch_norm_backward(const Problem& p, Outputs& out);    ///< training (through the batch statistics) and eval
void l2_normalize_backward(const Problem& p, Outputs& out);  ///< l2_normalize: dx; scale_norm: dx, dg
void ada_norm_backward(const Problem& p, Outputs& out);      ///< ada_layer_norm, ada_rms_norm: dx, ds, db

}  // namespace normcheck::kernels::cpu
