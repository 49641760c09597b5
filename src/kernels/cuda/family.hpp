// CUDA group_norm / instance_norm and batch_norm forward: the launch choice and the host
// orchestration (buffers, poisoning, launches, batch_norm's steps and running stats),
// written once over an executor so that the device driver (family.cpp) and the CPU
// emulation (emulate_family.hpp) run the same host code. No CUDA header: plain C++.
// Numerics and the per-group algorithm: family_body.hpp; kernels: family.cu.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/cuda/family_body.hpp"
#include "kernels/cuda/launch.hpp"
#include "spec/op.hpp"
#include "spec/layout.hpp"

namespace normcheck::kernels::cuda {

/// A family launch: `threads` per block (power of two, 32..1024), `grid` blocks (0:
/// nothing to launch; a grid-stride loop takes the rest).
struct FamilyLaunch {
  int threads = 32;
  std::int64_t grid = 0;
};

/// Threads of the block that reduces a group of m values: about 8 values per thread,
/// a power of two in [32, 1024].
inline int family_threads(std::int64_t m) noexcept {
  int t = 32;
  while (t < 1024 && static_cast<std::int64_t>(t) * 8 < m) t *= 2;
  return t;
}
/// One block per group (group_norm: N G groups; batch_norm statistics: C channels).
inline FamilyLaunch group_launch(std::int64_t groups, std::int64_t m) noexcept {
  FamilyLaunch c;
  c.threads = family_threads(m);
  c.grid = groups > 0 && m > 0 ? std::min(groups, kMaxGrid) : 0;
  return c;
}
/// The elementwise batch_norm kernel: 256 threads per block, one element per thread.
inline constexpr int kElementThreads = 256;
inline FamilyLaunch element_launch(std::int64_t elements) noexcept {
  FamilyLaunch c;
  c.threads = kElementThreads;
  c.grid = elements > 0 ? std::min((elements + kElementThreads - 1) / kElementThreads, kMaxGrid) : 0;
  return c;
}

#ifdef NORMCHECK_HAVE_CUDA
/// Kernel launches on the default stream (family.cu); acc: f32 or f64. Asynchronous;
/// launch errors throw BackendError.
void launch_group_norm(const detail::GroupNormArgs& a, const FamilyLaunch& cfg, DType acc);
void launch_batch_norm_stats(const detail::BatchNormArgs& a, const FamilyLaunch& cfg, DType acc);
void launch_batch_norm_apply(const detail::BatchNormArgs& a, const FamilyLaunch& cfg, DType acc);

/// group_norm / instance_norm forward of a validated Problem on the current device: y
/// poisoned (0xFF bytes: NaN) before the launch, every CUDA call checked (BackendError).
void group_norm_forward(const Problem& p, Outputs& out);
/// batch_norm forward (every convention, `sequence` included), same contract; writes y and,
/// with track_running_stats, running_mean and running_var (out_dtype, [C]).
void batch_norm_forward(const Problem& p, Outputs& out);
#endif

namespace detail {

/// Values of a [C] tensor as the accumulation type (f32: RNE from f64, exact otherwise), as
/// the CPU kernels' load_param.
inline std::vector<unsigned char> acc_values(const Tensor* t, DType acc) {
  std::vector<unsigned char> out;
  if (!t) return out;
  out.resize(static_cast<std::size_t>(t->size()) * format_info(acc).bytes);
  for (std::int64_t i = 0; i < t->size(); ++i) {
    if (acc == DType::f64) {
      const double v = t->get(i);
      std::memcpy(out.data() + 8 * i, &v, 8);
    } else {
      const float v = static_cast<float>(t->get(i));
      std::memcpy(out.data() + 4 * i, &v, 4);
    }
  }
  return out;
}

/// [C] values of acc rounded once to dtype t.
inline Tensor acc_tensor(const std::vector<unsigned char>& v, DType acc, DType t, std::int64_t c) {
  Tensor o(t, Shape{c});
  for (std::int64_t i = 0; i < c; ++i) {
    if (acc == DType::f64) {
      double d;
      std::memcpy(&d, v.data() + 8 * i, 8);
      o.set(i, d);
    } else {
      float f;
      std::memcpy(&f, v.data() + 4 * i, 4);
      o.set(i, static_cast<double>(f));  // exact widening, then one rounding
    }
  }
  return o;
}

/// Exec: alloc(bytes) -> void* (owned by the executor, 256-byte aligned), upload(dst, src,
/// n), download(dst, src, n), poison(p, n) (0xFF bytes), sync(), and the three launches
/// group_norm(a, cfg, acc), bn_stats(a, cfg, acc), bn_apply(a, cfg, acc).
template <class Exec>
void group_norm_forward_on(const Problem& p, Outputs& out, Exec& ex) {
  const DType acc = accumulation_dtype(p);
  const ChannelLayout l = channel_layout(p);
  const Tensor& x = p.x();
  Tensor y(p.out_dtype, x.shape());
  const KernelParams kp = kernel_params(p, acc);
  GroupNormArgs a;
  a.groups = p.op == Op::instance_norm ? l.c : p.conv.num_groups;
  a.cpg = l.c / a.groups;
  a.spatial = l.spatial;
  a.m = a.cpg * l.spatial;
  a.groups_total = l.n * a.groups;
  a.dof = p.conv.variance == Variance::unbiased ? a.m - 1 : a.m;
  a.eps = p.conv.eps;
  a.placement = p.conv.eps_placement;
  a.affine = p.conv.affine;
  a.x_dtype = x.dtype();
  a.y_dtype = p.out_dtype;
  void* dx = ex.alloc(x.nbytes());
  void* dy = ex.alloc(y.nbytes());
  ex.upload(dx, x.data(), x.nbytes());
  a.x = dx;
  a.y = dy;
  if (!kp.gamma.empty()) {
    void* g = ex.alloc(kp.gamma.size());
    ex.upload(g, kp.gamma.data(), kp.gamma.size());
    a.gamma = g;
  }
  if (!kp.beta.empty()) {
    void* b = ex.alloc(kp.beta.size());
    ex.upload(b, kp.beta.data(), kp.beta.size());
    a.beta = b;
  }
  ex.poison(dy, y.nbytes());  // unwritten elements read as NaN
  const FamilyLaunch cfg = group_launch(a.groups_total, a.m);
  if (cfg.grid > 0) ex.group_norm(a, cfg, acc);
  ex.sync();
  ex.download(y.data(), dy, y.nbytes());
  out["y"] = std::move(y);
}

template <class Exec>
void batch_norm_forward_on(const Problem& p, Outputs& out, Exec& ex) {
  const Convention& c = p.conv;
  const DType acc = accumulation_dtype(p);
  const std::size_t ab = format_info(acc).bytes;
  const ChannelLayout l = channel_layout(p);
  const Tensor& x = p.x();
  Tensor y(p.out_dtype, x.shape());
  const KernelParams kp = kernel_params(p, acc);
  const std::int64_t m = l.n * l.spatial;
  BatchNormArgs a;
  a.n = l.n;
  a.c = l.c;
  a.spatial = l.spatial;
  a.dof = c.variance == Variance::unbiased ? m - 1 : m;
  a.eps = c.eps;
  a.placement = c.eps_placement;
  a.affine = c.affine;
  a.x_dtype = x.dtype();
  a.y_dtype = p.out_dtype;
  a.batch_stats = c.training || !c.track_running_stats;
  a.update = c.training && c.track_running_stats;
  a.running_dof = c.running_variance == Variance::unbiased ? l.n * l.spatial - 1 : l.n * l.spatial;
  void* dx = ex.alloc(x.nbytes());
  void* dy = ex.alloc(y.nbytes());
  ex.upload(dx, x.data(), x.nbytes());
  a.x = dx;
  a.y = dy;
  auto put = [&](const std::vector<unsigned char>& v) -> void* {
    if (v.empty()) return nullptr;
    void* d = ex.alloc(v.size());
    ex.upload(d, v.data(), v.size());
    return d;
  };
  a.gamma = put(kp.gamma);
  a.beta = put(kp.beta);
  std::vector<unsigned char> rm = acc_values(p.input("running_mean"), acc), rv = acc_values(p.input("running_var"), acc);
  a.running_mean = put(rm);
  a.running_var = put(rv);
  a.stats = ex.alloc(3 * static_cast<std::size_t>(l.c) * ab);
  ex.poison(dy, y.nbytes());  // unwritten elements read as NaN
  const FamilyLaunch stats_cfg = group_launch(l.c, a.batch_stats ? m : 1);
  const FamilyLaunch apply_cfg = element_launch(l.n * l.c * l.spatial);
  std::int64_t tracked = c.num_batches_tracked;
  for (std::int64_t s = 0; s < l.steps; ++s) {
    a.offset = s * l.n * l.c * l.spatial;
    a.momentum = 0;
    if (a.update) {
      ++tracked;
      a.momentum = c.momentum ? *c.momentum : 1.0 / static_cast<double>(tracked);
    }
    if (stats_cfg.grid > 0) ex.bn_stats(a, stats_cfg, acc);
    if (apply_cfg.grid > 0) ex.bn_apply(a, apply_cfg, acc);
  }
  ex.sync();
  ex.download(y.data(), dy, y.nbytes());
  out["y"] = std::move(y);
  if (c.track_running_stats) {
    if (!rm.empty()) ex.download(rm.data(), a.running_mean, rm.size());
    if (!rv.empty()) ex.download(rv.data(), a.running_var, rv.size());
    out["running_mean"] = acc_tensor(rm, acc, p.out_dtype, l.c);
    out["running_var"] = acc_tensor(rv, acc, p.out_dtype, l.c);
  }
}

}  // namespace detail

}  // namespace normcheck::kernels::cuda
