// CPU kernels of the normalization families: declarations. Each takes a validated Problem
// and writes every output the op defines (spec/op.hpp output_shapes) in out_dtype.
// Accumulation in binary32 for f16/bf16/f32 inputs, binary64 for f64 (or acc_dtype f64).
// Numerics: group_kernel.hpp and each kernel's file comment.
#pragma once

#include "spec/op.hpp"

namespace normcheck::kernels::cpu {

void group_norm_forward(const Problem& p, Outputs& out);    ///< group_norm, instance_norm
void batch_norm_forward(const Problem& p, Outputs& out);    ///< batch_norm
void l2_normalize_forward(const Problem& p, Outputs& out);  ///< l2_normalize, scale_norm
void ada_norm_forward(const Problem& p, Outputs& out);      ///< ada_layer_norm, ada_rms_norm
void qk_norm_forward(const Problem& p, Outputs& out);       ///< qk_norm

}  // namespace normcheck::kernels::cpu
