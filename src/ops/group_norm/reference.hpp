// Reference for group_norm and instance_norm, a plain loop template on the number type T.
//
// Formulas (shared/spec/worked-examples.md "Formulas"; Wu & He 2018 for GroupNorm,
// Ulyanov et al. 2016 for InstanceNorm): x is [N, C, *spatial]; group_norm with G groups
// normalizes each (n, g) over the C/G contiguous channels g*C/G .. (g+1)*C/G - 1 and all
// spatial positions, m = (C/G) * spatial values, exactly as layer_norm normalizes a row
// (row_norm.hpp: mean, biased or unbiased variance, eps placement); gamma and beta are
// per channel [C]. instance_norm is group_norm with G = C (m = spatial). A group holding
// NaN or an infinity gives NaN for its m outputs only.
//
// Condition magnitude: the group is contiguous in memory, so it is normalize_group's
// (row_norm.hpp) with the gains gathered per element:
//   c_i = |g_i|/D ((1 - 2/m) |x_i| + (1/m) sum_j |x_j| + k |n_i| (1/m') sum_j |n_j x_j|) + |g_i n_i| + [beta] |beta_i|,
// an O(m) triangle-inequality bound of sum_j |dy_i/dx_j x_j| plus the affine terms.
// Exactness: as row_norm.hpp (the same sums over m values).
#pragma once

#include "ops/common/certified_rows.hpp"
#include "ops/common/family_common.hpp"
#include "ops/common/row_norm.hpp"
#include "spec/layout.hpp"

namespace normcheck::reference {

/// group_norm / instance_norm forward in T; with `fast`, each group first in double-double
/// with a certified radius (ops/common/certified_rows.hpp: bit-identical to T's result, T
/// where the radius cannot decide), as the row norms.
template <class T>
ExactOutputs group_norm(const Problem& p, bool fast = false) {
  const ChannelLayout l = channel_layout(p);
  const std::int64_t G = p.op == Op::instance_norm ? l.c : p.conv.num_groups;
  const std::int64_t cpg = l.c / G, m = cpg * l.spatial;
  const Tensor& x = p.x();
  ExactOutput y = detail::make_output(p.out_dtype, x.shape());
  // The saved statistics (optional outputs) per (n, group): [N, G] (instance_norm [N, C]).
  ExactOutput mean = detail::make_output(saved_stat_dtype(p), Shape{l.n, G}), rstd = detail::make_output(saved_stat_dtype(p), Shape{l.n, G});
  // gamma and beta per channel as their exact binary64 values (every input dtype's values are).
  const std::vector<double> gamma = detail::load_all<double>(p.input("gamma")), beta = detail::load_all<double>(p.input("beta"));
  // One group in U (T, or DDBall for the certified path); writes every output of the group
  // (certified_rows' contract: a failed DDBall attempt's partial writes are overwritten).
  auto one_group = [&](std::int64_t grp, auto tag) {
    using U = typename decltype(tag)::type;
    const std::int64_t off = grp * m, ch0 = (grp % G) * cpg;
    std::vector<U> xg(static_cast<std::size_t>(m)), yg(xg.size()), gg, bg;
    std::vector<double> cg(xg.size());  // the group's condition magnitudes, kept by put()
    if (!gamma.empty()) gg.resize(xg.size());
    if (!beta.empty()) bg.resize(xg.size());
    for (std::int64_t j = 0; j < m; ++j) {
      xg[j] = U(x.get(off + j));
      const std::int64_t ch = ch0 + j / l.spatial;
      if (!gamma.empty()) gg[j] = U(gamma[ch]);
      if (!beta.empty()) bg[j] = U(beta[ch]);
    }
    GroupStatistics<U> st;
    normalize_group(xg.data(), m, true, p.conv, gg.data(), bg.data(), yg.data(), cg.data(), static_cast<const U*>(nullptr), &st);
    for (std::int64_t j = 0; j < m; ++j) detail::put(y, off + j, yg[j], cg[j]);
    detail::put(mean, grp, st.mean, st.c_mean);
    detail::put(rstd, grp, st.rstd, st.c_rstd);
  };
  detail::certified_rows<T>(l.n * G, fast, x.size() > detail::kParallelMin, one_group);
  ExactOutputs o;
  o.emplace("y", std::move(y));
  o.emplace("mean", std::move(mean));
  o.emplace("rstd", std::move(rstd));
  return o;
}

}  // namespace normcheck::reference
