// layer_norm: the reference against the worked examples, the CPU kernel against the reference.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include <fmt/format.h>

#include "spec/backend.hpp"
#include "test_util.hpp"
#include "backends/registry.hpp"
#include "checks/metrics.hpp"

using namespace normcheck;
using test::row_problem;

namespace {
std::vector<double> ref_y(const Problem& p) { return reference::evaluate_exact(p).at("y").rounded().to_doubles(); }
}  // namespace

TEST_CASE("layer_norm: [1,2,3] gives -+1.2247448713915890 and 0 (mu 2, var 2/3)", "[layer_norm][worked]") {
  const auto y = ref_y(row_problem(Op::layer_norm, DType::f64, {1, 3}, {1, 2, 3}));
  CHECK(test::within_half_ulp_f64(y[0], -1.224744871391589049));
  CHECK(y[1] == 0.0);
  CHECK(test::within_half_ulp_f64(y[2], 1.224744871391589049));
}

TEST_CASE("layer_norm: [1,2,3] with eps 1e-5", "[layer_norm][worked]") {
  const auto y = ref_y(row_problem(Op::layer_norm, DType::f64, {1, 3}, {1, 2, 3}, 1e-5));
  CHECK(test::within_half_ulp_f64(y[0], -1.224735685908390169));
  CHECK(test::within_half_ulp_f64(y[2], 1.224735685908390169));
  // var(y) = 0.99998500022499662505
  const double v = (y[0] * y[0] + y[2] * y[2]) / 3;
  CHECK(std::fabs(v - 0.99998500022499662505) < 4e-16);
}

TEST_CASE("layer_norm: one value per row has condition magnitude |beta|, whatever x", "[layer_norm][cond]") {
  // x - mu = 0 for any x at m = 1, so y = beta and only beta's own perturbation moves it; the
  // triangle inequality's |x| + mean|x| gave 2 |g x| / sqrt(eps) and let y = 0 pass for beta 0.5.
  for (double x : {3.0, 1e4, -3e4, 1e30}) {
    Problem p = row_problem(Op::layer_norm, DType::f32, {1, 1}, {x}, 1e-5);
    p.conv.affine = Affine::gamma_beta;
    p.inputs["gamma"] = Tensor::from_doubles(DType::f32, {1}, {2.0});
    p.inputs["beta"] = Tensor::from_doubles(DType::f32, {1}, {0.5});
    validate(p);
    const auto y = reference::evaluate_exact(p).at("y");
    INFO("x = " << x);
    CHECK(y.exact_at(0) == 0.5L);
    CHECK(y.cond[0] == 0.5);
  }
  // m = 2: the centring term is mean|x| (the a_j term's weight 1 - 2/m is 0): x = [1, 3], eps 0,
  // no affine: D = 1, n = [-1, 1], c_j = (|1| + |3|)/2 + k |n_j| mean|n x| + |n_j| = 2 + 1 * 2 + 1.
  const auto c2 = reference::evaluate_exact(row_problem(Op::layer_norm, DType::f64, {1, 2}, {1, 3})).at("y");
  CHECK(c2.cond[0] == Approx(5.0));
  CHECK(c2.cond[1] == Approx(5.0));
}

TEST_CASE("reference: long-double exact values as tails beside binary64, bit for bit", "[layer_norm][reference]") {
  // A non-f64 output keeps each long double as a 4-byte tail beside its binary64 rounding
  // (16 bytes per element less for a large case); exact_at() restores the long double bit for
  // bit, so a value just below 2^k keeps the spacing below 2^k (a 1-ULP error there read 0.5
  // ULP when only binary64 was kept: a review found it). An f64 output keeps the long doubles.
  const auto f = reference::evaluate_exact(row_problem(Op::layer_norm, DType::f32, {1, 3}, {1, 2, 3})).at("y");
  const auto d = reference::evaluate_exact(row_problem(Op::layer_norm, DType::f64, {1, 3}, {1, 2, 3})).at("y");
  CHECK(f.exact.empty());
  REQUIRE(f.size() == 3);
  REQUIRE(f.tail.size() == 3);
  REQUIRE(d.exact.size() == 3);
  CHECK(d.tail.empty());
  for (std::size_t i = 0; i < 3; ++i) CHECK(f.exact_at(i) == d.exact_at(i));  // the same exact values
  CHECK(f.exact_at(0) != static_cast<long double>(f.exact64[0]));           // -sqrt(3/2) needs more than 53 bits
  CHECK(std::fabs(d.exact[0] + 1.2247448713915890490986420373529456959L) < 1e-18L);
  CHECK(f.exact_values() == d.exact_values());
  // tail_of/exact_at on long doubles L with r = RN53(L): random significands at every
  // exponent, values just below and above powers of two, exact doubles, the ends of the range.
  std::mt19937_64 g(5);
  std::vector<long double> ls = {0.0L, -0.0L, 1.0L, 1.0L - 0x1p-64L, 1.0L + 0x1p-63L, -(1.0L - 0x1p-60L), 0x1p-1022L * (1 + 0x1p-60L),
                                 0x1p-1030L * 1.25L, 0x1.fffffffffffff8p1023L, 0x1p1024L, static_cast<long double>(INFINITY)};
  for (int k = 0; k < 100000; ++k) {
    const long double m = 1.0L + static_cast<long double>(g() >> 1) * 0x1p-63L;  // [1, 2): 64 random bits
    ls.push_back(std::ldexp(k % 2 ? -m : m, static_cast<int>(g() % 2000) - 1000));
  }
  for (long double L : ls) {
    reference::ExactOutput o;
    o.exact64 = {static_cast<double>(L)};
    o.tail = {reference::ExactOutput::tail_of(L, o.exact64[0])};
    INFO(static_cast<double>(L));
    const double r = o.exact64[0];
    if (std::fabs(r) >= 0x1p-1022 && std::isfinite(r)) REQUIRE((o.exact_at(0) == L && std::signbit(o.exact_at(0)) == std::signbit(L)));
    else REQUIRE(o.exact_at(0) == static_cast<long double>(r));  // outside binary64's normal range: the binary64 value
  }
}

