// The one representation of an op and its convention, shared by the case parser,
// the reference, every kernel, every backend and the report (DESIGN.md, "Concepts").
#pragma once

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.hpp"
#include "core/tensor.hpp"

namespace normcheck {

/// A normalization family (DESIGN.md "op").
enum class Op {
  layer_norm, rms_norm, group_norm, instance_norm, batch_norm,
  l2_normalize, scale_norm, ada_layer_norm, ada_rms_norm, qk_norm
};

/// Where eps enters the denominator (DESIGN.md "convention"):
/// inside_sqrt  x / sqrt(v + eps)        (PyTorch, ONNX, Apex, llama.cpp)
/// outside_sqrt x / (sqrt(v) + eps)      (some hand-written kernels, older TF code)
/// clamp_var    x / sqrt(max(v, eps))
/// clamp_norm   x / max(sqrt(v), eps)    (torch.nn.functional.normalize)
enum class EpsPlacement { inside_sqrt, outside_sqrt, clamp_var, clamp_norm };

/// Variance estimator: biased 1/m (every normalization forward), unbiased 1/(m-1)
/// (BatchNorm's running_var update, some ports by mistake).
enum class Variance { biased, unbiased };

/// Affine convention: none: y = n; gamma: y = gamma*n; gamma_beta: y = gamma*n + beta;
/// one_plus_w: y = (1 + w)*n (Gemma's RMSNorm, parameter named gamma in cases).
enum class Affine { none, gamma, gamma_beta, one_plus_w };

std::string_view to_string(Op) noexcept;
std::string_view to_string(EpsPlacement) noexcept;
std::string_view to_string(Variance) noexcept;
std::string_view to_string(Affine) noexcept;
std::optional<Op> parse_op(std::string_view) noexcept;
std::optional<EpsPlacement> parse_eps_placement(std::string_view) noexcept;
std::optional<Variance> parse_variance(std::string_view) noexcept;
std::optional<Affine> parse_affine(std::string_view) noexcept;
/// All accepted spellings, for error messages: "inside_sqrt | outside_sqrt | ...".
std::string choices_eps_placement();
std::string choices_variance();
std::string choices_affine();
std::string choices_op();

/// How an op's formula is instantiated.
struct Convention {
  double eps = 1e-5;                                  ///< >= 0, as a binary64 value
  EpsPlacement eps_placement = EpsPlacement::inside_sqrt;
  Variance variance = Variance::biased;
  Affine affine = Affine::none;
  Shape normalized_shape;                             ///< trailing dims of x reduced over (LN, RMS)
  DType acc_dtype = DType::f32;                       ///< accumulation dtype of a conforming kernel
};

/// One evaluation of an op: op + convention + named inputs + output dtype.
/// Inputs: "x" (required), "gamma" and "beta" (shape normalized_shape) per `affine`.
/// Every backend receives this and returns Outputs; none re-parses case files.
struct Problem {
  Op op = Op::layer_norm;
  Convention conv;
  DType out_dtype = DType::f32;
  std::map<std::string, Tensor> inputs;

  const Tensor& x() const { return inputs.at("x"); }
  const Tensor* input(const std::string& name) const {
    auto it = inputs.find(name);
    return it == inputs.end() ? nullptr : &it->second;
  }
};

/// Named output tensors: "y" always; more per op (e.g. running stats).
using Outputs = std::map<std::string, Tensor>;

/// Invalid op/convention/inputs combination. `field` names the offending field
/// ("convention.eps", "inputs.gamma.shape"...), so the parser can point at its line.
struct SpecError : std::runtime_error {
  SpecError(std::string field_, const std::string& msg) : std::runtime_error(msg), field(std::move(field_)) {}
  std::string field;
};

/// Row decomposition of a row-wise op (layer_norm, rms_norm): x viewed as
/// [rows, m] with m = numel(normalized_shape); gamma/beta indexed by the column.
struct RowLayout {
  std::int64_t rows = 0;
  std::int64_t m = 0;
};

/// Checks shapes, parameter presence and value ranges; throws SpecError.
/// Rules: eps >= 0 and finite; normalized_shape non-empty and equal to the trailing
/// dims of x; gamma (and beta for gamma_beta) present with shape normalized_shape;
/// unbiased variance needs m >= 2.
void validate(const Problem& p);
/// Row layout of a validated layer_norm/rms_norm problem.
RowLayout row_layout(const Problem& p);
/// Whether the op subtracts the mean (layer_norm family) before scaling.
bool centers(Op op) noexcept;

}  // namespace normcheck
