// The per-group algorithm of the CUDA family kernels (group_norm / instance_norm,
// batch_norm; family.cu), written once for two compilers like row_norm_body.hpp: nvcc
// compiles it into the kernels, the host compiler into their CPU emulation
// (emulate_family.hpp), which runs every thread of a block in turn through the same code
// and the same reduction tree (emulate.hpp's EmulatedGroup), so the kernels' indexing and
// numerics are unit-tested without a GPU (tests/cuda_family_emulation_test.cpp).
//
// A group is m values of x at element base + (k / inner) * outer + k % inner, k < m:
//   group_norm / instance_norm: group (n, g) is contiguous, inner = m = (C/G) spatial;
//   batch_norm: channel ch of step s, N blocks of `spatial` values C spatial apart.
// One block of G threads per group (grid-stride over the groups); thread t takes
// k = t, t + G, t + 2G, ... in increasing order, scalar accesses (the dtype is read per
// element: one instantiation per accumulation type). The kernels' algorithm is the CPU
// kernels' (kernels/cpu/group_kernel.hpp) and the row kernels' (row_norm_body.hpp):
//   0. scan max|x| and finiteness (block max); a group holding NaN or +-inf is NaN
//      everywhere (batch_norm: its running stats too);
//   1. s = 2^-e, e the exponent of max|x| (row_scale): exact, no overflow of the squares
//      of values near 1e19..1e38, no underflow of the squares of subnormals;
//   2. mu = (block sum of x s) / m;  3. ss = block sum of (x s - mu)^2, one fma per square;
//   4. r = 1 / D_s(ss / dof) in binary64 rounded once to A (ss == 0: 0 when eps > 0, a
//      constant group gives zeros; +inf when eps == 0, 0 * inf = NaN as the reference);
//   5. y = affine((x s - mu) r, gamma[ch], beta[ch]) rounded once to the output dtype
//      (group_norm in the same block; batch_norm in a second, elementwise kernel that
//      reads the per-channel (s, mu, r)).
// batch_norm eval (running stats): r = 1 / D(running_var) in binary64 rounded to A, mu =
// running_mean, s = 1; a non-finite x reaches only its own output.
// (running_var takes ss / running_dof: m - 1, or m with running_variance = biased.)
// batch_norm update (training with running stats), thread 0 of the channel's block, the
// CPU kernel's operations: mu = mu_s / s, v_u = ss / (m - 1) / s / s in binary64, then
// rm <- keep rm + a mu, rv <- keep rv + a v_u in A (keep = 1 - a rounded once to A; a mu
// and a v_u formed in binary64 and rounded once: with a = 0, a v_u beyond A's range had given
// 0 * inf = NaN where the exact running_var is the old one; a sixth audit's momentum draw).
// Error bound: thread t adds n_t <= ceil(m / G) terms, then the block tree (depth 10):
// |y^ - y| <= ulp_out/2 + (n_t + 16) u c_i worst case, typically
// ulp_out/2 + (sqrt(n_t + 10) + 6) u c_i, within the default gate 1 + 8 + sqrt(m)
// (checks/budget.cpp): the derivation of row_norm_body.hpp with W = 1.
#pragma once

#include <cstdint>

#include "kernels/cuda/row_norm_body.hpp"

namespace normcheck::kernels::cuda::detail {

/// One group of m values of x (storage dtype xt) as seen by thread t of a block of G.
template <class A>
struct GroupView {
  const void* x;
  DType xt;
  std::int64_t base, inner, outer, m;

  NORMCHECK_HD std::int64_t at(std::int64_t k) const { return base + (k / inner) * outer + k % inner; }
  NORMCHECK_HD A load(std::int64_t k) const { return Access<A, Dyn, 1>::load1(x, xt, at(k)); }