TEST_CASE("metrics: the wrong neighbour of a result just below 1 is 1 ULP off, not 0.5", "[layer_norm][metrics]") {
  // x = [-1e6, 1e6], eps = 1e-5: y = +-1/sqrt(1 + 1e-17) = +-(1 - 5e-18), whose binary64
  // rounding is exactly 1; the correct f32 result is +-1. A backend returning +-(1 - 2^-24)
  // is one ULP of the spacing below 1 off. Measured against binary64 alone it read 0.5 ULP
  // and stab 1 (a false pass of an ulp <= 0.5 gate; a review found it): the long double's tail
  // keeps the exact value's side of 1.
  const Problem p = row_problem(Op::layer_norm, DType::f32, {1, 2}, {-1e6, 1e6}, 1e-5);
  const auto ref = reference::evaluate_exact(p).at("y");
  REQUIRE(ref.rounded_at(1) == 1.0);
  REQUIRE(ref.exact64[1] == 1.0);
  CHECK(ref.exact_at(1) < 1.0L);
  const Tensor wrong = Tensor::from_doubles(DType::f32, {1, 2}, {-(1 - 0x1p-24), 1 - 0x1p-24});
  const MetricSet m = measure(wrong, ref, DType::f32, DType::f32);
  CHECK(m.ulp.value > 0.99);
  CHECK(m.stab.value > 1.1);
  const MetricSet ok = measure(ref.rounded(), ref, DType::f32, DType::f32);
  CHECK(ok.ulp.value <= 0.5);
  CHECK(ok.stab.value <= 1.0);
}

TEST_CASE("layer_norm: [1,2,3,4], [1,3], [11,13], [101,102,103]", "[layer_norm][worked]") {
  auto y = ref_y(row_problem(Op::layer_norm, DType::f64, {1, 4}, {1, 2, 3, 4}));
  CHECK(test::within_half_ulp_f64(y[0], -1.341640786499873818));
  CHECK(test::within_half_ulp_f64(y[1], -0.4472135954999579393));
  CHECK(test::within_half_ulp_f64(y[2], 0.4472135954999579393));
  CHECK(test::within_half_ulp_f64(y[3], 1.341640786499873818));
  y = ref_y(row_problem(Op::layer_norm, DType::f64, {2, 2}, {1, 3, 11, 13}));
  CHECK(y == std::vector<double>{-1, 1, -1, 1});
  y = ref_y(row_problem(Op::layer_norm, DType::f64, {1, 3}, {101, 102, 103}));
  CHECK(test::within_half_ulp_f64(y[0], -1.224744871391589049));
  CHECK(y[1] == 0.0);
}

TEST_CASE("layer_norm: constant and zero rows give zeros, no NaN, with eps 1e-5", "[layer_norm][degenerate]") {
  for (double c : {5.0, 0.0}) {
    const auto y = ref_y(row_problem(Op::layer_norm, DType::f32, {1, 3}, {c, c, c}, 1e-5));
    for (double v : y) CHECK(v == 0.0);
  }
}

TEST_CASE("layer_norm: var 1e-12 with eps 1e-5 caps the gain at 316.2277502", "[layer_norm][degenerate]") {
  const auto y = ref_y(row_problem(Op::layer_norm, DType::f64, {1, 2}, {-1e-6, 1e-6}, 1e-5));
  // gain = 1/sqrt(1e-12 + 1e-5) = 316.2277502054508182 (for the binary64 1e-6: ...8053)
  CHECK(std::fabs(y[1] / 1e-6 - 316.2277502054508) < 1e-9);
}

