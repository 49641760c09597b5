// The CUDA row kernel shared by layer_norm.cu and rms_norm.cu (nvcc only): the device
// group (this thread's part of a pass, then a shuffle-butterfly reduction) around the
// per-row algorithm of row_norm_body.hpp, the grid-stride row loop, and the launcher.
// Numerics and accumulation order: row_norm_body.hpp. Launch choice: launch.hpp.
#pragma once

#include <cuda_runtime.h>

#include "kernels/cuda/check.hpp"
#include "kernels/cuda/row_norm.hpp"
#include "kernels/cuda/row_norm_body.hpp"

namespace normcheck::kernels::cuda::detail {

/// Butterfly over the 32 lanes of a warp: offsets 16, 8, 4, 2, 1, v = op(v, partner);
/// every lane ends with the same value.
template <class A, class Op>
__device__ __forceinline__ A warp_butterfly(A v, Op op) {
#pragma unroll
  for (int off = 16; off >= 1; off /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, off));
  return v;
}

struct SumOp {
  template <class A> __device__ __forceinline__ A operator()(A a, A b) const { return a + b; }
};
struct MaxOp {  // operands are never NaN (track_max turns NaN into +inf)
  template <class A> __device__ __forceinline__ A operator()(A a, A b) const { return b > a ? b : a; }
};

/// The threads working on one row: a warp (kWarp) or the whole block. Reductions return
/// the same value in every thread of the group; the identity 0 pads the partials of a
/// block with fewer than 32 warps (sums, and maxima of absolute values).
template <class A, bool kWarp>
struct DeviceGroup {
  A* scratch;  // 32 values of shared memory (block groups only)
  int t;       // this thread's index in the group

  __device__ __forceinline__ int size() const { return kWarp ? 32 : static_cast<int>(blockDim.x); }

  template <class Op>
  __device__ __forceinline__ A reduce(A v, Op op) const {
    v = warp_butterfly(v, op);
    if constexpr (!kWarp) {
      const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
      __syncthreads();  // the previous reduction's reads of scratch are done
      if (lane == 0) scratch[warp] = v;
      __syncthreads();
      v = warp_butterfly(lane < nwarps ? scratch[lane] : A(0), op);
    }
    return v;
  }
  template <class F> __device__ __forceinline__ A reduce_max(F&& f) const { return reduce(f(t), MaxOp{}); }
  template <class F> __device__ __forceinline__ A reduce_sum(F&& f) const { return reduce(f(t), SumOp{}); }
  template <class F> __device__ __forceinline__ void for_each(F&& f) const { f(t); }
};

/// One warp (kWarp: blockDim.x / 32 rows per block) or one block per row, rows taken in a
/// grid-stride loop. cached: the row lives in dynamic shared memory (d values of A per
/// group) between the passes. All branches on row data are uniform over the group.
template <bool kCenter, bool kWarp, class A, class Tin, class Tout, int W>
__global__ void __launch_bounds__(1024) row_norm_kernel(const RowNormArgs a, const bool cached) {
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ A scratch[32];
  const int group = kWarp ? static_cast<int>(threadIdx.x >> 5) : 0;
  const int groups = kWarp ? static_cast<int>(blockDim.x >> 5) : 1;
  DeviceGroup<A, kWarp> g{scratch, kWarp ? static_cast<int>(threadIdx.x & 31) : static_cast<int>(threadIdx.x)};
  A* cache = cached ? reinterpret_cast<A*>(smem) + static_cast<std::int64_t>(group) * a.d : nullptr;
  const std::int64_t bx = elem_bytes<Tin>(a.x_dtype), by = elem_bytes<Tout>(a.y_dtype);
  const RowConvention conv{a.dof, a.eps, a.placement};
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * groups;
  for (std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * groups + group; row < a.rows; row += step) {
    const RowPasses<A, Tin, Tout, W> p{static_cast<const unsigned char*>(a.x) + row * a.d * bx,
                                       static_cast<unsigned char*>(a.y) + row * a.d * by,
                                       cache,
                                       static_cast<const A*>(a.gamma),
                                       static_cast<const A*>(a.beta),
                                       a.affine,
                                       a.x_dtype,
                                       a.y_dtype,
                                       a.d};
    normalize_row<kCenter>(p, conv, g);
  }
}

/// The f.run<A, Tin, Tout, W>() of dispatch(): launches the matching instantiation.
template <bool kCenter>
struct Launcher {
  const RowNormArgs& a;
  const LaunchConfig& cfg;
  cudaStream_t stream;

  template <class A, class Tin, class Tout, int W>
  void run() const {
    if (cfg.strategy == RowStrategy::warp_per_row) go(row_norm_kernel<kCenter, true, A, Tin, Tout, W>);
    else go(row_norm_kernel<kCenter, false, A, Tin, Tout, W>);
  }

  template <class K>
  void go(K* kernel) const {
    if (cfg.smem_bytes > kDefaultSmemPerBlock)
      NORMCHECK_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                static_cast<int>(cfg.smem_bytes)));
    kernel<<<static_cast<unsigned>(cfg.grid), static_cast<unsigned>(cfg.threads), cfg.smem_bytes, stream>>>(a, cfg.cached);
    NORMCHECK_CUDA_CHECK(cudaGetLastError());
  }
};

/// Checks the launch against the problem, then launches (the body of launch_layer_norm
/// and launch_rms_norm).
template <bool kCenter>
void launch_row_norm(const RowNormArgs& a, const LaunchConfig& cfg, DType acc, void* stream) {
  if (cfg.grid <= 0 || a.rows <= 0 || a.d <= 0) return;
  const bool warp = cfg.strategy == RowStrategy::warp_per_row;
  if (cfg.threads < 32 || cfg.threads > 1024 || cfg.threads % 32 != 0 ||
      (warp ? cfg.threads != 32 * cfg.rows_per_block : cfg.rows_per_block != 1))
    throw BackendError("cuda row kernel: malformed launch configuration");
  try {
    dispatch(a.x_dtype, a.y_dtype, acc, cfg, Launcher<kCenter>{a, cfg, static_cast<cudaStream_t>(stream)});
  } catch (const std::logic_error& e) {
    throw BackendError(e.what());
  }
}

}  // namespace normcheck::kernels::cuda::detail
