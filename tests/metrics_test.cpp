// Metrics: abs/rel/ulp/nmse/stab on hand-made values, binade edges, subnormals, NaN rules.
#include <catch2/catch.hpp>

#include <cmath>

#include "checks/metrics.hpp"

using namespace normcheck;

namespace {
reference::ExactOutput exact_of(DType t, Shape s, std::vector<long double> e, std::vector<double> cond) {
  reference::ExactOutput r;
  r.rounded = Tensor(t, s);
  for (std::size_t i = 0; i < e.size(); ++i) r.rounded.set(static_cast<std::int64_t>(i), static_cast<double>(e[i]));
  r.exact = std::move(e);
  r.cond = std::move(cond);
  return r;
}
}  // namespace

TEST_CASE("metrics: one ULP at 1 and just below 1 in f32", "[metrics][ulp]") {
  // Just below 1 the f32 spacing halves: an error of 2^-24 is 1 ULP there, 0.5 ULP at 1.
  const auto ref = exact_of(DType::f32, {2}, {1.0L, 1.0L - 0x1p-24L}, {0, 0});
  const Tensor got = Tensor::from_doubles(DType::f32, {2}, {1.0 + 0x1p-23, 1.0 - 0x1p-23});
  const MetricSet m = measure(got, ref, DType::f32, DType::f32);
  CHECK(m.abs.value == Approx(0x1p-23));
  CHECK(m.ulp.value == Approx(1.0));
  CHECK(m.ulp.coords == std::vector<std::int64_t>{0});
  // stab with cond 0: |e| / (ulp/2) = 2 at both elements
  CHECK(m.stab.value == Approx(2.0));
}

TEST_CASE("metrics: subnormal ULP and exact zero", "[metrics][ulp]") {
  const auto ref = exact_of(DType::f32, {3}, {0x1p-149L, 0.0L, 1e-40L}, {0, 0, 0});
  const Tensor got = Tensor::from_doubles(DType::f32, {3}, {0x1p-148, 0.0, 1e-40});
  const MetricSet m = measure(got, ref, DType::f32, DType::f32);
  CHECK(m.ulp.value == Approx(1.0));          // one subnormal quantum
  CHECK(m.rel.value == Approx(1.0));          // 2^-148 vs 2^-149
  CHECK(m.ulp.index == 0);
}

TEST_CASE("metrics: rel is infinite for a nonzero output where the exact one is 0", "[metrics]") {
  const auto ref = exact_of(DType::f64, {2}, {0.0L, 2.0L}, {1, 1});
  const Tensor got = Tensor::from_doubles(DType::f64, {2}, {1e-300, 2.0});
  const MetricSet m = measure(got, ref, DType::f64, DType::f64);
  CHECK(std::isinf(m.rel.value));
  CHECK(m.rel.index == 0);
}

TEST_CASE("metrics: stab divides by ulp_out/2 + u_acc * cond", "[metrics][stab]") {
  // f16 output, f32 accumulation, exact 1, cond 2^13: denominator 2^-11 + 2^-24 * 2^13 = 2^-10.
  const auto ref = exact_of(DType::f16, {1}, {1.0L}, {0x1p13});
  const Tensor got = Tensor::from_doubles(DType::f16, {1}, {1.0 + 0x1p-10});
  const MetricSet m = measure(got, ref, DType::f16, DType::f32);
  CHECK(m.stab.value == Approx(1.0));
  CHECK(m.ulp.value == Approx(1.0));
}

TEST_CASE("metrics: nmse is sum (y - r)^2 / sum r^2", "[metrics][nmse]") {
  const auto ref = exact_of(DType::f64, {2}, {3.0L, 4.0L}, {0, 0});
  const Tensor got = Tensor::from_doubles(DType::f64, {2}, {3.0, 4.5});
  CHECK(measure(got, ref, DType::f64, DType::f64).nmse == Approx(0.25 / 25.0));
}

TEST_CASE("metrics: NaN where NaN is exact costs nothing, NaN elsewhere is infinite", "[metrics][nan]") {
  const auto ref = exact_of(DType::f32, {2, 2}, {NAN, NAN, 1.0L, 2.0L}, {NAN, NAN, 1, 1});
  Tensor got = Tensor::from_doubles(DType::f32, {2, 2}, {NAN, NAN, 1.0, 2.0});
  MetricSet m = measure(got, ref, DType::f32, DType::f32);
  CHECK(m.stab.value == 0.0);
  CHECK(m.nan_mismatches == 0);
  got = Tensor::from_doubles(DType::f32, {2, 2}, {NAN, 0.5, 1.0, NAN});
  m = measure(got, ref, DType::f32, DType::f32);
  CHECK(std::isinf(m.stab.value));
  CHECK(m.nan_mismatches == 2);
  CHECK(m.stab.coords == std::vector<std::int64_t>{0, 1});
}

TEST_CASE("metrics: a non-finite mismatch is infinite in every metric, nmse and rel included", "[metrics][nan]") {
  // issue 19: exact NaN, the backend returns 0: nmse skipped the element and an nmse gate passed.
  const auto ref = exact_of(DType::f32, {4}, {NAN, NAN, 1.0L, HUGE_VALL}, {NAN, NAN, 1, 1});
  for (const std::vector<double>& v : {std::vector<double>{0, 0, 1, HUGE_VAL}, std::vector<double>{NAN, NAN, 1, 3},
                                       std::vector<double>{NAN, NAN, NAN, HUGE_VAL}}) {
    const MetricSet m = measure(Tensor::from_doubles(DType::f32, {4}, v), ref, DType::f32, DType::f32);
    CHECK(m.nan_mismatches >= 1);
    for (double e : {m.abs.value, m.rel.value, m.ulp.value, m.stab.value, m.nmse}) CHECK((std::isinf(e) && e > 0));
  }
  const MetricSet ok = measure(Tensor::from_doubles(DType::f32, {4}, {NAN, NAN, 1, HUGE_VAL}), ref, DType::f32, DType::f32);
  CHECK(ok.nmse == 0);
  CHECK(ok.rel.value == 0);
}

TEST_CASE("metrics: literal comparison reports the worst element by coordinates", "[metrics]") {
  const Tensor got = Tensor::from_doubles(DType::f64, {2, 2}, {1, 2, 3, 4.5});
  const LiteralError le = compare_literal(got, {1, 2, 3, 4}, DType::f64);
  CHECK(le.abs.value == 0.5);
  CHECK(le.abs.coords == std::vector<std::int64_t>{1, 1});
}
