// The fast binary32 forward row kernel of layer_norm and rms_norm (cpu_rows_fast.cpp).
#pragma once

#include <cstdint>
#include <string>

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
  /// y's stores through a block buffer (binary32 values in, y's dtype out, n values); the
  /// put_*_stream ones (nontemporal) or ordinary ones.
  void (*put_f32)(const float*, float*, std::int64_t) = nullptr;
  void (*put_u16)(const float*, std::uint16_t*, std::int64_t) = nullptr;
  bool nontemporal = false;
};

/// How pass 4 stores y: automatic (streaming stores for a y beyond the caches, else
/// ordinary ones; bf16 through a block buffer where the CPU converts with AVX512-BF16),
/// ordinary (f16 still through a block buffer and F16C; bf16 by the integer formula),
/// buffered (every dtype through a block buffer, with streaming stores where the CPU has
/// them). Same bits on every path.
enum class RowStore { automatic, ordinary, buffered };

/// Whether normalize_rows_fast takes p (by its dtypes and convention): x and out_dtype
/// f32/bf16/f16, binary32 accumulation, no normalized_dtype.
bool fast_rows_take(const Problem& p);

/// Runs normalize_rows' numerics (row_kernel.hpp) for x and y in f32/bf16/f16 with binary32
/// accumulation and no normalized_dtype, in wide_sum's accumulation order (cpu_rows_fast.cpp);
/// returns false (and writes nothing) for any other problem, which normalize_rows then runs.
/// mean, rstd: as normalize_rows.
bool normalize_rows_fast(const Problem& p, Tensor& y, bool center, Tensor* mean, Tensor* rstd,
                         RowStore store = RowStore::automatic);

/// Pass 4's block store on its own (tests): the binary32 values s[0..n) into y's elements
/// [first, first + n), rounded once to y's dtype (f32/bf16/f16), with the streaming stores
/// where `nontemporal` and the CPU has them, else the ordinary ones. Throws
/// std::invalid_argument for another dtype or a range outside y.
void put_block(const float* s, Tensor& y, std::int64_t first, std::int64_t n, bool nontemporal);

/// Whether this CPU has the streaming stores (AVX-512 BW and F16C; NORMCHECK_NO_STREAM_STORES unset).
bool stream_stores_available();

/// Whether bf16 y is converted by AVX512-BF16's VCVTNE2PS2BF16 (the CPU has AVX512-BF16, -DQ,
/// -BW; NORMCHECK_NO_BF16_CVT unset), else by the integer formula.
bool bf16_conversion_instruction_available();

/// The instruction-set tier the row kernel runs at: "x86-64-v4" (AVX-512), "x86-64-v3" (AVX2,
/// FMA, F16C) or "x86-64" (baseline SSE2, and every x86-64 build without run-time dispatch:
/// clang, -DNORMCHECK_NO_CPU_DISPATCH); "portable" on other architectures. The CPU's best, or the lower tier that
/// the environment variable NORMCHECK_CPU_TIER names (which also turns off every choice
/// above that tier: streaming stores, AVX512-BF16, F16C's wider forms). Decided once per
/// process. Throws std::invalid_argument for another name in NORMCHECK_CPU_TIER and
/// std::runtime_error for a tier above this CPU's and build's (as normalize_rows_fast does).
const char* cpu_tier_name();

/// How the kernel converts binary16: "F16C (AVX-512)", "F16C (AVX)" or "software".
const char* half_conversion_name();

/// Every instruction-set choice the row kernel made in this process, in one line for reports:
/// "x86-64-v4, f16 by F16C (AVX-512), bf16 by AVX512-BF16, streaming stores available" (the
/// tier, half_conversion_name(), bf16 by "AVX512-BF16" or "integer formula", streaming stores
/// "available" or "off"). Throws as cpu_tier_name() does.
std::string cpu_row_kernel_summary();

}  // namespace normcheck::kernels::cpu::detail
