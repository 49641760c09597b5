// CPU emulation of the CUDA family kernels (family.cu): the host executor of family.hpp's
// orchestration, whose launches run every block of the grid, and every thread of a block
// in turn, through the same per-group code (family_body.hpp) and the same reduction tree
// (emulate.hpp's EmulatedGroup, the block's two butterflies) as the device, so it is meant
// to predict the kernels' output bit for bit (NaN payloads aside; checked on a device by the
// [device] test of tests/cuda_family_emulation_test.cpp). Compile its users with
// -ffp-contract=off (the kernels are built with --fmad=false).
#pragma once

#include <cstring>
#include <memory>
#include <vector>

#include "kernels/cuda/emulate.hpp"
#include "kernels/cuda/family.hpp"

namespace normcheck::kernels::cuda::emulation {

/// Host memory stands in for device memory; `max_grid` > 0 caps every grid (to exercise
/// the grid-stride loops). Counts the launches it ran.
class HostExec {
 public:
  std::int64_t max_grid = 0;
  int launches = 0;
  std::vector<FamilyLaunch> configs;

  void* alloc(std::size_t n) {
    if (!n) return nullptr;
    bufs_.push_back(std::make_unique<unsigned char[]>(n + 256));
    auto a = reinterpret_cast<std::uintptr_t>(bufs_.back().get());
    return bufs_.back().get() + (256 - a % 256) % 256;
  }
  void upload(void* dst, const void* src, std::size_t n) {
    if (n) std::memcpy(dst, src, n);
  }
  void download(void* dst, const void* src, std::size_t n) {
    if (n) std::memcpy(dst, src, n);
  }
  void poison(void* p, std::size_t n) {
    if (n) std::memset(p, 0xff, n);
  }
  void sync() {}

  void group_norm(const detail::GroupNormArgs& a, FamilyLaunch c, DType acc) {
    c = cap(c);
    if (acc == DType::f64) blocks<double>(c, a.groups_total, [&](std::int64_t gi, auto& g) { detail::group_norm_group<double>(a, gi, g); });
    else blocks<float>(c, a.groups_total, [&](std::int64_t gi, auto& g) { detail::group_norm_group<float>(a, gi, g); });
  }
  void bn_stats(const detail::BatchNormArgs& a, FamilyLaunch c, DType acc) {
    c = cap(c);
    if (acc == DType::f64) blocks<double>(c, a.c, [&](std::int64_t ch, auto& g) { detail::batch_norm_channel<double>(a, ch, g); });
    else blocks<float>(c, a.c, [&](std::int64_t ch, auto& g) { detail::batch_norm_channel<float>(a, ch, g); });
  }
  void bn_apply(const detail::BatchNormArgs& a, FamilyLaunch c, DType acc) {
    c = cap(c);
    const std::int64_t total = a.n * a.c * a.spatial, step = c.grid * c.threads;
    for (std::int64_t b = 0; b < c.grid; ++b)
      for (int t = 0; t < c.threads; ++t)
        for (std::int64_t e = b * c.threads + t; e < total; e += step) {
          if (acc == DType::f64) detail::batch_norm_element<double>(a, e);
          else detail::batch_norm_element<float>(a, e);
        }
  }

 private:
  FamilyLaunch cap(FamilyLaunch c) {
    if (c.threads < 32 || c.threads > 1024 || (c.threads & (c.threads - 1)) != 0)
      throw std::logic_error("cuda family kernel: malformed launch configuration");
    if (max_grid > 0 && c.grid > max_grid) c.grid = max_grid;
    ++launches;
    configs.push_back(c);
    return c;
  }
  /// Block b takes units b, b + grid, ...; its G threads run as one EmulatedGroup (a block).
  template <class A, class F>
  void blocks(const FamilyLaunch& c, std::int64_t units, F&& f) {
    EmulatedGroup<A> g(c.threads, false);
    for (std::int64_t b = 0; b < c.grid; ++b)
      for (std::int64_t u = b; u < units; u += c.grid) f(u, g);
  }

  std::vector<std::unique_ptr<unsigned char[]>> bufs_;
};

/// group_norm / instance_norm forward emulated on the CPU (the device driver's host code).
inline void group_norm_forward(const Problem& p, Outputs& out, HostExec& ex) { detail::group_norm_forward_on(p, out, ex); }
/// batch_norm forward emulated on the CPU.
inline void batch_norm_forward(const Problem& p, Outputs& out, HostExec& ex) { detail::batch_norm_forward_on(p, out, ex); }

}  // namespace normcheck::kernels::cuda::emulation
