// CPU batch_norm backward (one call): binary32 accumulation (binary64 for f64), channels
// over OpenMP threads.
//
// Batch statistics (training, or track_running_stats = false): the channel's N blocks of
// `spatial` values are gathered into one buffer of m = N * spatial values (batch_norm.cpp) and
// go through backward_kernel.hpp's group_backward_in_place: dx through the batch statistics,
//   dx = (1/D) (g dy - mean(g dy) - (k/m') n sum(g dy n)),
// so every sample's gradient depends on the whole batch. Eval with running stats: the
// statistics are constants, r = 1/D(running_var) in binary64 rounded once to A,
//   dx = (g dy) r,  n = (x - running_mean) r   (two roundings each).
// Both: dgamma[ch] = sum dy n, dbeta[ch] = sum dy over the channel's R = m values
// (backward_kernel.hpp wide_dot: binary64, no spurious overflow). Error bound: backward_kernel.hpp; eval dx: 2 roundings.
#include "core/region_errors.hpp"
#include "ops/common/cpu_kernels.hpp"
#include "ops/common/backward_kernel.hpp"
#include "spec/layout.hpp"

namespace normcheck::kernels::cpu {

namespace {

template <class A>
void batch_norm_backward_impl(const Problem& p, Outputs& out) {
  using namespace detail;
  const Convention& c = p.conv;
  const ChannelLayout l = channel_layout(p);
  const std::int64_t m = l.n * l.spatial, dof = dof_of(c, m);
  const std::vector<A> gain = affine_gain<A>(p);
  const std::vector<A> rm = load_param<A>(p.input("running_mean")), rv = load_param<A>(p.input("running_var"));
  const Tensor& x = p.x();
  const Tensor& dy = p.inputs.at("dy");
  Tensor dx(p.out_dtype, x.shape());
  const bool batch_stats = c.training || !c.track_running_stats;
  std::vector<double> dgamma(static_cast<std::size_t>(l.c)), dbeta(dgamma.size());  // wide_dot's sums
  auto at = [&](std::int64_t i, std::int64_t ch) { return (i * l.c + ch) * l.spatial; };
  RegionErrors errors;  // (core/region_errors.hpp: an exception may not leave the region)
#pragma omp parallel if (x.size() > 32768)
  {
    std::vector<A> xb, gb, gg;
    errors.run([&] { xb.resize(static_cast<std::size_t>(m)); gb.resize(xb.size()); gg.resize(gain.empty() ? 0 : xb.size()); });
#pragma omp for schedule(static)
    for (std::int64_t ch = 0; ch < l.c; ++ch) errors.run([&] {
      const A g = gain.empty() ? A(1) : gain[ch];
      for (std::int64_t i = 0; i < l.n; ++i) {
        load_row(x, at(i, ch), l.spatial, xb.data() + i * l.spatial);
        load_row(dy, at(i, ch), l.spatial, gb.data() + i * l.spatial);
      }
      dbeta[ch] = wide_dot<A>(gb.data(), nullptr, m);
      if (batch_stats) {
        std::fill(gg.begin(), gg.end(), g);
        const std::vector<A> dyv(gb);
        group_backward_in_place(xb.data(), gb.data(), m, true, dof, c, gg.empty() ? nullptr : gg.data());
        dgamma[ch] = wide_dot(dyv.data(), xb.data(), m);
      } else {
        const A r = static_cast<A>(1.0 / scaled_denominator(static_cast<double>(rv[ch]), 1.0, c));
        std::vector<A> dyv(gb);
        for (std::int64_t j = 0; j < m; ++j) {
          xb[j] = (xb[j] - rm[ch]) * r;  // n
          gb[j] = (g * gb[j]) * r;
        }
        dgamma[ch] = wide_dot(dyv.data(), xb.data(), m);  // sum dy n
      }
      for (std::int64_t i = 0; i < l.n; ++i) store_row(dx, at(i, ch), l.spatial, gb.data() + i * l.spatial);
    });
  }
  errors.rethrow();
  out["dx"] = std::move(dx);
  store_param_grads(p, out, dgamma, dbeta);
}

}  // namespace

void batch_norm_backward(const Problem& p, Outputs& out) {
  if (detail::use_f64(p)) batch_norm_backward_impl<double>(p, out);
  else batch_norm_backward_impl<float>(p, out);
}

}  // namespace normcheck::kernels::cpu
