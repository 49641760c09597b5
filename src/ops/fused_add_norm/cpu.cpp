// CPU fused residual add + norm: per row, the residual add of row_kernel.hpp (h in A =
// binary32, binary64 for f64 data or accumulation; stored once into h's dtype), then the
// two-pass, 2^-e-scaled normalization of ops/common/group_kernel.hpp on the norm's input,
// the affine in A and one rounding into out_dtype. Error: the layer_norm kernel's
// (ops/layer_norm/cpu.cpp) plus the two additions of h, each relative <= u of
// |x| + |r| + |b|, which the condition magnitudes carry (reference.hpp): within the default
// gate 1 + 10 + sqrt(m) (op.cpp: extra_roundings = 2).
#include "ops/fused_add_norm/fused_add_norm.hpp"
#include "ops/fused_add_norm/row_kernel.hpp"

namespace normcheck::ops::fused {

namespace {

template <class A>
Outputs forward(const Problem& p, bool flip) {
  const RowLayout l = row_layout(p);
  Tensor y(p.out_dtype, p.x().shape()), h(h_dtype(p), p.x().shape());
  const kernels::cpu::detail::AffineParams<A> aff(p);
  const detail::ResidualAdd<A> add{p, h, flip};
  const bool center = p.op.def().centers;
  const std::int64_t dof = kernels::cpu::detail::dof_of(p.conv, l.m);
  std::vector<A> buf(static_cast<std::size_t>(l.m));
  for (std::int64_t r = 0; r < l.rows; ++r) {
    A* a = buf.data();
    add.row(r, l.m, a);
    kernels::cpu::detail::normalize_in_place(a, l.m, center, dof, p.conv);
    aff.apply(a, l.m);
    kernels::cpu::detail::store_row(y, r * l.m, l.m, a);
  }
  return {{"y", std::move(y)}, {"h", std::move(h)}};
}

Outputs run(const Problem& p, bool flip) {
  return kernels::cpu::detail::use_f64(p) ? forward<double>(p, flip) : forward<float>(p, flip);
}

}  // namespace

void cpu(const ValidProblem& p, Outputs& out) { out = run(*p, false); }

Outputs cpu_flipped(const Problem& p) { return run(p, true); }

}  // namespace normcheck::ops::fused
