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
#include "core/error.hpp"
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

/// qk_norm form: rms: q^ = RMSNorm(q), k^ = RMSNorm(k) per head (gains q_gamma, k_gamma per
/// `affine`), scores q^.k^ / sqrt(d_k); l2: q^ = q/max(||q||, eps), k^ likewise, scores
/// g q^.k^ with the learned scalar g (input "g").
enum class QkForm { rms, l2 };

/// Which pass of the op a Problem asks for (spec/backward.cpp has the rules):
/// forward: the outputs of the op ("y", ...); backward: the gradients of a scalar loss L
/// with respect to the inputs, given dy = dL/dy (input "dy", the shape of y): "dx", and
/// "dgamma"/"dbeta" (ada_*: "ds"/"db"; scale_norm: "dg") for the parameters the op has.
enum class Direction { forward, backward };

std::string_view to_string(Op) noexcept;
std::string_view to_string(EpsPlacement) noexcept;
std::string_view to_string(Variance) noexcept;
std::string_view to_string(Affine) noexcept;
std::string_view to_string(QkForm) noexcept;
std::string_view to_string(Direction) noexcept;
std::optional<Op> parse_op(std::string_view) noexcept;
std::optional<EpsPlacement> parse_eps_placement(std::string_view) noexcept;
std::optional<Variance> parse_variance(std::string_view) noexcept;
std::optional<Affine> parse_affine(std::string_view) noexcept;
std::optional<QkForm> parse_qk_form(std::string_view) noexcept;
std::optional<Direction> parse_direction(std::string_view) noexcept;
/// All accepted spellings, for error messages: "inside_sqrt | outside_sqrt | ...".
std::string choices_eps_placement();
std::string choices_variance();
std::string choices_affine();
std::string choices_op();
std::string choices_qk_form();
std::string choices_direction();

/// How an op's formula is instantiated.
struct Convention {
  double eps = 1e-5;                                  ///< >= 0, as a binary64 value
  EpsPlacement eps_placement = EpsPlacement::inside_sqrt;
  Variance variance = Variance::biased;
  Affine affine = Affine::none;
  Shape normalized_shape;                             ///< trailing dims of x reduced over (LN, RMS, AdaLN, AdaRMS)
  DType acc_dtype = DType::f32;                       ///< accumulation dtype of a conforming kernel

  // Family-specific fields (each is rejected by the parser for ops that do not use it).
  // group_norm: number of groups G >= 1 of x [N, C, *spatial]; G must divide C; group
  // (n, g) holds the contiguous channels g*C/G .. (g+1)*C/G - 1. 0 = not given.
  std::int64_t num_groups = 0;
  // batch_norm: running-stat factor a in r <- (1 - a) r + a s (s = batch mean, or the
  // UNBIASED batch variance for running_var, whatever `variance` says for the forward);
  // 0 <= a <= 1. nullopt (absent, or "none" in a case file): cumulative moving average,
  // a = 1 / num_batches_tracked after its increment (PyTorch momentum=None).
  std::optional<double> momentum;
  // batch_norm: PyTorch's num_batches_tracked counter before the case's first batch
  // (only the cumulative average reads it); incremented once per training batch.
  std::int64_t num_batches_tracked = 0;
  // batch_norm: training forward (batch statistics, running stats updated) or eval.
  bool training = true;
  // batch_norm: keep running stats (inputs and outputs running_mean, running_var, shape
  // [C]). false: no running stats; training and eval both use batch statistics.
  bool track_running_stats = true;
  // batch_norm: x is [S, N, C, *spatial]: S successive forward calls of one module in the
  // same mode; running stats chain through the calls and the outputs running_mean,
  // running_var hold the state after the last. false: x is [N, C, *spatial] (S = 1).
  bool sequence = false;
  // l2_normalize, scale_norm: axes of x reduced over (negative counts from the end, any
  // subset, need not be contiguous). Empty: the trailing dims normalized_shape.
  std::vector<std::int64_t> axes;
  // ada_layer_norm, ada_rms_norm: the gate input "gate" [B, d] is given and the op also
  // outputs h = x + gate * y (the gated residual).
  bool gated = false;
  // qk_norm: rms or l2 form (QkForm).
  QkForm qk_form = QkForm::rms;
  // Every op but qk_norm: forward (the op's outputs) or backward (its gradients given the
  // input dy; spec/backward.cpp). Case files: convention.direction = "backward".
  Direction direction = Direction::forward;
};

/// Convention defaults of an op: eps 1e-5, inside_sqrt, biased, no affine, except
/// l2_normalize (clamp_norm, eps 1e-12: torch.nn.functional.normalize), scale_norm
/// (clamp_norm, eps 1e-5: Nguyen & Salazar 2019) and qk_norm with qk_form = l2 (same as l2).
Convention default_convention(Op op);

/// Name of the primary input of an op: "q" for qk_norm, "x" for every other op.
/// Problem::x() returns it; input transforms apply to it unless they name another.
std::string_view primary_input(Op op) noexcept;

/// One evaluation of an op: op + convention + named inputs + output dtype.
/// Inputs: "x" (required), "gamma" and "beta" (shape normalized_shape) per `affine`.
/// Every backend receives this and returns Outputs; none re-parses case files.
struct Problem {
  Op op = Op::layer_norm;
  Convention conv;
  DType out_dtype = DType::f32;
  std::map<std::string, Tensor> inputs;

