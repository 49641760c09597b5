// rms_norm: the reference against the worked examples, the CPU kernel against the reference.
#include <catch2/catch.hpp>

#include <cmath>

#include <fmt/format.h>

#include "spec/backend.hpp"
#include "test_util.hpp"
#include "backends/registry.hpp"

using namespace normcheck;
using test::row_problem;

namespace {
std::vector<double> ref_y(const Problem& p) { return reference::evaluate_exact(p).at("y").rounded().to_doubles(); }
}  // namespace

TEST_CASE("rms_norm: [1,2,3] divides by sqrt(14/3)", "[rms_norm][worked]") {
  const auto y = ref_y(row_problem(Op::rms_norm, DType::f64, {1, 3}, {1, 2, 3}));
  CHECK(test::within_half_ulp_f64(y[0], 0.4629100498862757308));
  CHECK(test::within_half_ulp_f64(y[1], 0.9258200997725514616));
  CHECK(test::within_half_ulp_f64(y[2], 1.388730149658827192));
}

TEST_CASE("rms_norm: [1,2,3] with eps 1e-6", "[rms_norm][worked]") {
  const auto y = ref_y(row_problem(Op::rms_norm, DType::f64, {1, 3}, {1, 2, 3}, 1e-6));
  CHECK(test::within_half_ulp_f64(y[0], 0.4629100002887783569));
  CHECK(test::within_half_ulp_f64(y[1], 0.9258200005775567137));
  CHECK(test::within_half_ulp_f64(y[2], 1.388730000866335071));
}

TEST_CASE("rms_norm: is not layer_norm without the mean (RMS^2 = var + mu^2)", "[rms_norm][worked]") {
  auto y = ref_y(row_problem(Op::rms_norm, DType::f64, {1, 4}, {1, 2, 3, 4}));
  CHECK(test::within_half_ulp_f64(y[0], 0.3651483716701107423));
  CHECK(test::within_half_ulp_f64(y[3], 1.460593486680442969));
  y = ref_y(row_problem(Op::rms_norm, DType::f64, {1, 2}, {11, 13}));
  CHECK(test::within_half_ulp_f64(y[0], 0.9135002783911396571));
  CHECK(test::within_half_ulp_f64(y[1], 1.079591238098619595));
  y = ref_y(row_problem(Op::rms_norm, DType::f64, {1, 2}, {3, 4}));
  CHECK(test::within_half_ulp_f64(y[0], 0.8485281374238570293));
  CHECK(test::within_half_ulp_f64(y[1], 1.131370849898476039));
  y = ref_y(row_problem(Op::rms_norm, DType::f64, {1, 3}, {101, 102, 103}));
  CHECK(test::within_half_ulp_f64(y[0], 0.9901643551040082528));
  CHECK(test::within_half_ulp_f64(y[1], 0.9999679625802855622));
  CHECK(test::within_half_ulp_f64(y[2], 1.009771570056562872));
}

TEST_CASE("rms_norm: scale invariant, not shift invariant", "[rms_norm][invariance]") {
  const auto a = ref_y(row_problem(Op::rms_norm, DType::f64, {1, 2}, {1, 3}));
  const auto b = ref_y(row_problem(Op::rms_norm, DType::f64, {1, 2}, {30, 90}));
  CHECK(a == b);
  CHECK(test::within_half_ulp_f64(a[0], 0.4472135954999579393));
  const auto c = ref_y(row_problem(Op::rms_norm, DType::f64, {1, 2}, {11, 13}));
  CHECK(c[0] != a[0]);
}

TEST_CASE("rms_norm: zero row with eps gives zeros, without eps NaN", "[rms_norm][degenerate]") {
  for (double v : ref_y(row_problem(Op::rms_norm, DType::f32, {1, 3}, {0, 0, 0}, 1e-5))) CHECK(v == 0.0);
  for (double v : ref_y(row_problem(Op::rms_norm, DType::f32, {1, 3}, {0, 0, 0}, 0.0))) CHECK(std::isnan(v));
}

