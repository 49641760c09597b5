// CPU emulation of a CUDA row-kernel launch (host compiler, no GPU): the grid-stride row
// loop of row_norm.cuh with every thread of a group run in turn through the same per-row
// code (row_norm_body.hpp) and the same reduction tree (butterflies over 32 lanes, then
// over the warps' partials), so it is meant to predict the kernels' output bit for bit
// (NaN payloads aside; checked on a device by the [device] test of cuda_emulation_test.cpp).
// Tests use it to check the kernels' indexing (vector chunks, tails, cached and uncached
// passes, rows per block, grid stride, alignment of every vector access) and numerics on
// machines without a GPU. Compile its users with -ffp-contract=off (the kernels are built
// with --fmad=false): no contraction on either side.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/cuda/launch.hpp"
#include "kernels/cuda/row_norm.hpp"
#include "kernels/cuda/row_norm_body.hpp"

namespace normcheck::kernels::cuda::emulation {

/// The threads of one group (a warp: G = 32, or a block of G threads), run in turn.
template <class A>
class EmulatedGroup {
 public:
  /// G threads; warp: the group is one warp (one butterfly), else a block (two).
  EmulatedGroup(int G, bool warp) : G_(G), warp_(warp), part_(static_cast<std::size_t>(G)) {}
  int size() const { return G_; }

  template <class F> A reduce_max(F&& f) { return reduce(f, [](A a, A b) { return b > a ? b : a; }); }
  template <class F> A reduce_sum(F&& f) { return reduce(f, [](A a, A b) { return a + b; }); }
  template <class F> void for_each(F&& f) {
    for (int t = 0; t < G_; ++t) f(t);
  }

 private:
  /// row_norm.cuh's DeviceGroup::reduce: butterfly per warp, then over the warp partials.
  template <class F, class Op>
  A reduce(F& f, Op op) {
    for (int t = 0; t < G_; ++t) part_[t] = f(t);
    const int nwarps = G_ / 32;
    A partials[32];
    for (int w = 0; w < nwarps; ++w) partials[w] = butterfly(&part_[32 * w], op);
    if (warp_) return partials[0];
    A lanes[32];
    for (int l = 0; l < 32; ++l) lanes[l] = l < nwarps ? partials[l] : A(0);
    return butterfly(lanes, op);
  }
  /// Lane i after offsets 16..1: v_i = op(v_i, v_{i xor off}); returns lane 0 (all equal).
  template <class Op>
  static A butterfly(const A* in, Op op) {
    A v[32], n[32];
    for (int l = 0; l < 32; ++l) v[l] = in[l];
    for (int off = 16; off >= 1; off /= 2) {
      for (int l = 0; l < 32; ++l) n[l] = op(v[l], v[l ^ off]);
      for (int l = 0; l < 32; ++l) v[l] = n[l];
    }
    return v[0];
  }

 private:
  int G_;
  bool warp_;
  std::vector<A> part_;
};

template <bool kCenter>
struct Emulator {
  const RowNormArgs& a;
  const LaunchConfig& cfg;

  template <class A, class Tin, class Tout, int W>
  void run() const {
    using detail::RowPasses;
    const bool warp = cfg.strategy == RowStrategy::warp_per_row;
    const int groups = warp ? cfg.threads / 32 : 1;
    const int G = warp ? 32 : cfg.threads;
    const std::int64_t bx = detail::elem_bytes<Tin>(a.x_dtype), by = detail::elem_bytes<Tout>(a.y_dtype);
    const detail::RowConvention conv{a.dof, a.eps, a.placement};
    std::vector<A> smem(cfg.cached ? static_cast<std::size_t>(groups * a.d) : 0);
    EmulatedGroup<A> g(G, warp);
    const std::int64_t step = cfg.grid * groups;
    for (std::int64_t b = 0; b < cfg.grid; ++b)
      for (int grp = 0; grp < groups; ++grp)
        for (std::int64_t row = b * groups + grp; row < a.rows; row += step) {
          const RowPasses<A, Tin, Tout, W> p{static_cast<const unsigned char*>(a.x) + row * a.d * bx,
                                             static_cast<unsigned char*>(a.y) + row * a.d * by,
                                             cfg.cached ? smem.data() + grp * a.d : nullptr,
                                             static_cast<const A*>(a.gamma),
                                             static_cast<const A*>(a.beta),
                                             a.affine,
                                             a.x_dtype,
                                             a.y_dtype,
                                             a.d};
          detail::normalize_row<kCenter>(p, conv, g);
        }
  }
};

/// Runs the launch (a, cfg) of the layer_norm (center) or rms_norm kernel on the CPU, with
/// a's pointers in host memory. acc: as given to choose_launch. Throws std::logic_error
/// for a configuration the kernels lack, as launch_layer_norm would.
inline void emulate_row_norm(bool center, const RowNormArgs& a, const LaunchConfig& cfg, DType acc) {
  if (cfg.grid <= 0 || a.rows <= 0 || a.d <= 0) return;
  if (center) detail::dispatch(a.x_dtype, a.y_dtype, acc, cfg, Emulator<true>{a, cfg});
  else detail::dispatch(a.x_dtype, a.y_dtype, acc, cfg, Emulator<false>{a, cfg});
}

}  // namespace normcheck::kernels::cuda::emulation
