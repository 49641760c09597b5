// The CPU residual-add step shared by fused_add_norm (cpu.cpp) and the quantizing norms
// (ops/quant_norm/cpu.cpp): per row, h = (x + residual) + bias in the accumulation type A
// (two roundings, each relative <= u of |x| + |r| + |b|: reference.hpp's magnitudes), h
// stored once into its dtype (RNE), and the norm's input left in the row buffer: the value
// just stored (norm_input = rounded) or the wide sum (unrounded). `flip` reads the other
// one: the mutants fused_norm_reads_unrounded / fused_norm_reads_rounded.
#pragma once

#include <vector>

#include "ops/common/group_kernel.hpp"

namespace normcheck::ops::fused::detail {

using kernels::cpu::detail::load_param;
using kernels::cpu::detail::Reader;

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
    const Reader<A> rx{x.data(), x.dtype()}, rr{res.data(), res.dtype()};
    const bool rounded = (p.conv.norm_input == NormInput::rounded) != flip;
    for (std::int64_t j = 0; j < m; ++j) {
      const std::int64_t i = r * m + j;
      A s = rx(i) + rr(i);
      if (!bias.empty()) s += bias[static_cast<std::size_t>(j)];
      h.set(i, static_cast<double>(s));  // one rounding into h's dtype
      a[j] = rounded ? static_cast<A>(h.get(i)) : s;
    }
  }
};

}  // namespace normcheck::ops::fused::detail
