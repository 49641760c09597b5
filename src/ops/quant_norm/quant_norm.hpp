// Norm + quantization (rms_norm_quant, layer_norm_quant), the fused kernels inference engines
// run in front of FP8 / int8 GEMMs (vLLM rms_norm_static_fp8_quant and
// rms_norm_dynamic_per_token_quant, TensorRT-LLM's RMSNorm quantization plugins):
//
//   [h = x + residual (+ bias), z = h as stored or unrounded (ops/fused_add_norm), or z = x]
//   y   = norm(z) with the affine (layer_norm / rms_norm), exact
//   s   = scale (static_per_tensor: input "scale" [1]; dynamic_per_token: per row
//         max(max_j |y_j| / qmax, scale_floor), qmax = 448 (e4m3fn), 57344 (e5m2), 127 (int8),
//         returned as output "scale" [rows], binary32)
//   y_q = Q(y / s), Q = round per `rounding` (nearest_even | nearest_away) into out_dtype,
//         with `saturate` clamped to +-qmax first (int8 [-128, 127]); without it an
//         out-of-range value becomes what the format makes of it (e5m2 +-inf, e4m3fn NaN).
// scale_form = multiplier: the scale (given or returned) is 1/s and y_q = Q(y * scale).
// int8 has no NaN: a NaN y / s (a row holding NaN or inf, an all-zero row without a floor:
// 0/0) is 0, as CUDA's cvt.rni.sat.s8.f32 and PyTorch's cast give.
#pragma once

#include "core/dtype.hpp"
#include "spec/op.hpp"

namespace normcheck::ops::quant {

/// The largest finite magnitude of a quantized dtype: 448, 57344, 127.
double quant_max(DType t) noexcept;

/// Q(v): v rounded to out_dtype per the convention's rounding and saturation.
template <class Real>
double quantize(DType out, const Convention& c, const Real& v) {
  return c.saturate ? round_to_saturating(out, v, c.rounding) : round_to(out, v, c.rounding);
}

/// The faults of the mutants, injected into the CPU kernel (cpu.cpp).
struct Faults {
  bool no_saturation = false;  ///< out-of-range values follow the format (inf / NaN) where the convention saturates
  bool toward_zero = false;    ///< truncation instead of round to nearest
  bool scale_pre_gamma = false;///< dynamic scale from max |n| (before the affine) instead of max |y|
  bool per_tensor = false;     ///< one dynamic scale for the whole tensor (max over every row)
};

/// The CPU kernel: y (quantized), scale (dynamic), h (with a residual).
void cpu(const ValidProblem& p, Outputs& out);
Outputs cpu_with(const Problem& p, const Faults& f);

}  // namespace normcheck::ops::quant
