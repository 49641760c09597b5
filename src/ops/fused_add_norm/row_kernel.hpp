// The CPU residual-add step shared by fused_add_norm (cpu.cpp) and the quantizing norms
// (ops/quant_norm/cpu.cpp): per row, h = x + residual + bias as an exact binary64 pair
// (TwoSum: hi + lo, the inputs' values are binary64 values), h stored as the one correct
// rounding of that sum into its dtype (core/dtype.hpp round_sum_to), and the norm's input
// left in the row buffer: the value just stored (norm_input = rounded) or the wide sum hi
// in A (unrounded: one rounding, relative <= u of |x| + |r| + |b|: reference.hpp's
// magnitudes). `flip` reads the other one: the mutants fused_norm_reads_unrounded /
// fused_norm_reads_rounded. (Summing in A and then storing rounded twice: bf16 x =
// 0x1.cp+102, residual = -0x1.188p+103, bias = 1 has x + residual exactly on a bf16
// midpoint and the bias below it; f32 lost the bias and stored the even neighbour, one bf16
// ulp from the correctly rounded h the norm must read. Found by normcheck fuzz.)
#pragma once

#include <utility>
#include <vector>

#include "ops/common/group_kernel.hpp"

namespace normcheck::ops::fused::detail {

using kernels::cpu::detail::load_param;
using kernels::cpu::detail::Reader;

/// Knuth's TwoSum: s = fl(a + b) and the exact error e = a + b - s (binary64).
inline std::pair<double, double> two_sum(double a, double b) noexcept {
  const double s = a + b, bb = s - a;
  return {s, (a - (s - bb)) + (b - bb)};
}

template <class A>
struct ResidualAdd {
  const Problem& p;
  Tensor& h;
  bool flip = false;
  std::vector<A> bias = load_param<A>(p.input("bias"));

  /// Fills a[0..m) with row r's norm input and writes row r of h.
  void row(std::int64_t r, std::int64_t m, A* a) const {
    const Tensor& x = p.x();
    const Tensor& res = p.inputs.at("residual");
    const bool rounded = (p.conv.norm_input == NormInput::rounded) != flip;
    const Reader<double> dx{x.data(), x.dtype()}, dr{res.data(), res.dtype()};
    for (std::int64_t j = 0; j < m; ++j) {
      const std::int64_t i = r * m + j;
      const double b = bias.empty() ? 0.0 : static_cast<double>(bias[static_cast<std::size_t>(j)]);
      const auto [s1, e1] = two_sum(dx(i), dr(i));
      const auto [s2, e2] = two_sum(s1, b);
      const auto [lo, e3] = two_sum(e1, e2);
      const auto [hi, lo2] = two_sum(s2, lo);
      // One correct rounding into h's dtype; an inf or NaN sum as it is (TwoSum's error
      // terms are NaN there).
      h.set(i, std::isfinite(s2) ? round_sum_to(h.dtype(), hi, lo2 != 0 ? lo2 : e3) : s2);
      a[j] = rounded ? static_cast<A>(h.get(i)) : static_cast<A>(std::isfinite(s2) ? hi : s2);
    }
  }
};

}  // namespace normcheck::ops::fused::detail
