// The dimensions along which normalization kernels go wrong (issue 12), as data, and the
// drawing of a problem at a point of them. One draw = one Dims value; each op turns it into
// inputs and its own convention fields through its OpDef::sample hook (in its folder), so the
// coverage matrix (cases/matrix.hpp) and `normcheck fuzz` (run/fuzz.hpp) know no op by name.
//
// Dimensions: reduction width m (the values one statistic reduces), number of groups (rows),
// the dtypes of x, of the parameters and of the output, the magnitude regime of the data,
// the eps regime relative to the data's statistic, and the direction.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "spec/op.hpp"

namespace normcheck {

/// The magnitude regime of a data tensor, per normalization group ("row"):
///   normal     N(0, 1) times a power of two in [2^-4, 2^4] per row
///   integers   integers in [-8, 8] (sums exact in every format)
///   shifted    mean 2^(p/2 + 1) (p = the dtype's precision), std 1: a large mean, a tiny spread
///   huge       |x| ~ 2^e with e above half the largest exponent: the squares overflow the dtype
///   tiny       |x| ~ 2^e with e below half the smallest normal exponent: the squares underflow
///   subnormal  small multiples of the dtype's smallest subnormal
///   mixed      N(0, 1) with one element per row times 2^p and one times 2^-p
///   constant   one value per row (variance 0: eps alone bounds the gain)
///   zeros      +0 and -0
///   nonfinite  N(0, 1) with one NaN, +inf or -inf in one position of one row
///   constant_huge  one value per row, N(0, 1) times 2^(max_exp - 11) (the huge regime's top):
///              scaled by 2^-e, eps s falls below the accumulation's range (a kernel's 1/D
///              overflowed to inf and 0 * inf gave NaN where the exact y is 0: false-pass
///              audit, 2026-12-07)
enum class Regime : std::uint8_t { normal, integers, shifted, huge, tiny, subnormal, mixed, constant, zeros, nonfinite, constant_huge };
/// eps relative to the data's variance v (estimated from the drawn x):
///   typical      1e-5 (the frameworks' default)
///   zero         0
///   dominant     1e3 v (eps decides the gain)
///   comparable   v / 2 (both terms count; a factor 2 from the kink of clamp_var /
///                clamp_norm, where the gradient jumps: eps = v exactly put the exact
///                branch at the mercy of the variance's last bit)
///   unrepresentable  1.3 v (1 + 2^-30): a binary64 value no narrower dtype holds
enum class EpsRegime : std::uint8_t { typical, zero, dominant, comparable, unrepresentable };

std::string_view to_string(Regime r) noexcept;
std::string_view to_string(EpsRegime r) noexcept;
std::optional<Regime> parse_regime(std::string_view s) noexcept;
std::optional<EpsRegime> parse_eps_regime(std::string_view s) noexcept;
const std::vector<Regime>& all_regimes();
const std::vector<EpsRegime>& all_eps_regimes();

/// One point of the coverage matrix. `width` and `rows` are what the op should aim at: an
/// op whose layout cannot give exactly `width` values per group (group_norm's C/G * L) takes
/// the nearest it can. `out`: the output dtype (x's unless a quantizing op draws an 8-bit one).
struct Dims {
  std::int64_t width = 8;  ///< values per normalization group, >= 1
  std::int64_t rows = 2;   ///< normalization groups (rows, (n, g) pairs, channels), >= 1
  DType x = DType::f32;    ///< data dtype (x, residual, dy)
  DType param = DType::f32;  ///< parameters' dtype (gamma, beta, scale, shift...)
  std::optional<DType> out;  ///< output dtype; empty: x's (quantizing ops: their own draw)
  Regime regime = Regime::normal;
  EpsRegime eps = EpsRegime::typical;
  /// The eps placement, set after the op's own draw (empty: the op's draw, sampling::statistic).
  /// The coverage matrix crosses every placement with the regimes where eps decides the
  /// denominator: drawn at 15%, a clamp placement met a constant or tiny row in the backward of
  /// batch_norm, group_norm and scale_norm nowhere in the quick tier (false-pass audit).
  std::optional<EpsPlacement> placement;
  bool backward = false;   ///< the gradients (ops with a backward), input dy ~ N(0, 1)
  bool default_convention = false;  ///< op parameters and affine at the op's defaults
  MemoryLayout layout = MemoryLayout::contiguous;  ///< how the inputs are handed over (Problem::layout)
  /// The op's structure from its large end, where its rules have one: a normalized_shape of
  /// two dims ([4, width / 4] where 4 divides width), group_norm's channels per group the
  /// largest of 32, 16, 8, 4, 2 dividing width (32 at the matrix's width 64) in 9 groups (2
  /// below 9 rows), instance_norm's 40 channels (16 below 40 rows), batch_norm's spatial size
  /// 4 (its channels are the groups), qk_norm's 4 heads in 2 batches, the ada norms' 3
  /// batches, the fused residual's bias and the quantizing norms' residual (with that bias)
  /// present. A gap audit's faulty backends wrong only there (gamma indexed by
  /// group at 8 channels per group, channels_last read as channels-first from C = 16,
  /// statistics over the last dim of a 2-D normalized_shape) passed every small draw.
  bool wide = false;
  /// The op's parameters present: its affine drawn among its choices other than none (the
  /// regimes are crossed with it: an f32 rms_norm point of subnormal rows had drawn no gamma,
  /// and a kernel computing (x w) r in f32, flashinfer's order, passed the quick tier).
  bool params = false;
  std::uint64_t seed = 1;  ///< the values and the op's own choices
  /// "layer_norm w=17 rows=3 x=bf16 param=f32 regime=shifted eps=typical seed=5"
  std::string str() const;
};

/// Draws values and choices for one problem at `dims`, deterministically for dims.seed.
/// The ops' sample hooks call it; nothing here knows an op.
class Sampler {
 public:
  explicit Sampler(const Dims& d);
  const Dims& dims() const noexcept { return d_; }

