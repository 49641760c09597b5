// CPU l2_normalize / scale_norm forward: binary32 accumulation (binary64 for f64).
//
// Per group along the reduced axes (gathered into a buffer unless the axes are the
// trailing dims, then read in place): scan (NaN/inf -> NaN group), scale by s = 2^-e
// (exact), ss = blocked_sum((x s)^2) (all terms >= 0: relative error <= (m/8 + 4) u),
// r = 1 / D_s(ss) in binary64 (clamp_norm: 1 / max(sqrt(ss), eps s)) rounded once to A,
// y = (x s r) [g] (group_kernel.hpp with dof = 1, no centering). The zero vector gives 0
// for eps > 0. Error bound: |y^ - y| <= ulp_out/2 + (m/16 + 8) u c_i (c_i of
// ops/l2_normalize/reference.hpp), within the default gate 1 + 8 + sqrt(m).
#include "core/region_errors.hpp"
#include "ops/common/cpu_kernels.hpp"
#include "ops/common/group_kernel.hpp"
#include "spec/layout.hpp"

namespace normcheck::kernels::cpu {

namespace {

template <class A>
void l2_groups(const Problem& p, Tensor& y) {
  using namespace detail;
  const Tensor& x = p.x();
  const ReductionLayout l = reduction_layout(x.shape(), reduced_axes(p));
  const auto m = static_cast<std::int64_t>(l.member.size());
  const bool scaled = p.op == Op::scale_norm;
  const A gain = scaled ? load_param<A>(p.input("g"))[0] : A(1);
  const Reader<A> rd{x.data(), x.dtype()};
  RegionErrors errors;  // (core/region_errors.hpp: an exception may not leave the region)
#pragma omp parallel if (x.size() > 32768)
  {
    std::vector<A> buf;
    errors.run([&] { buf.resize(static_cast<std::size_t>(m)); });
#pragma omp for schedule(static)
    for (std::size_t g = 0; g < l.base.size(); ++g) errors.run([&] {
      A* a = buf.data();
      const std::int64_t base = l.base[g];
      if (l.contiguous) load_row(x, base, m, a);
      else for (std::int64_t j = 0; j < m; ++j) a[j] = rd(base + l.member[j]);
      normalize_in_place(a, m, false, 1, p.conv);
      if (scaled) for (std::int64_t j = 0; j < m; ++j) a[j] *= gain;
      if (l.contiguous) store_row(y, base, m, a);
      else for (std::int64_t j = 0; j < m; ++j) store_row(y, base + l.member[j], 1, a + j);
    });
  }
  errors.rethrow();
}

}  // namespace

void l2_normalize_forward(const Problem& p, Outputs& out) {
  Tensor y(p.out_dtype, p.x().shape());
  if (detail::use_f64(p)) l2_groups<double>(p, y);
  else l2_groups<float>(p, y);
  out["y"] = std::move(y);
}

}  // namespace normcheck::kernels::cpu
