// group_norm: per (n, g) over the C/G contiguous channels of group g and the spatial axes,
// y = gamma_c (x - mean) / D(var) + beta_c. Reference: reference.hpp; CPU: cpu.cpp.
#include <fmt/format.h>

#include "ops/common/channel_op.hpp"
#include "ops/common/cpu_kernels.hpp"
#include "ops/common/mutants.hpp"
#include "ops/common/sample.hpp"
#include "ops/group_norm/group_norm.hpp"
#include "ops/registry.hpp"
#include "spec/convention.hpp"
#include "spec/rules.hpp"
#include "spec/layout.hpp"

namespace normcheck::ops {

namespace group_norms {

void validate(const Problem& p) {
  const ChannelLayout l = channels::validate_x_and_affine(p);
  std::int64_t m = l.spatial;
  if (p.op == Op::group_norm) {
    const std::int64_t G = p.conv.num_groups;
    rules::need(G >= 1, "convention.num_groups", "group_norm needs num_groups >= 1");
    rules::need(l.c % G == 0, "convention.num_groups",
                fmt::format("num_groups = {} does not divide the {} channels of x {}", G, l.c, shape_str(p.x().shape())));
    m *= l.c / G;
  }
  rules::only_inputs(p, {"x", "gamma", "beta"});
  rules::unbiased_needs_two(p, m);
}

std::map<std::string, Shape> outputs(const Problem& p) { return {{"y", p.x().shape()}}; }

std::map<std::string, Shape> saved_statistics(const Problem& p) {
  const ChannelLayout l = channel_layout(p);
  const Shape s{l.n, p.op == Op::instance_norm ? l.c : p.conv.num_groups};
  return {{"mean", s}, {"rstd", s}};
}

std::map<std::string, DType> saved_statistics_dtypes(const Problem& p) {
  return {{"mean", saved_stat_dtype(p)}, {"rstd", saved_stat_dtype(p)}};
}

std::int64_t group_size(const Problem& p) {
  const ChannelLayout l = channel_layout(p);
  return p.op == Op::instance_norm ? l.spatial : l.c / p.conv.num_groups * l.spatial;
}

ReductionLayout groups(const Problem& p) { return row_groups(p, group_size(p)); }

void sample(Sampler& s, Problem& p) {
  const Dims& d = s.dims();
  std::int64_t n, c, l;
  if (p.op == Op::group_norm) {
    // channels per group: a divisor of width among 1..4 (wide: the largest of 32, 16, 8, 4, 2
    // that divides it, in 9 groups where there are rows for them: statistics from a tile of
    // 16 channels, and group g read as g % 4, passed 16 channels in 2 groups; a sixth audit)
    std::int64_t cpg = 1;
    if (d.wide) {
      for (std::int64_t k : {32, 16, 8, 4, 2})
        if (d.width % k == 0) { cpg = k; break; }
    } else if (s.vary()) {
      for (std::int64_t k : {s.pick<std::int64_t>({1, 2, 3, 4}), std::int64_t{1}})
        if (d.width % k == 0) { cpg = k; break; }
    }
    const std::int64_t G = d.wide ? (d.rows >= 9 ? 9 : 2) : s.vary() ? s.pick<std::int64_t>({1, 2, 3}) : 1;
    p.conv.num_groups = G;
    c = G * cpg;
    l = d.width / cpg;
    n = std::max<std::int64_t>(1, (d.rows + G - 1) / G);
  } else {
    // (wide: 40 channels where there are rows for them, else 16: channel c read as c % 32
    // passed 16; a sixth audit)
    c = std::min<std::int64_t>(d.rows, d.wide ? (d.rows >= 40 ? 40 : 16) : s.vary() ? s.pick<std::int64_t>({1, 2, 3}) : 1);
    l = d.width;
    n = std::max<std::int64_t>(1, (d.rows + c - 1) / c);
  }
  p.inputs["x"] = s.x(sampling::channel_shape(n, c, l), l);
  sampling::statistic(s, p, d.width);
  sampling::affine(s, p, {Affine::none, Affine::gamma, Affine::gamma_beta, Affine::gamma_beta}, Shape{c});
}

void cpu(const ValidProblem& p, Outputs& o) {
  if (p->conv.direction == Direction::backward) kernels::cpu::group_norm_backward(*p, o);
  else kernels::cpu::group_norm_forward(*p, o);
}

}  // namespace group_norms

namespace {
const ConventionKey kNumGroups{"num_groups", "number of groups G >= 1; G divides C; group g holds channels g C/G .. (g+1) C/G - 1",
                               [](const FieldSource& s, Convention& c) {
                                 c.num_groups = s.integer("num_groups");
                                 if (c.num_groups < 1)
                                   s.fail("num_groups", fmt::format("num_groups must be >= 1, got {}", c.num_groups));
                               },
                               [](const Convention& c) -> ConventionValue { return c.num_groups; }};
}  // namespace

extern const OpDef group_norm_def{
    .name = "group_norm",
    .formula = "y = gamma_c (x - mean) / sqrt(var + eps) + beta_c per (n, group of C/G channels) over channels and spatial",
    .centers = true,
    .params = {&kNumGroups},
    .validate = group_norms::validate,
    .outputs = group_norms::outputs,
    .optional_outputs = group_norms::saved_statistics,
    .output_dtypes = group_norms::saved_statistics_dtypes,
    .groups = group_norms::groups,
    .group_size = group_norms::group_size,
    .backward_outputs = channels::backward_outputs,
    .param_reduction = channels::param_reduction,
    .reference = group_norms::reference_exact,
    .reference_double = group_norms::reference_double,
    .cpu = group_norms::cpu,
    .mutants = {kernels::mutant::def<kernels::mutant::Fault::gn_interleaved_groups>("gn_two_groups")},
    .sample = group_norms::sample,
};

}  // namespace normcheck::ops
