// CPU l2_normalize / scale_norm backward: binary32 accumulation (binary64 for f64).
//
// Per group along the reduced axes (gathered unless contiguous, as l2_normalize.cpp), groups
// over OpenMP threads: backward_kernel.hpp's group_backward_in_place with no centering and
// m' = 1 (v = sum x^2): n = x / D, dx = (1/D) (a - k n sum(a n)), a = g dy (g = 1 for
// l2_normalize; k = 0 where the clamp holds, dx = a / eps). scale_norm's dg = sum dy n over
// every element: one lane-blocked dot per group, then the groups' partial sums in order
// (deterministic for any thread count). Error bound: backward_kernel.hpp.
#include "core/region_errors.hpp"
#include "ops/common/cpu_kernels.hpp"
#include "ops/common/backward_kernel.hpp"
#include "spec/layout.hpp"

namespace normcheck::kernels::cpu {

namespace {

template <class A>
void l2_backward_impl(const Problem& p, Outputs& out) {
  using namespace detail;
  const Tensor& x = p.x();
  const Tensor& dy = p.inputs.at("dy");
  const ReductionLayout l = reduction_layout(x.shape(), reduced_axes(p));
  const auto m = static_cast<std::int64_t>(l.member.size());
  const bool scaled = p.op == Op::scale_norm;
  const A g = scaled ? load_param<A>(p.input("g"))[0] : A(1);
  const Reader<A> rx{x.data(), x.dtype()}, rdy{dy.data(), dy.dtype()};
  Tensor dx(p.out_dtype, x.shape());
  std::vector<A> partial(l.base.size());
  RegionErrors errors;  // (core/region_errors.hpp: an exception may not leave the region)
#pragma omp parallel if (x.size() > 32768)
  {
    std::vector<A> xb, gb, dyv, gg;
    errors.run([&] { xb.resize(static_cast<std::size_t>(m)); gb.resize(xb.size()); dyv.resize(xb.size()); gg.assign(scaled ? xb.size() : 0, g); });
#pragma omp for schedule(static)
    for (std::size_t grp = 0; grp < l.base.size(); ++grp) errors.run([&] {
      const std::int64_t base = l.base[grp];
      if (l.contiguous) {
        load_row(x, base, m, xb.data());
        load_row(dy, base, m, gb.data());
      } else {
        for (std::int64_t j = 0; j < m; ++j) { xb[j] = rx(base + l.member[j]); gb[j] = rdy(base + l.member[j]); }
      }
      if (scaled) std::copy(gb.begin(), gb.end(), dyv.begin());
      group_backward_in_place(xb.data(), gb.data(), m, false, 1, p.conv, scaled ? gg.data() : nullptr);
      if (scaled) partial[grp] = blocked_dot(dyv.data(), xb.data(), m);
      if (l.contiguous) store_row(dx, base, m, gb.data());
      else for (std::int64_t j = 0; j < m; ++j) store_row(dx, base + l.member[j], 1, gb.data() + j);
    });
  }
  errors.rethrow();
  out["dx"] = std::move(dx);
  if (scaled) {
    A dg = blocked_sum(partial.data(), static_cast<std::int64_t>(partial.size()), [](A v) { return v; });
    Tensor t(p.out_dtype, p.inputs.at("g").shape());
    store_row(t, 0, 1, &dg);
    out["dg"] = std::move(t);
  }
}

}  // namespace

void l2_normalize_backward(const Problem& p, Outputs& out) {
  if (detail::use_f64(p)) l2_backward_impl<double>(p, out);
  else l2_backward_impl<float>(p, out);
}

}  // namespace normcheck::kernels::cpu
