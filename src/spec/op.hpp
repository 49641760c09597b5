// The one representation of an op and its convention, shared by the case parser,
// the reference, every kernel, every backend and the report (DESIGN.md, "Concepts").
// What each op is (its inputs, outputs, rules, reference, kernels, budget, mutants) is data
// in the op table (ops/registry.hpp); this layer knows no op by name.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "core/dtype.hpp"
#include "core/error.hpp"
#include "core/tensor.hpp"
#include "core/view.hpp"
#include "spec/exact.hpp"

namespace normcheck {

struct OpDef;  // spec/op_def.hpp

/// An op of the registry: a handle to its OpDef, compared by identity. The bundled ops have
/// names here for code that must name one (tests, a backend wiring one library primitive);
/// every other use goes through the op's OpDef (`op.def()`), so a new op needs no edit here.
class Op {
 public:
  constexpr Op() = default;
  constexpr explicit Op(const OpDef* d) : d_(d) {}
  /// The op's definition. Precondition: the handle is not empty.
  const OpDef& def() const noexcept { return *d_; }
  std::string_view name() const noexcept;
  explicit operator bool() const noexcept { return d_ != nullptr; }
  friend bool operator==(Op a, Op b) noexcept { return a.d_ == b.d_; }
  friend bool operator<(Op a, Op b) noexcept;  ///< by name (maps keyed by op)

  static const Op layer_norm, rms_norm, group_norm, instance_norm, batch_norm, l2_normalize, scale_norm,
      ada_layer_norm, ada_rms_norm, qk_norm;

 private:
  const OpDef* d_ = nullptr;
};
std::string_view to_string(Op) noexcept;

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

/// fused_add_* (and *_quant with a residual): the value the norm reads, h = x + residual
/// (+ bias) rounded to h's dtype (rounded) or the unrounded sum (unrounded).
enum class NormInput { rounded, unrounded };

/// *_quant: a static per-tensor scale given as input "scale" [1] (static_per_tensor), or a
/// scale per row computed by the kernel from max|y| and returned as output "scale" [rows]
/// (dynamic_per_token).
enum class QuantScale { dynamic_per_token, static_per_tensor };

/// *_quant: how the scale enters: y_q = Q(y / scale) (divisor; dequantization y ~ y_q *
/// scale) or y_q = Q(y * scale) (multiplier: the scale is the reciprocal).
enum class ScaleForm { divisor, multiplier };

/// Which pass of the op a Problem asks for: forward: the outputs of the op ("y", ...);
/// backward: the gradients of a scalar loss L with respect to the inputs, given dy = dL/dy
/// (input "dy", the shape of y): "dx", and the parameters' gradients the op defines.
enum class Direction { forward, backward };

std::string_view to_string(EpsPlacement) noexcept;
std::string_view to_string(Variance) noexcept;
std::string_view to_string(Affine) noexcept;
std::string_view to_string(QkForm) noexcept;
std::string_view to_string(Direction) noexcept;
std::optional<EpsPlacement> parse_eps_placement(std::string_view) noexcept;
std::optional<Variance> parse_variance(std::string_view) noexcept;
std::optional<Affine> parse_affine(std::string_view) noexcept;
std::optional<QkForm> parse_qk_form(std::string_view) noexcept;
std::optional<Direction> parse_direction(std::string_view) noexcept;
/// All accepted spellings, for error messages: "inside_sqrt | outside_sqrt | ...".
std::string choices_eps_placement();
std::string choices_variance();
std::string choices_affine();
std::string choices_qk_form();
std::string choices_direction();

/// How an op's formula is instantiated: the common core (eps .. direction), which every op
/// reads, and per-op parameters, which only the ops that declare them accept (each op's
/// keys are in its OpDef; spec/convention.hpp reads and writes them as data).
struct Convention {
  double eps = 1e-5;                                  ///< >= 0, as a binary64 value
  EpsPlacement eps_placement = EpsPlacement::inside_sqrt;
  Variance variance = Variance::biased;
  Affine affine = Affine::none;
  Shape normalized_shape;                             ///< trailing dims of x reduced over (LN, RMS, AdaLN, AdaRMS)
  DType acc_dtype = DType::f32;                       ///< accumulation dtype of a conforming kernel
  /// forward (the op's outputs) or backward (its gradients given the input dy).
  Direction direction = Direction::forward;

