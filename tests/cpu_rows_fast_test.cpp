// The fast binary32 row kernel (ops/common/cpu_rows_fast.cpp) against a scalar model of the
// order its header documents, bit for bit: the kernel runs the tier this machine's CPU picks
// (AVX-512, AVX2 or baseline; NORMCHECK_CPU_TIER lowers it), this file is built for baseline x86-64, both with
// -ffp-contract=off, so equality says the vector width changes nothing. Also: 1 and 2 threads
// give the same bits, and the kernel is the one layer_norm/rms_norm take for f32/bf16/f16.
#include <catch2/catch.hpp>

#include <omp.h>

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>
#if defined(__x86_64__)
#include <xmmintrin.h>  // _mm_getcsr / _mm_setcsr (the DAZ test)
#endif

#include "ops/common/cpu_kernels.hpp"
#include "ops/common/cpu_rows_fast.hpp"
#include "ops/common/row_kernel.hpp"
#include "spec/op.hpp"

using namespace normcheck;

namespace {

namespace d = kernels::cpu::detail;

/// wide_sum's documented order, one value at a time: blocks of 256, 32 lanes of j = l mod 32
/// (the tail's values to lanes 0, 1, ... once more), lanes pairwise 16, 8, 4, 2, 1, then the
/// block sums pairwise by levels (adjacent pairs, an odd last one carried up).
template <class G>
float model_sum(std::int64_t m, G g) {
  std::vector<float> blocks;
  for (std::int64_t first = 0; first < m; first += 256) {
    const std::int64_t n = std::min<std::int64_t>(256, m - first);
    float acc[32] = {};
    std::int64_t j = 0;
    for (; j + 32 <= n; j += 32)
      for (int l = 0; l < 32; ++l) acc[l] += g(first + j + l);
    for (int l = 0; j + l < n; ++l) acc[l] += g(first + j + l);
    for (int w = 16; w >= 2; w /= 2)
      for (int l = 0; l < w; ++l) acc[l] += acc[l + w];
    blocks.push_back(acc[0] + acc[1]);
  }
  if (blocks.empty()) return 0.0f;
  std::int64_t n = static_cast<std::int64_t>(blocks.size());
  while (n > 1) {
    const std::int64_t h = n / 2;
    for (std::int64_t i = 0; i < h; ++i) blocks[i] = blocks[2 * i] + blocks[2 * i + 1];
    if (n % 2) blocks[h] = blocks[n - 1];
    n = h + n % 2;
  }
  return blocks[0];
}

struct ModelOut {
  std::vector<double> y;  // rounded to y's dtype
  double mean = 0, rstd = 0;
};

/// One row by the documented passes (cpu_rows_fast.cpp's header), y rounded once to `out`.
ModelOut model_row(const std::vector<float>& x, bool center, const Convention& c, const std::vector<float>& g,
                   const std::vector<float>& b, DType out, std::int64_t dof) {
  const auto m = static_cast<std::int64_t>(x.size());
  ModelOut o;
  float am = 0, lo = INFINITY, hi = -INFINITY;
  bool bad = false;
  for (float v : x) {
    bad = bad || !(std::fabs(v) <= std::numeric_limits<float>::max());
    am = std::max(am, std::fabs(v));
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (bad) {
    o.y.assign(x.size(), NAN);
    o.mean = o.rstd = NAN;
    return o;
  }
  const double s = d::row_scale(am, d::max_scale_up(100, c.eps));
  const auto sa = static_cast<float>(s);
  float mu = 0;
  if (center) mu = lo == hi ? x[0] * sa : model_sum(m, [&](std::int64_t k) { return x[k] * sa; }) / static_cast<float>(m);
  const float ss = model_sum(m, [&](std::int64_t k) {
    const float dv = x[k] * sa - mu;
    return dv * dv;
  });
  const double inv = d::inv_scaled_denominator(static_cast<double>(ss) / static_cast<double>(dof), s, ss == 0, c);
  const auto ri = d::acc_inverse<float>(inv, ss == 0);
  for (std::int64_t k = 0; k < m; ++k) {
    float n = (x[k] * sa - mu) * ri;
    if (!g.empty()) n = g[k] * n;
    if (!b.empty()) n = n + b[k];
    o.y.push_back(round_to(out, static_cast<double>(n)));
  }
  o.mean = static_cast<double>(mu) / s;
  o.rstd = ss == 0 && c.eps > 0 ? 1.0 / d::inv_denominator_zero(c) : static_cast<double>(ri) * s;
  return o;
}

Problem make(Op op, DType xt, DType yt, std::int64_t rows, std::int64_t m, Affine affine, int fill, unsigned seed,
             EpsPlacement placement = EpsPlacement::inside_sqrt) {
  Problem p;
  p.op = op;
  p.out_dtype = yt;
  p.conv.normalized_shape = {m};
  p.conv.affine = affine;
  p.conv.eps = fill == 6 ? 0.0 : 1e-5;  // 6: the variance alone decides the denominator
  p.conv.eps_placement = placement;
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> n01;
  std::vector<double> v(static_cast<std::size_t>(rows * m));
  // 6: |x| ~ 2^-66 (squares below binary32's normal range unscaled, normal once scaled: rms_norm
  // may not take its sum of squares from the scan's unscaled one) and row 1 up to 2^60 with
  // values down to 2^-60 (normal squares unscaled, underflowing ones scaled).
  for (auto& e : v) e = fill == 0 ? n01(rng) : fill == 1 ? 100.0 + n01(rng) : fill == 2 ? 3.0 : fill == 6 ? 0x1p-66 * n01(rng) : 1e-6 * n01(rng);
  if (fill == 6 && rows > 1)
    for (std::int64_t j = 0; j < m; ++j) v[static_cast<std::size_t>(m + j)] = std::ldexp(n01(rng), j % 2 ? 60 : -60);
  // 6 also: every fourth row from row 3 of ordinary values, so that rms_norm's rows in lanes
  // hold rows whose sum of squares comes from the scan beside rows whose does not.
  for (std::int64_t r = 3; fill == 6 && r < rows; r += 4)
    for (std::int64_t j = 0; j < m; ++j) v[static_cast<std::size_t>(r * m + j)] = n01(rng);
  if (fill == 3 && rows > 1) v[static_cast<std::size_t>(m)] = NAN;  // row 1 holds a NaN first
  // 3: rows from 3 on hold a NaN or an inf (either sign) at column r mod m, so that over 35 rows
  // every reduction lane of the scan meets one.
  for (std::int64_t r = 3; fill == 3 && r < rows; ++r)
    v[static_cast<std::size_t>(r * m + r % m)] = r % 3 == 0 ? NAN : r % 3 == 1 ? INFINITY : -INFINITY;
  // 2: the constant-row test's cases, by row mod 4: constant 3; 3 but the last value -3 (a sign
  // apart, at the tail); +0 first, then 3 (x_0 is a zero, the row is not constant); 3 but one
  // value 3 + 2^-6 (bf16's next value; exact in all three dtypes) at column r mod m, which
  // over 35 rows reaches every lane (at m = 1 a constant row of that value).
  for (std::int64_t r = 0; fill == 2 && r < rows; ++r) {
    auto at = [&](std::int64_t j) -> double& { return v[static_cast<std::size_t>(r * m + j)]; };
    if (r % 4 == 1) at(m - 1) = -3.0;
    if (r % 4 == 2) at(0) = 0.0;
    if (r % 4 == 3) at(r % m) = 3.0 + 0x1p-6;
  }
  if (fill == 4 || fill == 5) {
    // 4: wide exponents; row 1 holds an inf (of either sign) and row 2 a NaN, both past x_0.
    // 5: row 0 is +-0 (a constant row), row 1 subnormal binary32 values, row 2 near FLT_MAX.
    for (std::size_t i = 0; i < v.size(); ++i) {
      const auto r = static_cast<std::int64_t>(i) / m;
      if (fill == 4) v[i] = std::ldexp(n01(rng), static_cast<int>(i % 41) - 20);
      else v[i] = r == 0 ? (i % 3 ? 0.0 : -0.0) : r == 1 ? std::ldexp(n01(rng), -140) : 3e38 * std::tanh(n01(rng));
    }
    const auto last = [&](std::int64_t r) { return static_cast<std::size_t>(r * m + m - 1); };
    if (fill == 4 && rows > 2) {
      v[last(1)] = m % 2 ? -INFINITY : INFINITY;
      v[last(2)] = NAN;
    }
  }
  // 8: x_0 = 2^20 (r + 1) and x_1 = -x_0, then t = (1 + 2^-5) 2^-124 but +0 at every 20th
  // column: scaled by 2^-21 (or less) each t lands on 16.5 units of 2^-149 and rounds to 16
  // below binary32's normal range, x_0 and x_1 cancel, so pass 2's scaled sum is not the
  // unscaled sum times the scale, and at m = 8193 their means round to other subnormals
  // (15 and 16 units): layer_norm rows beyond L1 must not fold pass 2 into the scan here
  // (cpu_rows_fast.cpp's fold_mean; binary16 holds neither exponent: a NaN row).
  for (std::int64_t r = 0; fill == 8 && r < rows; ++r)
    for (std::int64_t j = 0; j < m; ++j)
      v[static_cast<std::size_t>(r * m + j)] = j < 2 ? (j ? -0x1p20 : 0x1p20) * static_cast<double>(r + 1) : j % 20 ? (1 + 0x1p-5) * 0x1p-124 : 0.0;
  p.inputs["x"] = Tensor::from_doubles(xt, {rows, m}, v);
  if (affine != Affine::none) {
    std::vector<double> g(static_cast<std::size_t>(m)), b(static_cast<std::size_t>(m));
    for (std::int64_t j = 0; j < m; ++j) {
      g[j] = 0.75 + 0.0625 * static_cast<double>(j % 9);
      b[j] = 0.01 * static_cast<double>(j % 5) - 0.02;
      if (fill == 7) {  // y mostly subnormal in binary32 and bf16 (f16's gamma: 0)
        g[j] *= 0x1p-125;
        b[j] *= 0x1p-128;
      }
    }
    p.inputs["gamma"] = Tensor::from_doubles(xt, {m}, g);
    if (affine == Affine::gamma_beta) p.inputs["beta"] = Tensor::from_doubles(xt, {m}, b);
  }
  validate(p);
  return p;
}

Outputs run(const Problem& p) {
  Outputs o;
  if (p.op == Op::layer_norm) kernels::cpu::layer_norm_forward(p, o);
  else kernels::cpu::rms_norm_forward(p, o);
  return o;
}

bool same_bits(double a, double b) { return (std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b)); }

}  // namespace

