// The CUDA row kernels' algorithm, run on the CPU through their emulation
// (src/kernels/cuda/emulate.hpp: the same per-row code and reduction tree as the device),
// judged against the exact reference by the default gate. With a CUDA device present, the
// device's output must equal the emulation bit for bit (NaN payloads aside).
// Built with -ffp-contract=off (tests/CMakeLists.txt), as the kernels are with --fmad=false.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "checks/budget.hpp"
#include "checks/metrics.hpp"
#include "kernels/cuda/emulate.hpp"
#include "kernels/cuda/launch.hpp"
#include "ops/reference.hpp"
#ifdef NORMCHECK_HAVE_CUDA
#include "kernels/cuda/row_norm.hpp"
#endif

using namespace normcheck;
namespace kc = normcheck::kernels::cuda;

namespace {

constexpr std::size_t kH200Smem = 232448;

/// What an emulated launch used, for the tests to assert coverage.
struct Emulated {
  Tensor y;
  kc::LaunchConfig cfg;
};

/// Options of an emulated launch: shared-memory limit, byte offsets of x and y from a
/// 256-byte boundary (misalignment), and a grid cap (to exercise the grid-stride loop).
struct EmuOptions {
  std::size_t smem = kH200Smem;
  std::size_t x_offset = 0, y_offset = 0;
  std::int64_t max_grid = 0;  // 0: as chosen
};

/// A 256-byte aligned host buffer of n bytes starting `offset` bytes past the boundary.
struct HostBuffer {
  std::vector<unsigned char> raw;
  unsigned char* p = nullptr;
  HostBuffer(std::size_t n, std::size_t offset) : raw(n + offset + 256) {
    auto a = reinterpret_cast<std::uintptr_t>(raw.data());
    p = raw.data() + ((256 - a % 256) % 256) + offset;
  }
};

Emulated emulate(const Problem& p, const EmuOptions& o = {}) {
  const DType acc = kc::accumulation_dtype(p);
  const kc::KernelParams kp = kc::kernel_params(p, acc);
  const Tensor& x = p.x();
  Tensor y(p.out_dtype, x.shape());
  HostBuffer hx(x.nbytes(), o.x_offset), hy(y.nbytes(), o.y_offset);
  std::memcpy(hx.p, x.data(), x.nbytes());
  std::memset(hy.p, 0xff, y.nbytes());  // poison, as the device buffer
  const kc::RowNormArgs a = kc::row_norm_args(p, hx.p, hy.p, kp.gamma.data(), kp.beta.data());
  kc::LaunchQuery q;
  q.rows = a.rows;
  q.d = a.d;
  q.x = a.x_dtype;
  q.y = a.y_dtype;
  q.acc = acc;
  q.x_addr = reinterpret_cast<std::uintptr_t>(a.x);
  q.y_addr = reinterpret_cast<std::uintptr_t>(a.y);
  q.gamma_addr = reinterpret_cast<std::uintptr_t>(a.gamma);
  q.beta_addr = reinterpret_cast<std::uintptr_t>(a.beta);
  q.max_smem_per_block = o.smem;
  kc::LaunchConfig cfg = kc::choose_launch(q);
  if (o.max_grid > 0 && cfg.grid > o.max_grid) cfg.grid = o.max_grid;
  kc::emulation::emulate_row_norm(p.op == Op::layer_norm, a, cfg, acc);
  std::memcpy(y.data(), hy.p, y.nbytes());
  return {std::move(y), cfg};
}

enum class Fill { normal, shifted, tiny_var, huge, subnormal, constant, zeros };

Problem make(Op op, DType xt, DType yt, std::int64_t rows, std::int64_t d, Fill f = Fill::normal,
             Affine affine = Affine::none, unsigned seed = 1) {
  Problem p;
  p.op = op;
  p.out_dtype = yt;
  p.conv.normalized_shape = {d};
  p.conv.affine = affine;
  p.conv.acc_dtype = xt == DType::f64 ? DType::f64 : DType::f32;
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> n01;
  std::vector<double> v(static_cast<std::size_t>(rows * d));
  for (auto& e : v) {
    switch (f) {
      case Fill::normal: e = n01(rng); break;
      case Fill::shifted: e = 1e4 + n01(rng); break;   // mean >> std: cancellation in x - mu
      case Fill::tiny_var: e = 1.0 + 1e-3 * n01(rng); break;
      case Fill::huge: e = 1e37 * n01(rng); break;      // squares overflow binary32
      case Fill::subnormal: e = 1e-41 * n01(rng); break; // squares underflow binary32
      case Fill::constant: e = 5.0; break;
      case Fill::zeros: e = 0.0; break;
    }
  }
  p.inputs["x"] = Tensor::from_doubles(xt, {rows, d}, v);
  if (affine != Affine::none) {
    std::vector<double> g(static_cast<std::size_t>(d)), b(static_cast<std::size_t>(d));
    for (std::int64_t j = 0; j < d; ++j) {
      g[j] = (affine == Affine::one_plus_w ? 0.0 : 1.0) + 0.0625 * static_cast<double>(j % 7) - 0.125;
      b[j] = 0.01 * static_cast<double>(j % 5) - 0.02;
    }
    p.inputs["gamma"] = Tensor::from_doubles(xt == DType::f64 ? DType::f64 : DType::bf16, {d}, g);
    if (affine == Affine::gamma_beta) p.inputs["beta"] = Tensor::from_doubles(DType::f32, {d}, b);
  }
  validate(p);
  return p;
}

std::string describe(const Problem& p, const kc::LaunchConfig& c) {
  return std::string(to_string(p.op)) + " x=" + std::string(dtype_name(p.x().dtype())) + " y=" +
         std::string(dtype_name(p.out_dtype)) + " shape=" + shape_str(p.x().shape()) + " eps=" + std::to_string(p.conv.eps) +
         " " + std::string(to_string(p.conv.eps_placement)) + " " + std::string(to_string(p.conv.variance)) + " " +
         std::string(to_string(p.conv.affine)) + " | " + (c.strategy == kc::RowStrategy::warp_per_row ? "warp" : "block") +
         " threads=" + std::to_string(c.threads) + " vec=" + std::to_string(c.vec) + (c.cached ? " cached" : " uncached") +
         (c.generic ? " generic" : "");
}

/// The emulated kernel passes the default gate against the exact reference (NaN where and
/// only where the reference is NaN: an unwritten, poisoned element fails).
kc::LaunchConfig check_gate(const Problem& p, const EmuOptions& o = {}) {
  const Emulated e = emulate(p, o);
  const auto ref = reference::evaluate_exact(p);
  const MetricSet ms = measure(e.y, ref.at("y"), p.out_dtype, p.conv.acc_dtype);
  const Gate g = default_gate(p);
  INFO(describe(p, e.cfg));
  INFO("stab = " << ms.stab.value << " (gate " << g.max << ") at flat index " << ms.stab.index << " got " << ms.stab.got
                 << " exact " << static_cast<double>(ms.stab.exact) << "; NaN mismatches " << ms.nan_mismatches);
  CHECK(ms.nan_mismatches == 0);
  CHECK(ms.stab.value <= g.max);
  return e.cfg;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.size() != b.size() || a.dtype() != b.dtype()) return false;
  for (std::int64_t i = 0; i < a.size(); ++i) {
    const double u = a.get(i), v = b.get(i);
    if (std::isnan(u) && std::isnan(v)) continue;
    if (std::memcmp(&u, &v, sizeof u) != 0) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("cuda kernels (emulated): within the default gate for every dtype pair and split", "[cuda][emulation]") {
  const std::pair<DType, DType> pairs[] = {{DType::f32, DType::f32}, {DType::bf16, DType::bf16}, {DType::f16, DType::f16},
                                           {DType::bf16, DType::f32}, {DType::f32, DType::bf16}, {DType::f16, DType::bf16},
                                           {DType::f64, DType::f64},  {DType::f16, DType::f64}};
  bool warp = false, block = false;
  for (Op op : {Op::layer_norm, Op::rms_norm})
    for (auto [xt, yt] : pairs)
      for (std::int64_t d : {1, 3, 17, 768, 1024, 1025, 4096, 4097})
        for (std::int64_t rows : {1, 3}) {
          const auto c = check_gate(make(op, xt, yt, rows, d, Fill::normal, Affine::gamma_beta, static_cast<unsigned>(d + rows)));
          warp = warp || c.strategy == kc::RowStrategy::warp_per_row;
          block = block || c.strategy == kc::RowStrategy::block_per_row;
        }
  CHECK(warp);
  CHECK(block);
}

TEST_CASE("cuda kernels (emulated): every vector width, with and without a scalar tail", "[cuda][emulation]") {
  std::set<int> widths;
  // rows = 1 allows vectors with a tail; rows > 1 needs d to be a multiple of the width.
  for (auto [xt, yt] : {std::pair{DType::bf16, DType::bf16}, std::pair{DType::f32, DType::f32}})
    for (std::int64_t d : {5, 8, 12, 30, 64, 100, 771, 2050, 4100, 4104})
      for (std::int64_t rows : {1, 2}) {
        const auto c = check_gate(make(Op::layer_norm, xt, yt, rows, d, Fill::shifted, Affine::gamma, 7));
        widths.insert(c.vec);
      }
  CHECK(widths == std::set<int>{1, 2, 4, 8});
}

TEST_CASE("cuda kernels (emulated): misaligned x and y take narrower vectors, same gate", "[cuda][emulation]") {
  const Problem p = make(Op::rms_norm, DType::bf16, DType::bf16, 4, 4096, Fill::normal, Affine::gamma);
  std::set<int> widths;
  for (std::size_t off : {0, 2, 4, 8, 14}) {
    EmuOptions o;
    o.x_offset = off;
    o.y_offset = off == 4 ? 8 : 0;
    widths.insert(check_gate(p, o).vec);
  }
  CHECK(widths == std::set<int>{1, 2, 4, 8});
}

TEST_CASE("cuda kernels (emulated): every eps placement, variance and affine convention", "[cuda][emulation]") {
  for (Op op : {Op::layer_norm, Op::rms_norm})
    for (EpsPlacement pl : {EpsPlacement::inside_sqrt, EpsPlacement::outside_sqrt, EpsPlacement::clamp_var, EpsPlacement::clamp_norm})
      for (Variance var : {Variance::biased, Variance::unbiased})
        for (Affine af : {Affine::none, Affine::gamma, Affine::gamma_beta, Affine::one_plus_w})
          for (std::int64_t d : {17, 1500})
            for (double eps : {1e-5, 0.5}) {
              Problem p = make(op, DType::f32, DType::f32, 2, d, Fill::tiny_var, af, 3);
              p.conv.eps_placement = pl;
              p.conv.variance = var;
              p.conv.eps = eps;  // 0.5: eps dominates tiny variances, every placement differs
              check_gate(p);
            }
}

TEST_CASE("cuda kernels (emulated): rows far from 1 in magnitude", "[cuda][emulation][range]") {
  for (Op op : {Op::layer_norm, Op::rms_norm})
    for (Fill f : {Fill::shifted, Fill::tiny_var, Fill::huge, Fill::subnormal})
      for (std::int64_t d : {768, 4097}) {
        Problem p = make(op, DType::f32, DType::f32, 3, d, f, Affine::gamma_beta, 11);
        p.conv.eps = 0;  // eps would swamp the subnormal rows' variance
        check_gate(p);
        Problem q = make(op, DType::f32, DType::bf16, 3, d, f, Affine::none, 12);
        q.conv.eps = 0;
        check_gate(q);
      }
}

TEST_CASE("cuda kernels (emulated): NaN/inf rows give NaN rows, constant rows zeros or NaN", "[cuda][emulation][degenerate]") {
  for (Op op : {Op::layer_norm, Op::rms_norm})
    for (std::int64_t d : {3, 768, 4097})
      for (DType t : {DType::f32, DType::bf16, DType::f64}) {
        Problem p = make(op, t, t, 4, d, Fill::normal, Affine::gamma_beta, 5);
        Tensor& x = p.inputs["x"];
        x.set(0 * d + d / 2, std::nan(""));
        x.set(1 * d + d - 1, HUGE_VAL);
        x.set(2 * d, -HUGE_VAL);
        const Emulated e = emulate(p);
        for (std::int64_t j = 0; j < d; ++j) {
          CHECK(std::isnan(e.y.get(0 * d + j)));
          CHECK(std::isnan(e.y.get(1 * d + j)));
          CHECK(std::isnan(e.y.get(2 * d + j)));
          CHECK(std::isfinite(e.y.get(3 * d + j)));
        }
        check_gate(p);
      }
  // A single row: vector chunks and a scalar tail; the non-finite value in the tail.
  for (Op op : {Op::layer_norm, Op::rms_norm})
    for (std::int64_t d : {3, 17, 4097})
      for (DType t : {DType::f32, DType::bf16}) {
        Problem p = make(op, t, t, 1, d, Fill::normal, Affine::none, 6);
        p.inputs["x"].set(d - 1, HUGE_VAL);
        const Emulated e = emulate(p);
        REQUIRE(e.cfg.vec > 1);
        REQUIRE(d % e.cfg.vec != 0);
        for (std::int64_t j = 0; j < d; ++j) CHECK(std::isnan(e.y.get(j)));
      }
  for (Op op : {Op::layer_norm, Op::rms_norm})
    for (std::int64_t d : {1, 3, 768, 4097}) {
      // layer_norm of a constant row, eps > 0: zeros (no NaN); eps = 0: 0/0, NaN (the reference's value).
      Problem p = make(op, DType::f32, DType::f32, 2, d, op == Op::layer_norm ? Fill::constant : Fill::zeros);
      p.conv.eps = 1e-5;
      const Emulated e = emulate(p);
      for (std::int64_t i = 0; i < e.y.size(); ++i) CHECK(e.y.get(i) == 0.0);
      check_gate(p);
      p.conv.eps = 0;
      const Emulated z = emulate(p);
      for (std::int64_t i = 0; i < z.y.size(); ++i) CHECK(std::isnan(z.y.get(i)));
      check_gate(p);
    }
}

TEST_CASE("cuda kernels (emulated): rows too long for shared memory are re-read, same bits", "[cuda][emulation]") {
  for (Op op : {Op::layer_norm, Op::rms_norm}) {
    const Problem p = make(op, DType::f32, DType::f32, 2, 16384, Fill::shifted, Affine::gamma_beta, 9);
    EmuOptions small;
    small.smem = kc::kDefaultSmemPerBlock;
    const Emulated cached = emulate(p), uncached = emulate(p, small);
    REQUIRE(cached.cfg.cached);
    REQUIRE_FALSE(uncached.cfg.cached);
    CHECK(same_bits(cached.y, uncached.y));  // same order: only the source of the values differs
    check_gate(p, small);
  }
  // d = 65536: 256 KiB of f32 per row, beyond any block's shared memory.
  for (DType t : {DType::f32, DType::bf16}) {
    const auto c = check_gate(make(Op::layer_norm, t, t, 2, 65536, Fill::normal, Affine::gamma_beta, 4));
    CHECK_FALSE(c.cached);
    CHECK(c.threads == 1024);
  }
}

TEST_CASE("cuda kernels (emulated): a capped grid strides over the rows, same bits", "[cuda][emulation]") {
  for (std::int64_t d : {17, 2048}) {
    const Problem p = make(Op::layer_norm, DType::bf16, DType::bf16, 37, d, Fill::normal, Affine::gamma_beta, 2);
    EmuOptions one;
    one.max_grid = 1;
    EmuOptions three;
    three.max_grid = 3;
    const Emulated full = emulate(p), g1 = emulate(p, one), g3 = emulate(p, three);
    REQUIRE(full.cfg.grid > 3);
    CHECK(same_bits(full.y, g1.y));
    CHECK(same_bits(full.y, g3.y));
    check_gate(p, three);
  }
}

#ifdef NORMCHECK_HAVE_CUDA
TEST_CASE("cuda kernels: the device matches the emulation bit for bit", "[cuda][device]") {
  if (auto why = kc::device_unavailable()) {
    WARN("no device, not checked: " << *why);
    return;
  }
  const std::size_t smem = kc::max_smem_per_block();
  for (Op op : {Op::layer_norm, Op::rms_norm})
    for (auto [xt, yt] : {std::pair{DType::f32, DType::f32}, std::pair{DType::bf16, DType::bf16}, std::pair{DType::f16, DType::f32},
                          std::pair{DType::f64, DType::f64}})
      for (std::int64_t d : {1, 3, 17, 768, 4096, 4097, 16384, 65536})
        for (Fill f : {Fill::normal, Fill::shifted, Fill::huge}) {
          const Problem p = make(op, xt, yt, d > 4097 ? 3 : 33, d, f, Affine::gamma_beta, 21);
          Outputs dev;
          if (op == Op::layer_norm) kc::layer_norm_forward(p, dev);
          else kc::rms_norm_forward(p, dev);
          EmuOptions o;
          o.smem = smem;
          const Emulated e = emulate(p, o);
          INFO(describe(p, e.cfg));
          CHECK(same_bits(dev.at("y"), e.y));
        }
}
#endif
