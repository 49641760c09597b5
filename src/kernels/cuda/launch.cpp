#include "kernels/cuda/launch.hpp"
#include "spec/layout.hpp"

#include <algorithm>
#include <cstring>

namespace normcheck::kernels::cuda {

namespace {

bool fast_storage(DType t) noexcept { return t == DType::f32 || t == DType::f16 || t == DType::bf16; }

std::int64_t ceil_div(std::int64_t a, std::int64_t b) noexcept { return (a + b - 1) / b; }

int pow2_at_least(std::int64_t v) noexcept {
  int p = 1;
  while (p < v && p < (1 << 30)) p *= 2;
  return p;
}

}  // namespace

DType accumulation_dtype(const Problem& p) noexcept {
  return p.x().dtype() == DType::f64 || p.conv.acc_dtype == DType::f64 ? DType::f64 : DType::f32;
}

KernelParams kernel_params(const Problem& p, DType acc) {
  KernelParams k;
  auto load = [&](const Tensor* t, std::vector<unsigned char>& out, bool one_plus) {
    if (!t) return;
    const std::int64_t n = t->size();
    out.resize(static_cast<std::size_t>(n) * format_info(acc).bytes);
    for (std::int64_t i = 0; i < n; ++i) {
      if (acc == DType::f64) {
        double v = t->get(i);
        if (one_plus) v = 1.0 + v;
        std::memcpy(out.data() + 8 * i, &v, 8);
      } else {
        float v = static_cast<float>(t->get(i));  // exact for f32/f16/bf16, RNE from f64
        if (one_plus) v = 1.0f + v;
        std::memcpy(out.data() + 4 * i, &v, 4);
      }
    }
  };
  if (p.conv.affine != Affine::none) load(p.input("gamma"), k.gamma, p.conv.affine == Affine::one_plus_w);
  if (p.conv.affine == Affine::gamma_beta) load(p.input("beta"), k.beta, false);
  return k;
}

RowNormArgs row_norm_args(const Problem& p, const void* x, void* y, const void* gamma, const void* beta) {
  const RowLayout l = row_layout(p);
  RowNormArgs a;
  a.x = x;
  a.y = y;
  a.gamma = p.conv.affine != Affine::none ? gamma : nullptr;
  a.beta = p.conv.affine == Affine::gamma_beta ? beta : nullptr;
  a.rows = l.rows;
  a.d = l.m;
  a.dof = p.conv.variance == Variance::unbiased ? l.m - 1 : l.m;
  a.eps = p.conv.eps;
  a.placement = p.conv.eps_placement;
  a.affine = p.conv.affine;
  a.x_dtype = p.x().dtype();
  a.y_dtype = p.out_dtype;
  return a;
}

bool uses_generic_kernel(DType x, DType y, DType acc) noexcept {
  return acc != DType::f32 || !fast_storage(x) || !fast_storage(y);
}

int max_vector_width(DType x, DType y, DType acc) noexcept {
  if (uses_generic_kernel(x, y, acc)) return 1;
  const auto widest = std::max(format_info(x).bytes, format_info(y).bytes);
  return static_cast<int>(kVectorBytes / widest);
}

int vector_width(const LaunchQuery& q) noexcept {
  const std::size_t bx = format_info(q.x).bytes, by = format_info(q.y).bytes, ba = format_info(q.acc).bytes;
  for (int w = max_vector_width(q.x, q.y, q.acc); w > 1; w /= 2) {
    if (w > q.d) continue;
    if (q.rows > 1 && q.d % w != 0) continue;  // row r starts at r*d: misaligned for some r
    if (q.x_addr % (w * bx) != 0 || q.y_addr % (w * by) != 0) continue;
    const std::size_t pa = std::min<std::size_t>(kVectorBytes, w * ba);
    if (q.gamma_addr % pa != 0 || q.beta_addr % pa != 0) continue;
    return w;
  }
  return 1;
}

LaunchConfig choose_launch(const LaunchQuery& q) noexcept {
  LaunchConfig c;
  c.generic = uses_generic_kernel(q.x, q.y, q.acc);
  c.vec = vector_width(q);
  const std::size_t ba = format_info(q.acc).bytes;
  c.static_smem_bytes = 32 * ba;  // one partial per warp for block reductions
  if (q.d <= kWarpMaxD) {
    c.strategy = RowStrategy::warp_per_row;
    c.rows_per_block = kWarpRowsPerBlock;
    c.threads = 32 * kWarpRowsPerBlock;
    // 4 rows of at most 1024 values of <= 8 bytes: 32 KiB, always within the default limit.
    c.smem_bytes = static_cast<std::size_t>(kWarpRowsPerBlock) * static_cast<std::size_t>(std::max<std::int64_t>(q.d, 0)) * ba;
    c.cached = true;
  } else {
    c.strategy = RowStrategy::block_per_row;
    c.rows_per_block = 1;
    const std::int64_t chunks = ceil_div(q.d, c.vec);
    c.threads = std::clamp(pow2_at_least(ceil_div(chunks, kChunksPerThread)), kBlockMinThreads, kBlockMaxThreads);
    const std::size_t row_bytes = static_cast<std::size_t>(q.d) * ba;
    c.cached = row_bytes + c.static_smem_bytes <= q.max_smem_per_block;
    c.smem_bytes = c.cached ? row_bytes : 0;
  }
  if (q.rows <= 0 || q.d <= 0) {
    c.grid = 0;
    return c;
  }
  c.grid = std::min(ceil_div(q.rows, c.rows_per_block), kMaxGrid);
  return c;
}

}  // namespace normcheck::kernels::cuda