TEST_CASE("cpu fast rows: bit for bit the documented order, every dtype, width and affine", "[cpu][fast]") {
  INFO("tier " << d::cpu_tier_name() << ", f16 by " << d::half_conversion_name() << ", bf16 y by AVX512-BF16: " << d::bf16_conversion_instruction_available()
                << ", streaming stores: " << d::stream_stores_available());
  std::int64_t checked = 0, rows_checked = 0;
  for (Op op : {Op::layer_norm, Op::rms_norm})
    for (DType xt : {DType::f32, DType::bf16, DType::f16})
      for (DType yt : {xt, DType::f32})
        for (std::int64_t m : {1, 2, 7, 16, 31, 32, 33, 48, 64, 80, 128, 255, 256, 257, 768, 1000, 4097, 8192, 8193})  // 8193: bf16 read in place (kWidenInL1; rms_norm from 257)
          for (Affine af : {Affine::none, Affine::gamma, Affine::gamma_beta})
            for (int fill : {0, 1, 2, 3, 4, 5, 6, 7, 8}) {
              if (op == Op::rms_norm && af == Affine::gamma_beta) continue;
              // Widths of one block: enough rows for two tiles of 16 rows in lanes (widths
              // 16, 32, ..., 256: tile_stats) and three rows after them (a pair and a single
              // row, rows_with). The fills put their special rows in the first tile (fills 4-6:
              // inf, NaN, +-0, subnormal rows, rms_norm rows whose sum of squares is not the
              // scan's), and fills 2, 3 and 5 (constant rows, inf/NaN rows, near FLT_MAX) in
              // every tile and in the pair and the single row; widths 1-33 and 255 run every
              // fill's rows through the pairs and single rows alone.
              const std::int64_t rows = m <= 256 ? 35 : 3;
              // Every eps placement (the denominators of a tile go 16 at a time, tile_ri, or
              // row by row): by width and fill, each placement meets every fill at the widths
              // of tiles (m / 16 = 1, 2, 3, 4, 5, 8, 16) and the others.
              const auto placement = static_cast<EpsPlacement>((m / 16 + m + fill) % 4);
              const Problem p = make(op, xt, yt, rows, m, af, fill, static_cast<unsigned>(m * 7 + fill), placement);
              INFO(to_string(op) << " x " << dtype_name(xt) << " y " << dtype_name(yt) << " m " << m << " affine "
                                 << static_cast<int>(af) << " fill " << fill << " eps placement " << static_cast<int>(placement));
              // Each way of storing y (ordinary stores; a block buffer with streaming stores
              // where this CPU has them, whose heads and tails at unaligned row starts these
              // widths reach): the same bits.
              Tensor ycheck(yt, {rows, m}), ybuf(yt, {rows, m});
              Tensor mean(DType::f32, {rows}), rstd(DType::f32, {rows});
              REQUIRE(d::normalize_rows_fast(p, ycheck, op == Op::layer_norm, &mean, &rstd, d::RowStore::ordinary));  // the path taken
              ybuf.poison();
              // The saved statistics in another dtype here (put_stat: binary64 stored directly,
              // bf16 and f16 through Tensor::set): each rounded once from the same value.
              const DType st = std::array{DType::f64, DType::bf16, DType::f16}[static_cast<std::size_t>(m % 3)];
              Tensor mean2(st, {rows}), rstd2(st, {rows});
              REQUIRE(d::normalize_rows_fast(p, ybuf, op == Op::layer_norm, &mean2, &rstd2, d::RowStore::buffered));
              const Outputs o = run(p);
              std::vector<float> g, b;
              for (std::int64_t j = 0; af != Affine::none && j < m; ++j) g.push_back(static_cast<float>(p.input("gamma")->get(j)));
              for (std::int64_t j = 0; af == Affine::gamma_beta && j < m; ++j) b.push_back(static_cast<float>(p.input("beta")->get(j)));
              for (std::int64_t r = 0; r < rows; ++r) {
                std::vector<float> x;
                for (std::int64_t j = 0; j < m; ++j) x.push_back(static_cast<float>(p.x().get(r * m + j)));
                const ModelOut want = model_row(x, op == Op::layer_norm, p.conv, g, b, yt, m);
                for (std::int64_t j = 0; j < m; ++j) {
                  INFO("row " << r << " j " << j);
                  REQUIRE(same_bits(o.at("y").get(r * m + j), want.y[static_cast<std::size_t>(j)]));
                  REQUIRE(same_bits(ycheck.get(r * m + j), want.y[static_cast<std::size_t>(j)]));
                  REQUIRE(same_bits(ybuf.get(r * m + j), want.y[static_cast<std::size_t>(j)]));
                }
                REQUIRE(same_bits(o.at("rstd").get(r), round_to(o.at("rstd").dtype(), want.rstd)));
                REQUIRE(same_bits(rstd.get(r), round_to(DType::f32, want.rstd)));
                if (op == Op::layer_norm) REQUIRE(same_bits(o.at("mean").get(r), round_to(o.at("mean").dtype(), want.mean)));
                if (op == Op::layer_norm) REQUIRE(same_bits(mean.get(r), round_to(DType::f32, want.mean)));
                REQUIRE(same_bits(rstd2.get(r), round_to(st, want.rstd)));
                if (op == Op::layer_norm) REQUIRE(same_bits(mean2.get(r), round_to(st, want.mean)));
                ++checked;
              }
              rows_checked += rows;
            }
  CHECK(checked == rows_checked);
  CHECK(rows_checked == (2 * 3 * 2 * 3 * 9 - 3 * 2 * 9) * (13 * 35 + 6 * 3));  // rms_norm has no gamma_beta here; 13 widths <= 256
}

