// Fused residual add + norm (fused_add_rms_norm, fused_add_layer_norm), the kernel inference
// engines run before every attention and MLP block (vLLM fused_add_rms_norm, TensorRT-LLM,
// SGLang, llama.cpp, ONNX Runtime's SkipLayerNormalization / SkipSimplifiedLayerNormalization):
//
//   h = x + residual (+ bias)             the updated residual stream, stored in the residual's dtype
//   z = round_h(h)   (norm_input = rounded: the norm reads what was stored; most engines)
//     | h            (norm_input = unrounded: the norm reads the wide sum)
//   y = norm(z) with the affine of layer_norm / rms_norm (ops/common/row_norm.hpp)
//
// Inputs x [..., normalized_shape], residual (x's shape, any float dtype: bf16 activations
// with an f32 residual stream), bias [normalized_shape] (optional), gamma, beta per affine.
// Outputs y (out_dtype) and h (the residual's dtype). These pieces are shared with the
// quantizing norms (ops/quant_norm), which take the residual optionally.
#pragma once

#include <map>
#include <string>

#include "spec/convention.hpp"
#include "spec/op_def.hpp"

namespace normcheck::ops::fused {

/// norm_input = "rounded" | "unrounded" (Convention::norm_input).
extern const ConventionKey kNormInput;

/// Whether the problem carries a residual (input "residual").
bool has_residual(const Problem& p) noexcept;
/// The residual rules: residual of x's shape and a float dtype (required iff `required`),
/// bias (optional) of shape normalized_shape and only with a residual.
void validate_residual(const Problem& p, bool required);
/// h's dtype: the residual's.
DType h_dtype(const Problem& p);
/// OpDef::sample's residual part (spec/sample.hpp): residual of x's shape in x's dtype or,
/// for narrow x, sometimes binary32 (bf16 activations with an f32 residual stream); bias
/// sometimes; norm_input rounded or unrounded.
void sample_residual(Sampler& s, Problem& p);

/// The CPU kernel (cpu.cpp): y and h. With `flip_norm_input` the norm reads the other value
/// (the unrounded sum where the convention says rounded, and the reverse): the mutants.
void cpu(const ValidProblem& p, Outputs& out);
Outputs cpu_flipped(const Problem& p);

/// The exact reference (reference.hpp through MPFR) and its binary64 twin.
ExactOutputs reference(const ValidProblem& p);
ExactOutputs reference_double(const ValidProblem& p);

}  // namespace normcheck::ops::fused
