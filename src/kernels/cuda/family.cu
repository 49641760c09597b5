// CUDA group_norm / instance_norm and batch_norm forward kernels: binary32 accumulation for
// f32/f16/bf16 storage, binary64 for f64 data or an f64 accumulation convention; scalar
// accesses with the dtype read per element (one instantiation per accumulation type).
//   group_norm_kernel: one block per group (n, g), grid-stride over the N G groups, the
//     two-pass scaled statistics and the output in the same block;
//   batch_norm_stats_kernel: one block per channel (grid-stride over C): the statistics
//     (or, in eval, 1 / D(running_var)) into a per-channel (s, mu, r) buffer, and the
//     running-stat update by thread 0;
//   batch_norm_apply_kernel: one thread per element (grid-stride), y from (s, mu, r).
// Numerics, accumulation order and error bound: family_body.hpp.
#include <cuda_runtime.h>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/family.hpp"
#include "kernels/cuda/row_norm.cuh"

namespace normcheck::kernels::cuda {

namespace detail {
namespace {

template <class A>
__global__ void __launch_bounds__(1024) group_norm_kernel(const GroupNormArgs a) {
  __shared__ A scratch[32];
  DeviceGroup<A, false> g{scratch, static_cast<int>(threadIdx.x)};
  for (std::int64_t gi = blockIdx.x; gi < a.groups_total; gi += gridDim.x) group_norm_group<A>(a, gi, g);
}

template <class A>
__global__ void __launch_bounds__(1024) batch_norm_stats_kernel(const BatchNormArgs a) {
  __shared__ A scratch[32];
  DeviceGroup<A, false> g{scratch, static_cast<int>(threadIdx.x)};
  for (std::int64_t ch = blockIdx.x; ch < a.c; ch += gridDim.x) batch_norm_channel<A>(a, ch, g);
}

template <class A>
__global__ void __launch_bounds__(kElementThreads) batch_norm_apply_kernel(const BatchNormArgs a) {
  const std::int64_t total = a.n * a.c * a.spatial;
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += step)
    batch_norm_element<A>(a, e);
}

void check_cfg(const FamilyLaunch& cfg, int max_threads) {
  if (cfg.threads < 32 || cfg.threads > max_threads || (cfg.threads & (cfg.threads - 1)) != 0 || cfg.grid > kMaxGrid)
    throw BackendError("cuda family kernel: malformed launch configuration");
}

template <class K, class Args>
void go(K* kernel, const FamilyLaunch& cfg, const Args& a) {
  kernel<<<static_cast<unsigned>(cfg.grid), static_cast<unsigned>(cfg.threads)>>>(a);
  NORMCHECK_CUDA_CHECK(cudaGetLastError());
}

}  // namespace
}  // namespace detail

void launch_group_norm(const detail::GroupNormArgs& a, const FamilyLaunch& cfg, DType acc) {
  if (cfg.grid <= 0) return;
  detail::check_cfg(cfg, 1024);
  if (acc == DType::f64) detail::go(detail::group_norm_kernel<double>, cfg, a);
  else detail::go(detail::group_norm_kernel<float>, cfg, a);
}

void launch_batch_norm_stats(const detail::BatchNormArgs& a, const FamilyLaunch& cfg, DType acc) {
  if (cfg.grid <= 0) return;
  detail::check_cfg(cfg, 1024);
  if (acc == DType::f64) detail::go(detail::batch_norm_stats_kernel<double>, cfg, a);
  else detail::go(detail::batch_norm_stats_kernel<float>, cfg, a);
}

void launch_batch_norm_apply(const detail::BatchNormArgs& a, const FamilyLaunch& cfg, DType acc) {
  if (cfg.grid <= 0) return;
  detail::check_cfg(cfg, kElementThreads);
  if (acc == DType::f64) detail::go(detail::batch_norm_apply_kernel<double>, cfg, a);
  else detail::go(detail::batch_norm_apply_kernel<float>, cfg, a);
}

}  // namespace normcheck::kernels::cuda
