// The fast binary32 forward row kernel of layer_norm and rms_norm (cpu_rows_fast.cpp).
#pragma once

#include <cstdint>

#include "core/tensor.hpp"
#include "spec/op.hpp"

namespace normcheck::kernels::cpu::detail {

/// One call's row problem: x and y dense [rows, m] (row_layout), gamma/beta converted to
/// binary32 ([m]; null when the affine has none), the saved statistics ([rows]) or null.
struct FastRows {
  const Tensor* x = nullptr;
  Tensor* y = nullptr;
  std::int64_t m = 0, dof = 0;
  bool center = true;
  int max_up = 100;
  const Convention* conv = nullptr;
  const float* gamma = nullptr;
  const float* beta = nullptr;
  Tensor* mean = nullptr;
  Tensor* rstd = nullptr;
};

/// Runs normalize_rows' numerics (row_kernel.hpp) for x and y in f32/bf16/f16 with binary32
/// accumulation and no normalized_dtype, in wide_sum's accumulation order (cpu_rows_fast.cpp);
/// returns false (and writes nothing) for any other problem, which normalize_rows then runs.
/// mean, rstd: as normalize_rows.
bool normalize_rows_fast(const Problem& p, Tensor& y, bool center, Tensor* mean, Tensor* rstd);

}  // namespace normcheck::kernels::cpu::detail