TEST_CASE("layer_norm: a NaN or inf row is all NaN, the other rows exact", "[layer_norm][degenerate]") {
  const auto y = ref_y(row_problem(Op::layer_norm, DType::f32, {3, 3}, {1, 2, 3, 1, NAN, 3, 1, HUGE_VAL, 3}, 1e-5));
  CHECK(y[0] == static_cast<double>(static_cast<float>(-1.224735685908390169)));
  for (int i = 3; i < 9; ++i) CHECK(std::isnan(y[i]));
}

TEST_CASE("layer_norm: the double instantiation of the reference agrees with MPFR", "[layer_norm][reference]") {
  const auto x = generate_normal(4 * 257, 3.0, 2.0, 7);
  const Problem p = row_problem(Op::layer_norm, DType::f64, {4, 257}, x, 1e-5);
  const auto exact = reference::evaluate_exact(p).at("y");
  const auto dbl = reference::evaluate_double(p).at("y");
  for (std::size_t i = 0; i < x.size(); ++i)
    REQUIRE(std::fabs(static_cast<double>(exact.exact_at(i)) - static_cast<double>(dbl.exact_at(i))) < 1e-12);
}

TEST_CASE("layer_norm: reference working precision covers the input range", "[layer_norm][reference]") {
  CHECK(reference::working_bits(row_problem(Op::layer_norm, DType::f16, {1, 4}, {1, 2, 3, 4})) >= 160);
  // f64 values 2^-1000 .. 2^1000 in one row: the exact sum needs about 2000 + 53 bits.
  const int bits = reference::working_bits(row_problem(Op::layer_norm, DType::f64, {1, 2}, {0x1p-1000, 0x1p1000}));
  CHECK(bits >= 2000 + 53);
  const auto y = reference::evaluate_exact(row_problem(Op::layer_norm, DType::f64, {1, 2}, {0x1p-1000, 0x1p1000})).at("y");
  CHECK(y.rounded_at(0) == -1.0);
  CHECK(y.rounded_at(1) == 1.0);
  // f32 and bf16 inputs (scanned by their bits): the range from the smallest nonzero finite
  // magnitude (a subnormal here) to the largest, zeros, infs and NaNs not counted, any sign:
  // frexp exponents -148 (2^-149) and 128 (3e38): 276 + 24 + log2 8 + 1 = 304.
  const std::vector<double> v = {0.0, -0x1p-149, 3e38, -1.5, INFINITY, NAN, -0.0, 2.0};
  CHECK(reference::working_bits(row_problem(Op::layer_norm, DType::f32, {1, 8}, v)) == 276 + 24 + 3 + 1);
  // bf16 (the same exponent range as f32, 8 bits): -0x1p-133 (frexp -132) .. -0x1p127 (128).
  const std::vector<double> w = {0.0, -0x1p-133, -0x1p127, 1.0, -INFINITY, NAN, 0.5, 3.0};
  CHECK(reference::working_bits(row_problem(Op::layer_norm, DType::bf16, {1, 8}, w)) == 260 + 8 + 3 + 1);
  // every value zero or non-finite: the floor
  CHECK(reference::working_bits(row_problem(Op::layer_norm, DType::f32, {1, 4}, {0.0, NAN, INFINITY, -0.0})) == 160 + 2);
}

TEST_CASE("layer_norm: cpu kernel within the default gate on random rows, every d and dtype", "[layer_norm][cpu]") {
  auto cpu = make_backend("cpu");
  const auto d = GENERATE(1, 3, 17, 64, 768, 4096, 4097, 65536);
  const auto dt = GENERATE(DType::f64, DType::f32, DType::f16, DType::bf16);
  const auto mean = GENERATE(0.0, 100.0);
  const std::uint64_t seed = 1000 + static_cast<std::uint64_t>(d) * 7 + static_cast<std::uint64_t>(dt) * 3 + (mean > 0);
  const std::int64_t rows = d >= 65536 ? 2 : 5;
  INFO(fmt::format("d = {}, dtype = {}, mean = {}, seed = {}", d, dtype_name(dt), mean, seed));
  Problem p = row_problem(Op::layer_norm, dt, {rows, d}, generate_normal(rows * d, mean, 1.0, seed), 1e-5, Affine::gamma_beta);
  p.inputs["gamma"] = Tensor::from_doubles(DType::f32, {d}, generate_uniform(d, 0.5, 2.0, seed + 1));
  p.inputs["beta"] = Tensor::from_doubles(DType::f32, {d}, generate_uniform(d, -1.0, 1.0, seed + 2));
  const auto ref = reference::evaluate_exact(p);
  const auto out = cpu->run(validate(p), {});
  const MetricSet ms = measure(out.at("y"), ref.at("y"), p.out_dtype, p.conv.acc_dtype);
  const Gate g = default_gate(p);
  INFO(fmt::format("stab = {} (gate {}), ulp = {}", ms.stab.value, g.max, ms.ulp.value));
  CHECK(ms.stab.value <= g.max);
  CHECK(ms.nan_mismatches == 0);
}