TEST_CASE("cpu fast rows: the instruction-set tier is the CPU's best or the one NORMCHECK_CPU_TIER names", "[cpu][fast]") {
  // ctest's cpu_fast_rows_x86_64_v3 and cpu_fast_rows_x86_64 run this file's tests with
  // NORMCHECK_CPU_TIER set: the kernel's AVX2 and baseline builds, which an AVX-512 CPU never
  // takes by itself, against the same model. The tier named must be the one that ran (a typo
  // or an ignored variable must not pass as "tested"), and below x86-64-v4 no AVX-512 choice
  // is taken (what a CPU of that tier runs).
  const std::string tier = d::cpu_tier_name(), half = d::half_conversion_name();
  INFO("tier " << tier << ", f16 by " << half << ", bf16 by AVX512-BF16 " << d::bf16_conversion_instruction_available() << ", streaming "
               << d::stream_stores_available());
  if (const char* e = std::getenv("NORMCHECK_CPU_TIER")) {
    CHECK(tier == e);
    if (tier != "x86-64-v4") {
      CHECK_FALSE(d::stream_stores_available());
      CHECK_FALSE(d::bf16_conversion_instruction_available());
      CHECK(half != "F16C (AVX-512)");
    }
    if (tier == "x86-64-v3" && !std::getenv("NORMCHECK_NO_F16C")) CHECK(half == "F16C (AVX)");  // x86-64-v3 includes F16C
    if (tier == "x86-64") CHECK(half == "software");
  } else {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(NORMCHECK_NO_CPU_DISPATCH)
    __builtin_cpu_init();
    CHECK(tier == (__builtin_cpu_supports("x86-64-v4") ? "x86-64-v4" : __builtin_cpu_supports("x86-64-v3") ? "x86-64-v3" : "x86-64"));
#else
    CHECK(tier == "x86-64");  // no run-time dispatch in this build
#endif
  }
}