  /// A data tensor of `shape` in `dt`: groups of `group` consecutive values, each drawn per
  /// the regime (dims().regime); the nonfinite regime puts its one NaN/inf in the first
  /// group that the rng picks. Values are rounded once to dt.
  Tensor data(const Shape& shape, DType dt, std::int64_t group);
  /// x: data(shape, dims().x, group).
  Tensor x(const Shape& shape, std::int64_t group) {
    x_run_ = group;
    return data(shape, d_.x, group);
  }
  /// The run length of the last x() (0: none drawn).
  std::int64_t x_run() const noexcept { return x_run_; }
  /// x's values drawn again with each normalization group of `l` (base + member indices) as
  /// one group of the regime; same shape and dtype.
  Tensor regroup(const Tensor& x, const ReductionLayout& l);
  /// A gain (gamma, 1 + scale): distinct per index, U(0.5, 1.5), in the parameter dtype.
  Tensor gain(const Shape& shape);
  /// A shift (beta, bias): U(-1, 1) in the parameter dtype.
  Tensor shift(const Shape& shape);
  /// Values U(lo, hi) in `dt` (running_var, alpha, a static scale...).
  Tensor uniform(const Shape& shape, DType dt, double lo, double hi);

  /// True with probability p (none of the op's own choices when default_convention).
  bool coin(double p);
  /// One of `n` indices, uniformly.
  std::size_t index(std::size_t n);
  template <class T>
  T pick(std::initializer_list<T> choices) {
    return *(choices.begin() + static_cast<std::ptrdiff_t>(index(choices.size())));
  }
  /// The op's own convention choices are drawn (not the defaults).
  bool vary() const noexcept { return !d_.default_convention; }
  std::mt19937_64& rng() noexcept { return rng_; }

 private:
  /// The regime's values for every group (base + member flat indices, members in increasing
  /// order; those past x's end are left out; an index in no group is 0).
  Tensor fill(const Shape& shape, DType dt, const ReductionLayout& groups);
  Dims d_;
  std::mt19937_64 rng_;
  bool nonfinite_placed_ = false;
  std::int64_t x_run_ = 0;
};

/// The problem of `op` at `dims`: the op's default convention, acc_dtype f64 for f64 data
/// (else f32), the op's sample hook (inputs, its own parameters, affine), eps per the eps
/// regime, dy for a backward draw. Throws SpecError when the op has no sample hook, cannot
/// be drawn at dims (a backward draw of an op without one, an 8-bit output for an op that
/// has none) or the drawn problem is not valid (the hook's bug: validate() is the judge).
ValidProblem draw_problem(Op op, const Dims& dims);

/// The coverage dimensions a problem sits at, as "key=value" tags (the coverage report,
/// `normcheck run --coverage`): op, x (data dtype), params (the parameters' dtype, "-"
/// without), out (the output dtype), width (values per statistic: 1, 2-8, 9-32, 33-256,
/// 257-1024, 1025-4096, >4096), groups (1, 2-64, 65-65535, >65535), direction,
/// eps (0, or placement), affine, layout (how the inputs are handed over).
std::vector<std::string> problem_dims(const Problem& p);

/// An estimate of the variance of x's first normalization group (spec/layout.hpp groups):
/// what the eps regimes are relative to. 1 for a constant or non-finite group.
double first_group_variance(const Problem& p);

}  // namespace normcheck
