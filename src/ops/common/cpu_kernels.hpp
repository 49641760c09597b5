// The CPU kernels of the bundled ops (each in its op's folder), for the op table and tests.
// Each writes every output the op defines (forward: y, ...; backward: dx, dgamma, ...);
// the accumulation order and error bound of each are in its file.
#pragma once

#include "spec/op.hpp"

namespace normcheck::kernels::cpu {

void layer_norm_forward(const Problem& p, Outputs& out);    ///< ops/layer_norm/cpu.cpp
void rms_norm_forward(const Problem& p, Outputs& out);      ///< ops/rms_norm/cpu.cpp
void group_norm_forward(const Problem& p, Outputs& out);    ///< group_norm, instance_norm
void batch_norm_forward(const Problem& p, Outputs& out);    ///< batch_norm
void l2_normalize_forward(const Problem& p, Outputs& out);  ///< l2_normalize, scale_norm
void ada_norm_forward(const Problem& p, Outputs& out);      ///< ada_layer_norm, ada_rms_norm
void qk_norm_forward(const Problem& p, Outputs& out);       ///< qk_norm

void layer_norm_backward(const Problem& p, Outputs& out);    ///< dx, dgamma, dbeta
void rms_norm_backward(const Problem& p, Outputs& out);      ///< dx, dgamma, dbeta
void group_norm_backward(const Problem& p, Outputs& out);    ///< group_norm, instance_norm: dx, dgamma, dbeta
void batch_norm_backward(const Problem& p, Outputs& out);    ///< training (through the batch statistics) and eval
void l2_normalize_backward(const Problem& p, Outputs& out);  ///< l2_normalize: dx; scale_norm: dx, dg
void ada_norm_backward(const Problem& p, Outputs& out);      ///< ada_layer_norm, ada_rms_norm: dx, ds, db

}  // namespace normcheck::kernels::cpu