TEST_CASE("cpu fast rows: row_scale_f32 is row_scale for every binary32 exponent", "[cpu][fast]") {
  int checked = 0;
  for (int max_up : {100, 60, 1, 0})
    for (std::uint32_t bits = 0; bits < 0x7f800000u; bits += 0x00100001u) {  // every exponent, several fractions
      float a;
      std::memcpy(&a, &bits, 4);
      for (float v : {a, std::nextafter(a, 0.0f), std::numeric_limits<float>::max(), std::numeric_limits<float>::denorm_min()}) {
        INFO(v << " max_up " << max_up);
        REQUIRE(d::row_scale_f32(v, max_up) == d::row_scale(static_cast<double>(v), max_up));
        ++checked;
      }
    }
  CHECK(checked > 4 * 4 * 2000);
}

TEST_CASE("cpu fast rows: 1 and 2 threads give the same bits, other problems take the generic path", "[cpu][fast]") {
  // Rows of 257 values (pairs), and of 128 and 64 (rows in lanes: the threads' halves start
  // at rows 150 and 300, not a multiple of 16, and end with 6-13 rows after their tiles);
  // each > 32768 values: parallel.
  struct Shape {
    std::int64_t rows, m;
  };
  for (Op op : {Op::layer_norm, Op::rms_norm})
    for (Shape sh : {Shape{301, 257}, Shape{301, 128}, Shape{601, 64}})
      for (DType xt : {DType::f32, DType::bf16, DType::f16}) {
        INFO(to_string(op) << " " << dtype_name(xt) << " [" << sh.rows << ", " << sh.m << "]");
        const Problem p = make(op, xt, xt, sh.rows, sh.m, op == Op::layer_norm ? Affine::gamma_beta : Affine::gamma, 0, 5);
        const int before = omp_get_max_threads();
        omp_set_num_threads(1);
        const Outputs one = run(p);
        omp_set_num_threads(2);
        const Outputs two = run(p);
        Tensor streamed(xt, one.at("y").shape());  // both threads' streaming stores, fenced
        Tensor mean(one.at("rstd").dtype(), {sh.rows}), rstd(one.at("rstd").dtype(), {sh.rows});
        REQUIRE(d::normalize_rows_fast(p, streamed, op == Op::layer_norm, &mean, &rstd, d::RowStore::buffered));
        omp_set_num_threads(before);
        CHECK(std::memcmp(one.at("y").data(), streamed.data(), streamed.nbytes()) == 0);
        REQUIRE(one.at("y").nbytes() == two.at("y").nbytes());
        CHECK(std::memcmp(one.at("y").data(), two.at("y").data(), one.at("y").nbytes()) == 0);
        CHECK(std::memcmp(one.at("rstd").data(), two.at("rstd").data(), one.at("rstd").nbytes()) == 0);
        for (std::int64_t r = 0; r < sh.rows; ++r) {
          CHECK(same_bits(rstd.get(r), one.at("rstd").get(r)));
          if (op == Op::layer_norm) CHECK(same_bits(mean.get(r), one.at("mean").get(r)));
        }
      }
  Problem q = make(Op::layer_norm, DType::f32, DType::f32, 2, 8, Affine::none, 0, 1);
  q.conv.acc_dtype = DType::f64;
  Tensor y(DType::f32, {2, 8});
  CHECK_FALSE(d::normalize_rows_fast(q, y, true, nullptr, nullptr));
  Problem r = make(Op::layer_norm, DType::f32, DType::bf16, 2, 8, Affine::none, 0, 1);
  r.conv.normalized_dtype = DType::bf16;
  CHECK_FALSE(d::normalize_rows_fast(r, y, true, nullptr, nullptr));
  CHECK_FALSE(d::normalize_rows_fast(make(Op::layer_norm, DType::f64, DType::f64, 2, 8, Affine::none, 0, 1), y, true, nullptr, nullptr));
}

