// batch_norm: per channel over N and the spatial axes. Training normalizes with the biased
// batch variance and updates running_mean/running_var (the unbiased batch variance) with
// `momentum` (or the cumulative average); eval uses the running stats (batch statistics
// without track_running_stats). Reference: reference.hpp; CPU: cpu.cpp.
#include <fmt/format.h>

#include <cstring>

#include "ops/common/channel_op.hpp"
#include "ops/common/cpu_kernels.hpp"
#include "ops/common/mutants.hpp"
#include "ops/common/precision.hpp"
#include "ops/common/sample.hpp"
#include "ops/batch_norm/reference.hpp"
#include "ops/batch_norm/reference_backward.hpp"
#include "ops/registry.hpp"
#include "spec/convention.hpp"
#include "spec/rules.hpp"
#include "spec/layout.hpp"

namespace normcheck::ops {

namespace {

void validate(const Problem& p) {
  const Convention& c = p.conv;
  const ChannelLayout l = channels::validate_x_and_affine(p);
  rules::only_inputs(p, {"x", "gamma", "beta", "running_mean", "running_var"});
  if (c.momentum)
    rules::need(*c.momentum >= 0 && *c.momentum <= 1, "convention.momentum",
                fmt::format("momentum must be in [0, 1], got {}", *c.momentum));
  rules::need(c.num_batches_tracked >= 0, "convention.num_batches_tracked", "num_batches_tracked must be >= 0");
  const std::string why = fmt::format("track_running_stats = {}", c.track_running_stats);
  rules::input_rule(p, "running_mean", c.track_running_stats, Shape{l.c}, why);
  rules::input_rule(p, "running_var", c.track_running_stats, Shape{l.c}, why);
  if (const Tensor* rv = p.input("running_var"))
    for (std::int64_t i = 0; i < rv->size(); ++i)
      rules::need(!(rv->get(i) < 0), "inputs.running_var", fmt::format("running_var[{}] = {} is negative", i, rv->get(i)));
  const bool batch_stats = c.training || !c.track_running_stats;
  const std::int64_t m = l.n * l.spatial;
  // PyTorch: "Expected more than 1 value per channel when training".
  if (batch_stats)
    rules::need(m >= 2, "inputs.x.shape",
                fmt::format("batch_norm with batch statistics needs more than one value per channel: x {} has N * spatial = {}",
                            shape_str(p.x().shape()), m));
  rules::unbiased_needs_two(p, m);
}

void validate_backward(const Problem& p) {
  if (p.conv.sequence) throw SpecError("convention.sequence", "backward covers one batch_norm call: sequence = false");
}

std::map<std::string, Shape> outputs(const Problem& p) {
  std::map<std::string, Shape> o{{"y", p.x().shape()}};
  if (p.conv.track_running_stats) {
    const Shape c{channel_layout(p).c};
    o["running_mean"] = c;
    o["running_var"] = c;
  }
  return o;
}

/// The optional outputs: the saved batch statistics "mean" and "rstd" = 1 / D(var) per
/// channel [C] (PyTorch's save_mean, save_invstd), when the forward uses batch statistics
/// (training, or track_running_stats = false) in one call (sequence = false).
std::map<std::string, Shape> saved_statistics(const Problem& p) {
  if (!(p.conv.training || !p.conv.track_running_stats) || p.conv.sequence) return {};
  const Shape c{channel_layout(p).c};
  return {{"mean", c}, {"rstd", c}};
}

std::map<std::string, DType> saved_statistics_dtypes(const Problem& p) {
  std::map<std::string, DType> d;
  for (auto& [name, s] : saved_statistics(p)) d[name] = saved_stat_dtype(p);
  return d;
}

/// One group per (step, channel) over N and spatial (eval too: its batch statistics' groups).
ReductionLayout groups(const Problem& p) {
  const ChannelLayout c = channel_layout(p);
  ReductionLayout l;
  for (std::int64_t s = 0; s < c.steps; ++s)
    for (std::int64_t ch = 0; ch < c.c; ++ch) l.base.push_back((s * c.n * c.c + ch) * c.spatial);
  for (std::int64_t i = 0; i < c.n; ++i)
    for (std::int64_t j = 0; j < c.spatial; ++j) l.member.push_back(i * c.c * c.spatial + j);
  l.contiguous = c.n == 1 || c.c == 1;
  return l;
}

/// m = N * spatial with batch statistics; 1 in eval (y = g (x - rm)/D(rv) + b reads no
/// reduction). The running-stat update adds 3 roundings per step, within k_ops (budget.cpp).
std::int64_t group_size(const Problem& p) {
  const ChannelLayout l = channel_layout(p);
  return p.conv.training || !p.conv.track_running_stats ? l.n * l.spatial : 1;
}

template <class T>
ExactOutputs eval(const Problem& p, bool fast) {
  return p.conv.direction == Direction::backward ? reference::batch_norm_backward<T>(p) : reference::batch_norm<T>(p, fast);
}

const ConventionKey kMomentum{
    "momentum", "running-stat factor a in r <- (1 - a) r + a s, 0 <= a <= 1; \"none\": cumulative average (PyTorch None)",
    [](const FieldSource& s, Convention& c) {
      if (s.is_null("momentum") || (s.is_string("momentum") && s.text("momentum") == "none")) c.momentum.reset();
      else c.momentum = s.number("momentum");
    },
    [](const Convention& c) -> ConventionValue {
      if (c.momentum) return *c.momentum;
      return std::monostate{};
    }};
const ConventionKey kTracked{"num_batches_tracked", "PyTorch's counter before the first batch (the cumulative average reads it)",
                             [](const FieldSource& s, Convention& c) { c.num_batches_tracked = s.integer("num_batches_tracked"); },
                             [](const Convention& c) -> ConventionValue { return c.num_batches_tracked; }};
const ConventionKey kTraining{"training", "training forward (batch statistics, running stats updated) or eval",
                              [](const FieldSource& s, Convention& c) { c.training = s.boolean("training"); },
                              [](const Convention& c) -> ConventionValue { return c.training; }};
const ConventionKey kTrack{"track_running_stats", "keep running stats (inputs and outputs running_mean, running_var)",
                           [](const FieldSource& s, Convention& c) { c.track_running_stats = s.boolean("track_running_stats"); },
                           [](const Convention& c) -> ConventionValue { return c.track_running_stats; }};
const ConventionKey kRunningVariance{
    "running_variance", "estimator of the batch variance folded into running_var: unbiased (/ (m - 1), PyTorch) | biased (/ m, Keras, Flax)",
    [](const FieldSource& s, Convention& c) {
      const std::string v = s.text("running_variance");
      auto e = parse_variance(v);
      if (!e) s.fail("running_variance", fmt::format("unknown '{}' (biased | unbiased)", v));
      c.running_variance = *e;
    },
    [](const Convention& c) -> ConventionValue { return std::string(to_string(c.running_variance)); },
    // biased a third of the time (Keras, Flax): only two literal cases without spatial
    // positions had set it (a fifth audit's N - 1 for m - 1 passed).
    [](std::mt19937_64& g, Problem& p) {
      p.conv.running_variance = std::uniform_int_distribution<int>(0, 2)(g) == 0 ? Variance::biased : Variance::unbiased;
    }};
const ConventionKey kSequence{"sequence", "x is [S, N, C, ...]: S chained calls of one module",
                              [](const FieldSource& s, Convention& c) { c.sequence = s.boolean("sequence"); },
                              [](const Convention& c) -> ConventionValue { return c.sequence; },
                              // a third of the draws whose batch splits in two: x [N, C, L] as
                              // two chained calls [2, N / 2, C, L]
                              [](std::mt19937_64& g, Problem& p) {
                                Tensor& x = p.inputs.at("x");
                                const Shape s = x.shape();
                                p.conv.sequence = false;
                                if (std::uniform_int_distribution<int>(0, 2)(g) != 0 || s.size() != 3 || s[0] < 4 || s[0] % 2) return;
                                p.conv.sequence = true;
                                Tensor seq(x.dtype(), Shape{2, s[0] / 2, s[1], s[2]});
                                std::memcpy(seq.data(), x.data(), x.nbytes());
                                x = std::move(seq);
                              }};

/// OpDef::sample: x [N, C, L] with N * L = width values per channel (L a divisor of width
/// among 1, 2, 4), C = rows; training (batch statistics) or eval, running stats tracked or
/// not, momentum 0.1 | 0.5 | 0.9 | 0 | none (cumulative: 0.9, Keras's side of 0.5, and 0, an
/// update that keeps the running stats, had no draw: a backend flipping momentum past 0.5 or
/// reading 0 as none passed; a sixth audit); running_var U(0.25, 4). Batch statistics
/// need two values per channel: a width of 1 draws eval with running stats.
void sample(Sampler& s, Problem& p) {
  const Dims& d = s.dims();
  std::int64_t l = 1;  // spatial size: 1, 2 or 4 (wide: 4, so that a channels_last view is one)
  if (d.wide) {
    if (d.width % 4 == 0) l = 4;
  } else if (s.vary()) {
    for (std::int64_t k : {s.pick<std::int64_t>({1, 2, 4}), std::int64_t{1}})
      if (d.width % k == 0) { l = k; break; }
  }
  const std::int64_t n = d.width / l, c = d.rows;
  p.inputs["x"] = s.x(sampling::channel_shape(n, c, l), l);
  Convention& cv = p.conv;
  if (s.vary()) {
    cv.training = s.coin(0.7);
    cv.track_running_stats = s.coin(0.85);
    cv.momentum = s.pick<std::optional<double>>({0.1, 0.5, 0.9, 0.0, std::nullopt});
    if (!cv.momentum) cv.num_batches_tracked = s.pick<std::int64_t>({0, 3});
  }
  if (d.width < 2) {
    cv.training = false;
    cv.track_running_stats = true;
  }
  if (!cv.training && !cv.track_running_stats) cv.track_running_stats = true;
  if (cv.track_running_stats) {
    p.inputs["running_mean"] = s.shift(Shape{c});
    p.inputs["running_var"] = s.uniform(Shape{c}, d.param, 0.25, 4.0);
  }
  sampling::statistic(s, p, d.width);
  sampling::affine(s, p, {Affine::none, Affine::gamma, Affine::gamma_beta, Affine::gamma_beta}, Shape{c});
}

namespace mut = kernels::mutant;

}  // namespace

extern const OpDef batch_norm_def{
    .name = "batch_norm",
    .formula = "y = gamma_c (x - mean_c) / sqrt(var_c + eps) + beta_c over N and spatial; running stats updated in training",
    .centers = true,
    .params = {&kMomentum, &kTracked, &kTraining, &kTrack, &kRunningVariance, &kSequence},
    .validate = validate,
    .outputs = outputs,
    .optional_outputs = saved_statistics,
    .output_dtypes = saved_statistics_dtypes,
    .groups = groups,
    .group_size = group_size,
    .backward_outputs = channels::backward_outputs,
    .validate_backward = validate_backward,
    .param_reduction = channels::param_reduction,
    .reference = [](const ValidProblem& vp) {
      const Problem& p = *vp;
      return reference::detail::at_working_precision(p, [&](auto t) { return eval<typename decltype(t)::type>(p, reference::fast_path_enabled()); });
    },
    .reference_double = [](const ValidProblem& vp) { return eval<double>(*vp, false); },
    .cpu = [](const ValidProblem& p, Outputs& o) {
      if (p->conv.direction == Direction::backward) kernels::cpu::batch_norm_backward(*p, o);
      else kernels::cpu::batch_norm_forward(*p, o);
    },
    .mutants = {mut::def<mut::Fault::bn_biased_running_var>("bn_13_train_momentum1"), mut::def<mut::Fault::bn_stats_over_batch_only>("bn_nchw_train"),
                mut::def<mut::Fault::bn_eval_batch_stats>("bn_13_eval"), mut::def<mut::Fault::bn_backward_constant_stats>("bn_bwd_train_123")},
    .sample = sample,
};

}  // namespace normcheck::ops