  /// The primary input ("x", or "q" for qk_norm).
  const Tensor& x() const { return inputs.at(std::string(primary_input(op))); }
  const Tensor* input(const std::string& name) const {
    auto it = inputs.find(name);
    return it == inputs.end() ? nullptr : &it->second;
  }
};

/// Named output tensors: "y" always; more per op (e.g. running stats).
using Outputs = std::map<std::string, Tensor>;

/// Inputs and outputs of each op (validate() enforces them):
///   layer_norm, rms_norm  x [..., normalized_shape]; gamma, beta [normalized_shape] per affine -> y
///   group_norm, instance_norm  x [N, C, *spatial]; gamma, beta [C] per affine -> y
///   batch_norm  x [N, C, *spatial] ([S, N, C, *spatial] with sequence); gamma, beta [C];
///               running_mean, running_var [C] iff track_running_stats
///               -> y, and running_mean, running_var [C] iff track_running_stats
///   l2_normalize  x -> y;  scale_norm  x, g (one element) -> y
///   ada_layer_norm, ada_rms_norm  x [B, *, d]; scale, shift [B, d]; gate [B, d] iff gated
///               -> y = (1 + scale) N0(x) + shift, and h = x + gate * y iff gated
///   qk_norm  q [B, H, T, d_k], k [B, H, S, d_k]; rms form: q_gamma, k_gamma [d_k] per affine;
///               l2 form: g (one element) -> q_hat, k_hat (shapes of q, k), y = scores [B, H, T, S]
/// Output dtype: out_dtype for every output.
/// Backward problems (direction = backward) take the forward inputs plus dy (the shape of
/// the forward y, = the shape of x) and output dx (shape of x) and the parameter gradients:
///   layer_norm, rms_norm, group_norm, instance_norm, batch_norm: dgamma [shape of gamma]
///               iff affine != none (for one_plus_w: dL/dw), dbeta iff gamma_beta;
///   ada_layer_norm, ada_rms_norm: ds, db [B, d] (not gated);  scale_norm: dg (shape of g);
///   l2_normalize: dx only.  qk_norm has no backward.
std::map<std::string, Shape> output_shapes(const Problem& p);

/// The output that stands for "the" result of a problem: "y" (forward) or "dx" (backward).
/// expect.values, properties without `outputs`, and dumps use it.
std::string primary_output(const Problem& p);

/// Invalid op/convention/inputs combination. `field` names the offending field
/// ("convention.eps", "inputs.gamma.shape"...), so the parser can point at its line.
struct SpecError : UsageError {
  SpecError(std::string field_, const std::string& msg) : UsageError(msg), field(std::move(field_)) {}
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
/// unbiased variance needs m >= 2. The other families' rules (G divides C, running stats
/// iff tracked, batch statistics need N * spatial > 1, shapes of scale/shift/gate, q/k,
/// axes...) are in spec/families.cpp; each SpecError names its field.
void validate(const Problem& p);
/// Row layout of a validated layer_norm/rms_norm problem.
RowLayout row_layout(const Problem& p);
/// Whether the op subtracts the mean (layer_norm family) before scaling.
bool centers(Op op) noexcept;

/// Channel view of a validated group_norm / instance_norm / batch_norm problem: x as
/// [steps, n, c, spatial] (steps = S with `sequence`, else 1; spatial = product of the
/// dims after C, 1 if none). Element (s, i, ch, l) sits at ((s*n + i)*c + ch)*spatial + l.
struct ChannelLayout {
  std::int64_t steps = 1, n = 0, c = 0, spatial = 1;
};
ChannelLayout channel_layout(const Problem& p);

/// Reduction groups of x over a set of axes (l2_normalize, scale_norm): every group is
/// the set of elements that agree on all other coordinates. Element j of group g sits at
/// flat index base[g] + member[j]; groups and members are in row-major order.
struct ReductionLayout {
  std::vector<std::int64_t> base, member;
  bool contiguous = false;  ///< member[j] == j (the axes are the trailing dims)
};
/// Axes reduced by a validated l2_normalize / scale_norm problem, sorted, non-negative.
std::vector<std::int64_t> reduced_axes(const Problem& p);
ReductionLayout reduction_layout(const Shape& shape, const std::vector<std::int64_t>& axes);
/// The normalization groups of a validated problem as base + member offsets (flat indices
/// into x, and into every output of x's shape): element j of group g sits at base[g] +
/// member[j]. layer_norm, rms_norm: rows over normalized_shape; group_norm: (n, g) over
/// C/G channels and spatial; instance_norm: (n, c) over spatial; batch_norm: one group per
/// (step, channel) over N and spatial (eval too: the groups of its batch statistics);
/// l2_normalize, scale_norm: reduction_layout; ada_*: rows of d; qk_norm: rows of d_k of q.
ReductionLayout group_layout(const Problem& p);

namespace detail {
/// validate() for every op but layer_norm and rms_norm (spec/families.cpp).
void validate_family(const Problem& p);
/// validate()'s direction rules: dy given iff backward, with the shape of x; the ops and
/// conventions that have a backward (spec/backward.cpp).
void validate_direction(const Problem& p);
/// output_shapes() of a backward problem (spec/backward.cpp).
std::map<std::string, Shape> backward_output_shapes(const Problem& p);
}  // namespace detail

}  // namespace normcheck