  // Per-op parameters (each accepted only by the ops whose OpDef lists its key).
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
  // layer_norm, rms_norm (forward; the backward does not read it: the cast's derivative is 1,
  // as autograd takes it): the dtype the normalized value n = (x - mu) / D is
  // rounded to before the affine (Hugging Face LlamaRMSNorm: the input dtype, then
  // weight * n; ONNX LayerNormalization: X's type, then * Scale + B), so y = round(g round(n)
  // + b). nullopt (the default): one rounding, of y. "The order in which intermediates are
  // rounded to the storage dtype" of a framework, as a convention value.
  std::optional<DType> normalized_dtype;
  // batch_norm: training forward (batch statistics, running stats updated) or eval.
  bool training = true;
  // batch_norm: the estimator of the batch variance folded into running_var in training:
  // unbiased sum (x - mu)^2 / (m - 1) (PyTorch) or biased / m (Keras, Flax, ONNX's training
  // mode). Independent of `variance`, which is the forward's.
  Variance running_variance = Variance::unbiased;
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
  // fused_add_layer_norm, fused_add_rms_norm, and the *_quant ops given a residual: whether
  // the norm reads h = x + residual (+ bias) rounded to h's dtype (the residual's dtype), as
  // most engines do (NormInput::rounded), or the unrounded sum (NormInput::unrounded).
  NormInput norm_input = NormInput::rounded;
  // layer_norm_quant, rms_norm_quant: y_q = Q(y / scale) into out_dtype (fp8_e4m3fn,
  // fp8_e5m2, int8), y the norm's output after the affine, Q the rounding `rounding` and,
  // with `saturate`, the clamp to +-max (int8: [-128, 127]); without it an out-of-range
  // value becomes what the format makes of it (e5m2: +-inf, e4m3fn: NaN).
  QuantScale quant_scale = QuantScale::dynamic_per_token;
  ScaleForm scale_form = ScaleForm::divisor;
  bool saturate = true;
  Rounding rounding = Rounding::nearest_even;
  // dynamic_per_token: scale = max(max_j |y_j| / qmax, scale_floor) per row (divisor form;
  // the multiplier form outputs its reciprocal). >= 0; 0: no floor (an all-zero row: 0/0).
  double scale_floor = 0;
};

/// One evaluation of an op: op + convention + named inputs + output dtype. The inputs an op
/// takes and their shapes are its OpDef's rules (validate()). Every backend receives this
/// (as a ValidProblem) and returns Outputs; none re-parses case files.
struct Problem {
  Op op;
  Convention conv;
  DType out_dtype = DType::f32;
  std::map<std::string, Tensor> inputs;
  /// How the inputs are laid out in the memory handed to a backend that takes views
  /// (Backend::takes_views: plugins, workers, cpu, the mutants): each input through
  /// present(input, layout). The values are the same in every layout; the reference never
  /// reads it; a backend that takes dense tensors only SKIPS a non-contiguous problem.
  MemoryLayout layout = MemoryLayout::contiguous;

  /// The primary input (the op's `primary_input`: "x", or "q" for qk_norm).
  const Tensor& x() const;
  const Tensor* input(const std::string& name) const {
    auto it = inputs.find(name);
    return it == inputs.end() ? nullptr : &it->second;
  }
};

/// Named output tensors: "y" always for a forward problem ("dx" backward); more per op.
using Outputs = std::map<std::string, Tensor>;

/// Invalid op/convention/inputs combination. `field` names the offending field
/// ("convention.eps", "inputs.gamma.shape"...), so the parser can point at its line.
struct SpecError : UsageError {
  SpecError(std::string field_, const std::string& msg) : UsageError(msg), field(std::move(field_)) {}
  std::string field;
};

/// A Problem that validate() accepted. The reference, the kernels and every backend take
/// it, so a problem's rules run once, where it enters (the parser, a probe, a test), not
/// once per evaluation. Shares the (immutable) Problem: cheap to copy.
class ValidProblem {
 public:
  const Problem& operator*() const noexcept { return *p_; }
  const Problem* operator->() const noexcept { return p_.get(); }
  const Problem& get() const noexcept { return *p_; }