  NORMCHECK_HD A scan(int t, int G) const {
    A mx = 0;
    for (std::int64_t k = t; k < m; k += G) track_max(mx, load(k));
    return mx;
  }
  NORMCHECK_HD A sum_scaled(int t, int G, A sa) const {
    A acc = 0;
    for (std::int64_t k = t; k < m; k += G) acc = acc + load(k) * sa;
    return acc;
  }
  NORMCHECK_HD A sum_sq(int t, int G, A sa, A mu) const {
    A acc = 0;
    for (std::int64_t k = t; k < m; k += G) {
      const A c = load(k) * sa - mu;
      acc = fma_(c, c, acc);
    }
    return acc;
  }
};

/// Statistics of a group: normalized value n = (x sa - mu) r. nonfinite: r is NaN.
template <class A>
struct FamilyStats {
  bool nonfinite = false;
  double s = 1;
  A sa = 1, mu = 0, ss = 0, r = 0;
};

/// Steps 0..4 over the block g (EmulatedGroup or DeviceGroup: size, reduce_max, reduce_sum).
template <class A, class Group>
NORMCHECK_HD FamilyStats<A> group_stats(const GroupView<A>& v, std::int64_t dof, double eps, EpsPlacement pl, Group& g) {
  FamilyStats<A> st;
  const int G = g.size();
  const A amax = g.reduce_max([&](int t) { return v.scan(t, G); });
  if (!(amax <= Limits<A>::max)) {
    st.nonfinite = true;
    st.r = quiet_nan<A>();
    return st;
  }
  st.s = row_scale(static_cast<double>(amax), max_scale_up(Limits<A>::max_up, eps));
  st.sa = static_cast<A>(st.s);
  st.mu = g.reduce_sum([&](int t) { return v.sum_scaled(t, G, st.sa); }) / static_cast<A>(v.m);
  st.ss = g.reduce_sum([&](int t) { return v.sum_sq(t, G, st.sa, st.mu); });
  st.r = acc_inverse<A>(inv_scaled_denominator(static_cast<double>(st.ss) / static_cast<double>(dof), st.s, st.ss == 0, eps, pl), st.ss == 0);
  return st;
}

/// gamma n, fma(gamma, n, beta) or n (gamma already 1 + w for one_plus_w).
template <class A>
NORMCHECK_HD A family_affine(Affine af, A n, const A* gamma, const A* beta, std::int64_t ch) {
  switch (af) {
    case Affine::none: return n;
    case Affine::gamma:
    case Affine::one_plus_w: return gamma[ch] * n;
    case Affine::gamma_beta: return fma_(gamma[ch], n, beta[ch]);
  }
  return n;
}

/// One group_norm launch: x, y [N, C, spatial] (N*G contiguous groups of m = cpg*spatial);
/// gamma/beta: C values of the accumulation type, or null.
struct GroupNormArgs {
  const void* x = nullptr;
  void* y = nullptr;
  const void* gamma = nullptr;
  const void* beta = nullptr;
  std::int64_t groups_total = 0;  ///< N * G
  std::int64_t groups = 1;        ///< G
  std::int64_t cpg = 1;           ///< channels per group
  std::int64_t spatial = 1;
  std::int64_t m = 0;             ///< cpg * spatial
  std::int64_t dof = 1;
  double eps = 0;
  EpsPlacement placement = EpsPlacement::inside_sqrt;
  Affine affine = Affine::none;
  DType x_dtype = DType::f32, y_dtype = DType::f32;
};

/// Group gi of a group_norm launch, the whole block g (steps 0..5).
template <class A, class Group>
NORMCHECK_HD void group_norm_group(const GroupNormArgs& a, std::int64_t gi, Group& g) {
  const GroupView<A> v{a.x, a.x_dtype, gi * a.m, a.m, 0, a.m};
  const FamilyStats<A> st = group_stats(v, a.dof, a.eps, a.placement, g);
  const int G = g.size();
  const std::int64_t ch0 = (gi % a.groups) * a.cpg;
  const A* gamma = static_cast<const A*>(a.gamma);
  const A* beta = static_cast<const A*>(a.beta);
  g.for_each([&](int t) {
    for (std::int64_t k = t; k < a.m; k += G) {
      const A n = st.nonfinite ? quiet_nan<A>() : (v.load(k) * st.sa - st.mu) * st.r;
      Access<A, Dyn, 1>::store1(a.y, a.y_dtype, v.at(k), family_affine(a.affine, n, gamma, beta, ch0 + k / a.spatial));
    }
  });
}

/// One batch_norm step (one call of a sequence): x, y [N, C, spatial] from element
/// `offset`; gamma/beta: C values of A or null; running_mean/var: C values of A (device
/// state kept between the steps) or null; stats: 3 C values of A written by the stats
/// kernel (sa, mu, r per channel) and read by the elementwise kernel.
struct BatchNormArgs {
  const void* x = nullptr;
  void* y = nullptr;
  const void* gamma = nullptr;
  const void* beta = nullptr;
  void* running_mean = nullptr;
  void* running_var = nullptr;
  void* stats = nullptr;
  std::int64_t n = 0, c = 0, spatial = 1, offset = 0, dof = 1;
  double eps = 0;
  EpsPlacement placement = EpsPlacement::inside_sqrt;
  Affine affine = Affine::none;
  DType x_dtype = DType::f32, y_dtype = DType::f32;
  bool batch_stats = true;  ///< training or track_running_stats = false
  bool update = false;      ///< training with running stats
  double momentum = 0;      ///< a of this step (already 1 / tracked for the cumulative average)
  std::int64_t running_dof = 0;  ///< divisor of the batch variance folded into running_var: m - 1 (unbiased) or m (biased)
};

/// Channel ch of a batch_norm step, the whole block g: its (sa, mu, r) into stats and, with
/// update, its running stats (thread 0).
template <class A, class Group>
NORMCHECK_HD void batch_norm_channel(const BatchNormArgs& a, std::int64_t ch, Group& g) {
  A* stats = static_cast<A*>(a.stats);
  A* rm = static_cast<A*>(a.running_mean);
  A* rv = static_cast<A*>(a.running_var);
  if (!a.batch_stats) {
    g.for_each([&](int t) {
      if (t != 0) return;
      const double inv = inv_scaled_denominator(static_cast<double>(rv[ch]), 1.0, false, a.eps, a.placement);
      // 1/D beyond A's range though finite (running_var 0, eps below ~1e-77 in binary32): r is
      // stored times 2^-64 and the scale slot holds 2^64, which batch_element applies in
      // binary64 (x = running_mean gave 0 * inf = NaN, exact 0; the CPU kernel's fix).
      const bool wide = !(static_cast<double>(static_cast<A>(inv)) <= static_cast<double>(Limits<A>::max)) && inv <= DBL_MAX;
      stats[ch] = wide ? static_cast<A>(0x1p64) : A(1);
      stats[a.c + ch] = rm[ch];
      stats[2 * a.c + ch] = static_cast<A>(wide ? inv * 0x1p-64 : inv);
    });
    return;
  }
  const std::int64_t m = a.n * a.spatial;
  const GroupView<A> v{a.x, a.x_dtype, a.offset + ch * a.spatial, a.spatial, a.c * a.spatial, m};
  const FamilyStats<A> st = group_stats(v, a.dof, a.eps, a.placement, g);
  g.for_each([&](int t) {
    if (t != 0) return;
    stats[ch] = st.sa;
    stats[a.c + ch] = st.mu;
    stats[2 * a.c + ch] = st.r;
    if (!a.update) return;
    if (st.nonfinite) {
      rm[ch] = rv[ch] = quiet_nan<A>();
      return;
    }
    const A keep = static_cast<A>(1.0 - a.momentum);
    const double mu = static_cast<double>(st.mu) / st.s;
    const double vu = static_cast<double>(st.ss) / static_cast<double>(a.running_dof) / st.s / st.s;  // s^2 may overflow for f64
    rm[ch] = keep * rm[ch] + static_cast<A>(a.momentum * mu);
    rv[ch] = keep * rv[ch] + static_cast<A>(a.momentum * vu);
  });
}

/// Element e (< N C spatial) of a batch_norm step: y = affine((x sa - mu) r).
template <class A>
NORMCHECK_HD void batch_norm_element(const BatchNormArgs& a, std::int64_t e) {
  const A* stats = static_cast<const A*>(a.stats);
  const std::int64_t ch = (e / a.spatial) % a.c;
  const A x = Access<A, Dyn, 1>::load1(a.x, a.x_dtype, a.offset + e);
  if (!a.batch_stats && stats[ch] != A(1)) {  // eval, 1/D beyond A's range (batch_norm_channel)
    const A n = static_cast<A>((static_cast<double>(x) - static_cast<double>(stats[a.c + ch])) * static_cast<double>(stats[2 * a.c + ch]) *
                               static_cast<double>(stats[ch]));
    Access<A, Dyn, 1>::store1(a.y, a.y_dtype, a.offset + e,
                              family_affine(a.affine, n, static_cast<const A*>(a.gamma), static_cast<const A*>(a.beta), ch));
    return;
  }
  const A n = (x * stats[ch] - stats[a.c + ch]) * stats[2 * a.c + ch];
  Access<A, Dyn, 1>::store1(a.y, a.y_dtype, a.offset + e,
                            family_affine(a.affine, n, static_cast<const A*>(a.gamma), static_cast<const A*>(a.beta), ch));
}

}  // namespace normcheck::kernels::cuda::detail
