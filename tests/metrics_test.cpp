// Metrics: abs/rel/ulp/nmse/stab on hand-made values, binade edges, subnormals, NaN rules.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

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

TEST_CASE("metrics: the worst element of every metric equals a plain scan of every element", "[metrics]") {
  // measure() skips the divisions of an element that cannot beat the current worst
  // (could_exceed); the plain definition below evaluates every element. Same values, same
  // indices (the first of equal values), on data with ties, zeros, NaN and inf.
  std::mt19937_64 g(3);
  std::normal_distribution<double> nd(0, 1);
  for (DType out : {DType::f32, DType::bf16, DType::f16, DType::f64, DType::fp8_e4m3fn, DType::int8}) {
    for (int trial = 0; trial < 20; ++trial) {
      const std::int64_t n = 2000;
      std::vector<long double> ex(n);
      std::vector<double> cond(n);
      for (std::int64_t i = 0; i < n; ++i) {
        ex[i] = static_cast<long double>(nd(g)) * (trial % 5 == 0 ? 1e-30L : 3);
        if (g() % 50 == 0) ex[i] = 0;
        cond[i] = std::fabs(nd(g)) * 4;
      }
      reference::ExactOutput ref = exact_of(out, {n}, ex, cond);
      Tensor got = ref.rounded;
      for (std::int64_t i = 0; i < n; ++i) {
        const auto k = g() % 40;
        if (k < 8) got.set(i, got.get(i) + static_cast<double>(k) * ulp(out, got.get(i)));   // ties across elements
        else if (k == 8 && trial % 4 == 1) got.set(i, NAN);
        else if (k == 9 && trial % 4 == 2) got.set(i, HUGE_VAL);
        else if (k < 14) got.set(i, got.get(i) * (1 + 1e-3 * nd(g)));
      }
      const MetricSet m = measure(got, ref, out, DType::f32);
      // The definitions (metrics.hpp), every element.
      Worst abs, rel, ul, st;
      const long double ua = unit_roundoff(DType::f32);
      auto take = [](Worst& w, double v, std::int64_t i) { if (w.index < 0 || v > w.value || (std::isnan(v) && !std::isnan(w.value))) { w.value = v; w.index = i; } };
      for (std::int64_t i = 0; i < n; ++i) {
        const double y = got.get(i);
        const long double r = ex[i];
        const bool bad = std::isnan(y) != std::isnan(r) || (std::isinf(y) && !(static_cast<long double>(y) == r));
        const long double e = bad ? HUGE_VALL : std::isnan(y) ? 0 : std::fabs(y - r);
        const long double u = ulp(out, r);
        take(abs, static_cast<double>(e), i);
        take(rel, static_cast<double>(bad ? HUGE_VALL : e == 0 ? 0 : r == 0 ? HUGE_VALL : e / std::fabs(r)), i);
        take(ul, static_cast<double>(e / u), i);
        take(st, static_cast<double>(e == 0 ? 0 : is_quantized(out) ? quantized_stab(e, u, ua * cond[i]) : e / (u / 2 + ua * cond[i])), i);
      }
      INFO(dtype_name(out) << " trial " << trial);
      for (auto [w, want] : {std::pair{&m.abs, &abs}, {&m.rel, &rel}, {&m.ulp, &ul}, {&m.stab, &st}}) {
        CHECK(w->index == want->index);
        CHECK((w->value == want->value || (std::isnan(w->value) && std::isnan(want->value))));
      }
    }
  }
}
