// CPU kernels for the row-wise normalizations (layer_norm, rms_norm): declarations.
#pragma once

#include "spec/op.hpp"

namespace normcheck::kernels::cpu {

/// layer_norm forward on a validated Problem (x: [..., normalized_shape], row-major;
/// gamma/beta: normalized_shape, any dtype). Writes outputs["y"] (shape of x, out_dtype).
/// Numerics: see layer_norm.cpp.
void layer_norm_forward(const Problem& p, Outputs& out);
/// rms_norm forward, same layout. Numerics: see rms_norm.cpp.
void rms_norm_forward(const Problem& p, Outputs& out);

}  // namespace normcheck::kernels::cpu
