// Host-side logic of the CUDA row kernels (layer_norm.cu, rms_norm.cu): the arguments of a
// launch, the affine parameters in the kernels' form, and the launch configuration (work
// split, threads, vector width, shared memory). Plain C++ with no CUDA header, so it builds
// and is unit-tested without nvcc (tests/cuda_launch_test.cpp); the kernels and their CPU
// emulation (emulate.hpp) read the result.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/dtype.hpp"
#include "spec/op.hpp"

namespace normcheck::kernels::cuda {

/// One row-kernel launch on device buffers, x viewed as [rows, d] row-major.
/// x: rows*d values of x_dtype; y: rows*d values of y_dtype (must not overlap x);
/// gamma, beta: d values of the accumulation dtype (f32, or f64 for the generic f64
/// kernel), the gain already in final form (1 + w formed for one_plus_w), null when the
/// affine convention does not use them. dof: the variance divisor (d, or d - 1 for the
/// unbiased estimator). eps, placement, affine: the convention (spec/op.hpp).
struct RowNormArgs {
  const void* x = nullptr;
  void* y = nullptr;
  const void* gamma = nullptr;
  const void* beta = nullptr;
  std::int64_t rows = 0;
  std::int64_t d = 0;
  std::int64_t dof = 0;
  double eps = 0;
  EpsPlacement placement = EpsPlacement::inside_sqrt;
  Affine affine = Affine::none;
  DType x_dtype = DType::f32;
  DType y_dtype = DType::f32;
};

/// Accumulation dtype of the CUDA kernels for a validated problem p: f64 when x is f64 or
/// the convention asks for f64, else f32 (the CPU kernels' rule).
DType accumulation_dtype(const Problem& p) noexcept;

/// The affine parameters of p as the kernels read them: d values of acc (f32 or f64) each,
/// converted once from their own dtype (RNE), gamma replaced by 1 + w (formed in acc, one
/// rounding) for one_plus_w, exactly as the CPU kernels' AffineParams. Empty when unused.
struct KernelParams {
  std::vector<unsigned char> gamma, beta;
};
KernelParams kernel_params(const Problem& p, DType acc);

/// RowNormArgs of a validated layer_norm/rms_norm problem with the given buffers (device
/// buffers for a launch, host buffers for the emulation); gamma/beta as kernel_params.
RowNormArgs row_norm_args(const Problem& p, const void* x, void* y, const void* gamma, const void* beta);

/// Work split of a row kernel: one warp (32 threads) per row, several rows per block, or
/// one block of up to 1024 threads per row.
enum class RowStrategy { warp_per_row, block_per_row };

/// Largest row length d handled by one warp per row (at most 32 values per lane).
inline constexpr std::int64_t kWarpMaxD = 1024;
/// Rows (warps) per block in the warp-per-row split: 128-thread blocks.
inline constexpr int kWarpRowsPerBlock = 4;
/// Threads per block of the block-per-row split: a power of two in [min, max], chosen so
/// that each thread holds about kChunksPerThread vector chunks of the row.
inline constexpr int kBlockMinThreads = 128;
inline constexpr int kBlockMaxThreads = 1024;
inline constexpr std::int64_t kChunksPerThread = 8;
/// Widest single access: 16 bytes (LDG.128 / STG.128).
inline constexpr int kVectorBytes = 16;
/// Largest grid (CUDA's gridDim.x limit); the kernels loop over rows beyond it.
inline constexpr std::int64_t kMaxGrid = 2147483647;
/// Shared memory every block may use without opting in (cudaFuncAttributeMaxDynamicSharedMemorySize).
inline constexpr std::size_t kDefaultSmemPerBlock = 48 * 1024;

/// Everything the launch choice depends on.
/// rows, d: the problem as [rows, d] (row-major, row r at element r*d).
/// x, y: storage dtypes of input and output; acc: accumulation dtype of the kernel (f32 or
/// f64, as resolved by the caller: f64 when x is f64 or the convention asks for it).
/// *_addr: device addresses of the buffers (alignment only; 0 = absent, for gamma/beta,
/// which are held in the accumulation dtype). max_smem_per_block: the device's opt-in
/// limit (cudaDevAttrMaxSharedMemoryPerBlockOptin), in bytes.
struct LaunchQuery {
  std::int64_t rows = 0;
  std::int64_t d = 0;
  DType x = DType::f32;
  DType y = DType::f32;
  DType acc = DType::f32;
  std::uintptr_t x_addr = 0, y_addr = 0, gamma_addr = 0, beta_addr = 0;
  std::size_t max_smem_per_block = kDefaultSmemPerBlock;
};

/// A launch of a row kernel.
/// generic: the runtime-dtype kernel (f64 storage or f64 accumulation), scalar accesses.
/// vec: elements per vector access of x and y (each access <= 16 bytes); the first
///      floor(d / vec) * vec values of a row go in chunks, the rest in a scalar tail.
/// threads: per block (multiple of 32, <= 1024); rows_per_block: 32-thread groups per block
///      in the warp split, 1 in the block split; grid: blocks (0: nothing to launch; rows
///      beyond grid * rows_per_block are taken by a grid-stride loop).
/// cached: each row is held in shared memory (as acc values) between the passes; else the
///      later passes re-read x from global memory (rows too long for shared memory).
/// smem_bytes: dynamic shared memory per block; static_smem_bytes: the reduction scratch.
struct LaunchConfig {
  RowStrategy strategy = RowStrategy::warp_per_row;
  bool generic = false;
  int vec = 1;
  int threads = 32;
  int rows_per_block = 1;
  std::int64_t grid = 0;
  bool cached = false;
  std::size_t smem_bytes = 0;
  std::size_t static_smem_bytes = 0;
};

/// Whether (x, y, acc) needs the runtime-dtype kernel: f64 accumulation, or an f64 input or
/// output (the specialized kernels cover f32/f16/bf16 in and out with f32 accumulation).
bool uses_generic_kernel(DType x, DType y, DType acc) noexcept;

/// Widest vector (elements) the kernels offer for (x, y, acc): 16 bytes of the wider of x
/// and y (4 for f32, 8 when both are 16-bit); 1 for the generic kernel.
int max_vector_width(DType x, DType y, DType acc) noexcept;

/// Vector width for q: the largest power of two w <= max_vector_width with w <= d such that
/// every row start of x and y is aligned to w elements (base addresses aligned, and d a
/// multiple of w unless there is a single row) and gamma/beta are aligned to
/// min(16, w * bytes(acc)) bytes. 1 (scalar) when nothing wider qualifies.
int vector_width(const LaunchQuery& q) noexcept;

/// The launch for q (see LaunchConfig): warp per row for d <= kWarpMaxD, block per row
/// above; rows cached in shared memory when they fit max_smem_per_block.
LaunchConfig choose_launch(const LaunchQuery& q) noexcept;

}  // namespace normcheck::kernels::cuda
