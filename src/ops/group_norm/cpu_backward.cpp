// CPU group_norm / instance_norm backward: binary32 accumulation (binary64 for f64).
//
// Group (n, g) is one contiguous block of m = (C/G) * spatial values (group_norm.cpp): each
// block goes through backward_kernel.hpp's group_backward_in_place with the per-channel gain
// of each element (gamma[ch], or 1 + w), groups over OpenMP threads. Then per channel
// (channels in parallel): dgamma[ch] = sum dy n and dbeta[ch] = sum dy over its R = N * spatial
// values, lane-blocked (blocked_sum_n). Error bound: backward_kernel.hpp, within the gate
// 1 + 16 + sqrt(m) + sqrt(R).
#include "core/region_errors.hpp"
#include "ops/common/cpu_kernels.hpp"
#include "ops/common/backward_kernel.hpp"
#include "spec/layout.hpp"

namespace normcheck::kernels::cpu {

namespace {

template <class A>
void group_norm_backward_impl(const Problem& p, Outputs& out) {
  using namespace detail;
  const ChannelLayout l = channel_layout(p);
  const std::int64_t G = p.op == Op::instance_norm ? l.c : p.conv.num_groups;
  const std::int64_t cpg = l.c / G, m = cpg * l.spatial, dof = dof_of(p.conv, m);
  const std::vector<A> gain = affine_gain<A>(p);
  const bool params = !gain.empty();
  const Tensor& x = p.x();
  const Tensor& dy = p.inputs.at("dy");
  Tensor dx(p.out_dtype, x.shape());
  std::vector<A> nall(params ? static_cast<std::size_t>(x.size()) : 0);
  RegionErrors errors;  // (core/region_errors.hpp: an exception may not leave the region)
#pragma omp parallel if (x.size() > 32768)
  {
    std::vector<A> xb, gb, gg;
    errors.run([&] { xb.resize(static_cast<std::size_t>(m)); gb.resize(xb.size()); gg.resize(params ? xb.size() : 0); });
#pragma omp for schedule(static)
    for (std::int64_t grp = 0; grp < l.n * G; ++grp) errors.run([&] {
      load_row(x, grp * m, m, xb.data());
      load_row(dy, grp * m, m, gb.data());
      const std::int64_t ch0 = (grp % G) * cpg;
      for (std::size_t j = 0; j < gg.size(); ++j) gg[j] = gain[ch0 + static_cast<std::int64_t>(j) / l.spatial];
      group_backward_in_place(xb.data(), gb.data(), m, true, dof, p.conv, params ? gg.data() : nullptr);
      store_row(dx, grp * m, m, gb.data());
      if (params) std::copy(xb.begin(), xb.end(), nall.begin() + grp * m);
    });
  }
  errors.rethrow();
  out["dx"] = std::move(dx);
  if (!params) return;
  std::vector<A> dgamma(static_cast<std::size_t>(l.c)), dbeta(dgamma.size());
  const Reader<A> rd{dy.data(), dy.dtype()};
#pragma omp parallel for schedule(static) if (x.size() > 32768)
  for (std::int64_t ch = 0; ch < l.c; ++ch) {
    // The k-th value of channel ch: sample k / spatial, position k % spatial.
    auto at = [&](std::int64_t k) { return ((k / l.spatial) * l.c + ch) * l.spatial + k % l.spatial; };
    dgamma[ch] = blocked_sum_n<A>(l.n * l.spatial, [&](std::int64_t k) { return rd(at(k)) * nall[at(k)]; });
    dbeta[ch] = blocked_sum_n<A>(l.n * l.spatial, [&](std::int64_t k) { return rd(at(k)); });
  }
  store_param_grads(p, out, dgamma, dbeta);
}

}  // namespace

void group_norm_backward(const Problem& p, Outputs& out) {
  if (detail::use_f64(p)) group_norm_backward_impl<double>(p, out);
  else group_norm_backward_impl<float>(p, out);
}

}  // namespace normcheck::kernels::cpu