  /// The value compute() returns, computed on the first call and kept for every copy of this
  /// ValidProblem (the problem is immutable, so it cannot go stale); thread-safe. The one
  /// use: the exact reference (ops/reference.hpp), so a run evaluates it once per case
  /// although its ground truth and the `reference` backend both ask.
  template <class F>
  const ExactOutputs& memo_exact(F&& compute) const {
    std::call_once(memo_->once, [&] { memo_->exact.emplace(compute()); });
    return *memo_->exact;
  }

 private:
  struct Memo {
    std::once_flag once;
    std::optional<ExactOutputs> exact;
  };
  explicit ValidProblem(std::shared_ptr<const Problem> p) : p_(std::move(p)), memo_(std::make_shared<Memo>()) {}
  std::shared_ptr<const Problem> p_;
  std::shared_ptr<Memo> memo_;
  friend ValidProblem validate(Problem p);
  friend ValidProblem validate_borrowed(const Problem& p);
};

/// Checks every rule of the problem's op (spec/op_def.hpp: shapes, parameter presence,
/// value ranges) and the common ones (eps finite and >= 0, the primary input present, dy
/// iff backward and only for an op with a backward); throws SpecError naming the field.
ValidProblem validate(Problem p);
/// validate() without a copy of the problem: the result refers to p, which must outlive it
/// and every copy of it (run_cases: its cases outlive the run). A large case's inputs are
/// then held once, not twice (issue 15: 4 of 36 bytes per element of a LayerNorm f32 case).
ValidProblem validate_borrowed(const Problem& p);
/// Throws SpecError unless validate() accepts p (for checks that keep their Problem).
void check(const Problem& p);

/// Every output a problem defines, by name, with its shape (the op's rules per direction),
/// the optional ones (saved statistics) included.
std::map<std::string, Shape> output_shapes(const Problem& p);
/// Whether output `name` is optional (OpDef::optional_outputs): a backend may leave it out.
bool is_optional_output(const Problem& p, const std::string& name);
/// The dtype of output `name`: the op's output_dtypes rule, else the problem's out_dtype.
DType output_dtype(const Problem& p, const std::string& name);
/// The dtype of saved statistics (mean, rstd: optional outputs of layer_norm, rms_norm,
/// group_norm, instance_norm, batch_norm): binary64 when the accumulation is, else binary32
/// (what CUDA kernels and oneDNN keep them in: the accumulation type, never the data's).
DType saved_stat_dtype(const Problem& p);
/// The output that stands for "the" result of a problem: "y" (forward) or "dx" (backward).
/// expect.values, properties without `outputs`, and dumps use it.
std::string primary_output(const Problem& p);

/// Reduction groups of x: element j of group g sits at flat index base[g] + member[j];
/// groups and members are in row-major order.
struct ReductionLayout {
  std::vector<std::int64_t> base, member;
  bool contiguous = false;  ///< member[j] == j (the axes are the trailing dims)
};
/// The normalization groups of a validated problem (its op's `groups` rule): flat indices
/// into x, and into every output of x's shape.
ReductionLayout group_layout(const Problem& p);

}  // namespace normcheck

/// {} of an Op: its name ("layer_norm").
template <>
struct fmt::formatter<normcheck::Op> : fmt::formatter<std::string_view> {
  template <class Ctx>
  auto format(normcheck::Op v, Ctx& ctx) const {
    return fmt::formatter<std::string_view>::format(v.name(), ctx);
  }
};