TEST_CASE("cpu fast rows: the streaming block stores round as the scalar conversions, at every alignment", "[cpu][fast]") {
  // Binary32 values around every bf16 boundary: each of the 65536 high halves with low halves
  // 0, 1, 0x7fff (just below a tie), 0x8000 (a tie: to even), 0x8001, 0xffff; this covers every
  // sign, exponent, subnormal, inf and NaN (quiet and signalling payloads).
  std::vector<float> s;
  for (std::uint32_t hi = 0; hi < 0x10000u; ++hi)
    for (std::uint32_t lo : {0x0u, 0x1u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu}) {
      const std::uint32_t bits = hi << 16 | lo;
      float v;
      std::memcpy(&v, &bits, 4);
      s.push_back(v);
    }
  const auto n = static_cast<std::int64_t>(s.size());
  INFO("streaming stores on this CPU: " << d::stream_stores_available() << ", bf16 by AVX512-BF16: " << d::bf16_conversion_instruction_available());
  for (DType t : {DType::f32, DType::bf16, DType::f16})
    for (bool nt : {false, true})
      for (std::int64_t first : {0, 1, 3, 8, 31}) {  // y's start inside a 64-byte line: heads of every length
        INFO(dtype_name(t) << " nontemporal " << nt << " first " << first);
        Tensor y(t, {n + 64});
        y.poison();
        const std::int64_t len = n - first;
        d::put_block(s.data() + first, y, first, len, nt);
        std::int64_t bad = 0;
        for (std::int64_t i = 0; i < len; ++i) {
          const float v = s[static_cast<std::size_t>(first + i)];
          const auto k = static_cast<std::size_t>(first + i);
          if (t == DType::f32) {
            std::uint32_t a, b;
            std::memcpy(&a, &v, 4);
            std::memcpy(&b, y.as<float>() + k, 4);
            bad += a != b;
          } else if (t == DType::bf16) {
            bad += y.as<std::uint16_t>()[k] != normcheck::detail::float_to_bf16_bits(v);
          } else {
            // F16C keeps a NaN's payload where the software conversion writes 0x7e00: a NaN
            // must stay a NaN of the same sign; every other value, the same bits.
            const std::uint16_t got = y.as<std::uint16_t>()[k], want = normcheck::detail::float_to_half_bits(v);
            bad += std::isnan(v) ? ((got & 0x7c00u) != 0x7c00u || (got & 0x3ffu) == 0 || (got & 0x8000u) != (want & 0x8000u)) : got != want;
          }
        }
        CHECK(bad == 0);
        // Nothing outside [first, first + len) written: the poison stands around it.
        for (std::int64_t i = 0; i < first; ++i) CHECK(std::isnan(y.get(i)));
        for (std::int64_t i = n; i < n + 64; ++i) CHECK(std::isnan(y.get(i)));
      }
#if defined(__x86_64__)
  // With MXCSR.DAZ set (as a host process may leave it), VFPCLASSPS sees no subnormal: the bf16
  // store must still round subnormal values as the integer formula does, not flush them.
  const unsigned csr = _mm_getcsr();
  for (bool nt : {false, true}) {
    INFO("DAZ, bf16, nontemporal " << nt);
    Tensor y(DType::bf16, {n});
    _mm_setcsr(csr | 0x0040u);
    d::put_block(s.data(), y, 0, n, nt);
    _mm_setcsr(csr);
    std::int64_t bad = 0;
    for (std::int64_t i = 0; i < n; ++i) bad += y.as<std::uint16_t>()[i] != normcheck::detail::float_to_bf16_bits(s[static_cast<std::size_t>(i)]);
    CHECK(bad == 0);
  }
#endif
  Tensor wrong(DType::f64, {4});
  CHECK_THROWS_AS(d::put_block(s.data(), wrong, 0, 4, true), std::invalid_argument);
  Tensor small(DType::f32, {4});
  CHECK_THROWS_AS(d::put_block(s.data(), small, 2, 3, true), std::invalid_argument);
}