TEST_CASE("rms_norm: cpu kernel within the default gate on random rows, every d and dtype", "[rms_norm][cpu]") {
  auto cpu = make_backend("cpu");
  const auto d = GENERATE(1, 3, 17, 64, 768, 4096, 4097, 65536);
  const auto dt = GENERATE(DType::f64, DType::f32, DType::f16, DType::bf16);
  const auto affine = GENERATE(Affine::gamma, Affine::one_plus_w);
  const std::uint64_t seed = 5000 + static_cast<std::uint64_t>(d) * 7 + static_cast<std::uint64_t>(dt) * 3;
  const std::int64_t rows = d >= 65536 ? 2 : 5;
  INFO(fmt::format("d = {}, dtype = {}, affine = {}, seed = {}", d, dtype_name(dt), to_string(affine), seed));
  Problem p = row_problem(Op::rms_norm, dt, {rows, d}, generate_normal(rows * d, 0.5, 2.0, seed), 1e-6, affine);
  p.inputs["gamma"] = Tensor::from_doubles(dt, {d}, generate_uniform(d, -0.5, 1.5, seed + 1));
  const auto ref = reference::evaluate_exact(p);
  const auto out = cpu->run(validate(p), {});
  const MetricSet ms = measure(out.at("y"), ref.at("y"), p.out_dtype, p.conv.acc_dtype);
  const Gate g = default_gate(p);
  INFO(fmt::format("stab = {} (gate {}), ulp = {}", ms.stab.value, g.max, ms.ulp.value));
  CHECK(ms.stab.value <= g.max);
  CHECK(ms.nan_mismatches == 0);
}

TEST_CASE("rms_norm: normalized_dtype grants one step of n only where n is at a rounding boundary", "[rms_norm][normalized_dtype][gate]") {
  // n is rounded to bf16 before the (absent) affine: y = round_f32(round_bf16(n)). x_3 is
  // chosen (bisection in binary64, then rounded to f32) so that n_3 lies within a few f32
  // ULPs of 1 + 2^-8, the midpoint of bf16's 1 and 1 + 2^-7: a correct f32 kernel may round
  // it to either, and the gate must accept both. A kernel that skips the rounding must still
  // fail at the other elements (0.3, 0.7, 1.1 are far from bf16 midpoints after division).
  const double target = 1 + 0x1p-8;
  const auto n3 = [](double w) { return w / std::sqrt((0.3 * 0.3 + 0.7 * 0.7 + 1.1 * 1.1 + w * w) / 4); };
  double lo = 0.5, hi = 4;
  for (int k = 0; k < 200; ++k) ((n3((lo + hi) / 2) < target) ? lo : hi) = (lo + hi) / 2;
  Problem p = row_problem(Op::rms_norm, DType::f32, {1, 4}, {0.3, 0.7, 1.1, lo});
  p.conv.normalized_dtype = DType::bf16;
  const auto ex = reference::evaluate_exact(p).at("y");
  const double G = 1 + 8 + std::sqrt(4.0);
  const auto allowed = [&](std::size_t i) {
    const long double e = ex.exact_at(i);
    return stab_allowance(G, DType::f32, e, kernel_unit(DType::f32, ex.cond[i], e));
  };
  const auto x = p.x().to_doubles();
  const double rms = std::sqrt((x[0] * x[0] + x[1] * x[1] + x[2] * x[2] + x[3] * x[3]) / 4);
  // element 3: both neighbours of the midpoint pass
  for (double y : {1.0, 1 + 0x1p-7}) {
    INFO(y);
    CHECK(std::fabs(y - static_cast<double>(ex.exact_at(3))) <= allowed(3));
  }
  // elements 0..2: the unrounded n (a kernel that skips normalized_dtype) fails at one at least
  bool caught = false;
  for (std::size_t i = 0; i < 3; ++i) {
    const double n = static_cast<double>(static_cast<float>(x[i] / rms));
    caught = caught || std::fabs(n - static_cast<double>(ex.exact_at(i))) > allowed(i);
    // and no grant there: the allowance stays below a quarter of a bf16 step
    CHECK(allowed(i) < ulp(DType::bf16, n) / 4);
  }
  CHECK(caught);
}
