// Metrics: abs/rel/ulp/nmse/stab on hand-made values, binade edges, subnormals, NaN rules.
#include <catch2/catch.hpp>

#include <cfloat>
#include <cmath>
#include <random>
#include <tuple>

#include "checks/metrics.hpp"

using namespace normcheck;

namespace {
reference::ExactOutput exact_of(DType t, Shape s, std::vector<long double> e, std::vector<double> cond) {
  return reference::ExactOutput::of_values(t, std::move(s), std::move(e), std::move(cond));
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
  // stab with cond 0: no kernel error is allowed beyond the rounding (but underflow's eta):
  // half a step past it is 2^-25 / 2^-150 units
  CHECK(m.stab.value > 1e30);
  CHECK(m.stab.coords == std::vector<std::int64_t>{0});  // 2^-24 past the half step at 1, 2^-25 below 1
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

TEST_CASE("metrics: stab is half steps up to the rounding, then units of u_acc * cond", "[metrics][stab]") {
  // f16 output, f32 accumulation, exact 1, cond 2^13: half step 2^-11, u c = 2^-24 * 2^13 = 2^-11.
  const auto ref = exact_of(DType::f16, {1}, {1.0L}, {0x1p13});
  Tensor got = Tensor::from_doubles(DType::f16, {1}, {1.0 + 0x1p-10});  // one step: 2^-11 past the half step
  MetricSet m = measure(got, ref, DType::f16, DType::f32);
  CHECK(m.stab.value == Approx(2.0));
  CHECK(m.ulp.value == Approx(1.0));
  got = Tensor::from_doubles(DType::f16, {1}, {1.0 - 0x1p-11});  // one step below 1 (steps of 2^-11 there)
  m = measure(got, ref, DType::f16, DType::f32);
  CHECK(m.stab.value == Approx(1.0));
}

TEST_CASE("metrics: a bf16 output of an f32 kernel gets one rounding, not (1 + k)/2 ULPs", "[metrics][stab]") {
  // The false pass this replaced: |y - r| / (ulp/2 + u c) <= 1 + 8 + sqrt(768) admitted 18 bf16
  // ULPs where u c << ulp. Exact 1.25, cond 3 (u c = 1.8e-7, 2^-8 ULP at 1.25 = 3.9e-3).
  const auto ref = exact_of(DType::bf16, {1}, {1.25L}, {3});
  const double G = 1 + 8 + std::sqrt(768.0);
  for (int steps : {1, 2, 18}) {
    const Tensor got = Tensor::from_doubles(DType::bf16, {1}, {1.25 + steps * 0x1p-7});
    INFO(steps << " ULPs off");
    CHECK(measure(got, ref, DType::bf16, DType::f32).stab.value > 1e4);
    CHECK(measure(got, ref, DType::bf16, DType::f32).stab.value > G);
  }
  // The correct rounding of a value the kernel computed within G u c: 1 + (e - h) / (u c).
  const auto tie = exact_of(DType::bf16, {1}, {1.25L + 0x1p-8L + 1e-7L}, {3});  // just past the midpoint
  const Tensor down = Tensor::from_doubles(DType::bf16, {1}, {1.25});         // a kernel 1e-7 low rounds down
  const double v = measure(down, tie, DType::bf16, DType::f32).stab.value;
  CHECK(v > 1);
  CHECK(v < G);
  CHECK(v == Approx(1 + 1e-7 / (3 * 0x1p-24)).epsilon(1e-6));
}

TEST_CASE("metrics: stab takes the step at the larger of |r| and |y| (a binade edge between them)", "[metrics][stab]") {
  // r just below 2: bf16 steps 2^-7 below 2, 2^-6 above. A kernel value 2 + 2^-7 + tiny
  // (within k u c of r for a large c) rounds to 2 + 2^-6: e = 2^-6 + 2^-9, at most half of the
  // upper step (2^-7) beyond the kernel's error.
  const long double r = 2.0L - 0x1p-9L;
  const auto ref = exact_of(DType::bf16, {1}, {r}, {0x1p18});  // u c = 2^-6
  const Tensor got = Tensor::from_doubles(DType::bf16, {1}, {2.0 + 0x1p-6});
  const double v = measure(got, ref, DType::bf16, DType::f32).stab.value;
  CHECK(v == Approx(1 + (0x1p-6 + 0x1p-9 - 0x1p-7) / 0x1p-6));
}

TEST_CASE("metrics: a subnormal output is allowed the accumulation's absolute rounding error", "[metrics][stab]") {
  // f32 out and acc, exact 1e-42 (subnormal; steps of 2^-149), cond 1e-42: u c = 6e-50, eta = 2^-150.
  const auto ref = exact_of(DType::f32, {1}, {1.0860063098517332e-42L + 0x1p-150L}, {1e-42});
  const Tensor got = Tensor::from_doubles(DType::f32, {1}, {1.0860063098517332e-42 + 0x1p-148});  // 1.5 steps off
  const double v = measure(got, ref, DType::f32, DType::f32).stab.value;
  CHECK(v == Approx(1 + 2.0 / (1 + 1e-42 * 0x1p-24 / 0x1p-150)).epsilon(1e-9));  // 1 + (3 eta - eta) / (u c + eta)
  // A flushed-to-zero output of 1e-40 is far outside (FTZ): 1e-40 / 2^-150 units.
  const auto tiny = exact_of(DType::f32, {1}, {1e-40L}, {1e-40});
  CHECK(measure(Tensor::from_doubles(DType::f32, {1}, {0.0}), tiny, DType::f32, DType::f32).stab.value > 1e4);
  // c = inf (beyond double's range) counts as |r|, a lower bound of it, not as no allowance.
  CHECK(kernel_unit(DType::f64, HUGE_VAL, 3.0L) == Approx(0x1p-53 * 3.0));  // |r|, never DBL_MAX
  CHECK(kernel_unit(DType::f64, NAN, 3.0L) == 0x1p-1075L);
}

TEST_CASE("metrics: a condition magnitude that overflowed double grants |r|, not everything", "[metrics][stab]") {
  // Found by PyTorch's expected failures turning XPASS: layer_norm_quant, f64 subnormal x, a
  // subnormal scale whose c overflowed; int8 66 for an exact 127 passed with stab 1 while +inf
  // counted as DBL_MAX.
  const auto ref = exact_of(DType::int8, {1}, {127.0L}, {HUGE_VAL});
  CHECK(measure(Tensor::from_doubles(DType::int8, {1}, {66.0}), ref, DType::int8, DType::f64).stab.value > 1e10);
  CHECK(measure(Tensor::from_doubles(DType::int8, {1}, {127.0}), ref, DType::int8, DType::f64).stab.value == 0);
  // dy near DBL_MAX (ln_bwd_dy_near_max_f64): c > DBL_MAX, the allowance u |r| lets 4 ULPs through a gate of 18.7.
  const long double r = 1.8346665496770592e+307L;
  const auto big = exact_of(DType::f64, {1}, {r}, {HUGE_VAL});
  const double v = measure(Tensor::from_doubles(DType::f64, {1}, {1.83466654967706e+307}), big, DType::f64, DType::f64).stab.value;
  CHECK(v > 1);
  CHECK(v < 18.7);
}

TEST_CASE("metrics: stab_allowance is the largest error stab_of admits", "[metrics][stab]") {
  for (DType out : {DType::f32, DType::bf16, DType::f16}) {
    for (long double r : {1.0L, 1.9999L, 3e-3L, -7.5L}) {
      for (long double kernel : {0.0L, 1e-9L, 1e-5L, 1e-2L}) {
        for (double G : {0.5, 1.0, 9.0, 37.7}) {
          const long double a = stab_allowance(G, out, r, kernel);
          INFO(dtype_name(out) << " r " << static_cast<double>(r) << " kernel " << static_cast<double>(kernel) << " G " << G);
          CHECK(static_cast<double>(stab_of(a, ulp(out, std::fabs(r) + a), kernel)) <= G * (1 + 1e-12));
          CHECK(static_cast<double>(stab_of(a * (1 + 1e-6L) + 1e-30L, ulp(out, r), kernel)) > G);
        }
      }
    }
  }
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
      Tensor got = ref.rounded();
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
        const long double step = std::isfinite(y) && std::isfinite(r) && std::fabs(y) > std::fabs(r) ? ulp(out, static_cast<long double>(y)) : u;
        // (the output's kept magnitude: binary32 toward zero, spec/exact.hpp CondMagnitudes)
        take(st, static_cast<double>(e == 0 ? 0 : stab_of(e, step, kernel_unit(DType::f32, ref.cond[static_cast<std::size_t>(i)], r))), i);
      }
      INFO(dtype_name(out) << " trial " << trial);
      for (auto [w, want] : {std::pair{&m.abs, &abs}, {&m.rel, &rel}, {&m.ulp, &ul}, {&m.stab, &st}}) {
        CHECK(w->index == want->index);
        CHECK((w->value == want->value || (std::isnan(w->value) && std::isnan(want->value))));
      }
    }
  }
}

TEST_CASE("metrics: an exact value just below the overflow threshold is judged by its correct rounding", "[metrics]") {
  // The exact 2^128 - 2^103 - 0.76 is 2^128 - 2^103 (the threshold) as a long double, whose
  // rounding to binary32 is inf; the reference's correct rounding is FLT_MAX. FLT_MAX passes,
  // inf is a mismatch (it was the other way round; found by a hunt). The same for f16's 65520.
  for (const auto& [t, threshold, max_finite] : {std::tuple{DType::f32, 0x1p128L - 0x1p103L, static_cast<double>(FLT_MAX)},
                                                  std::tuple{DType::f16, 65520.0L, 65504.0}}) {
    reference::ExactOutput ref = reference::ExactOutput::of_values(t, {1}, {threshold}, {1.0});
    ref.set_rounded(0, max_finite);  // the reference's rounding of the true exact value
    REQUIRE(ref.rounded_at(0) == max_finite);
    const MetricSet ok = measure(Tensor::from_doubles(t, {1}, {max_finite}), ref, t, DType::f32);
    CHECK(ok.nan_mismatches == 0);
    CHECK(ok.stab.value <= 1.0);
    const MetricSet bad = measure(Tensor::from_doubles(t, {1}, {HUGE_VAL}), ref, t, DType::f32);
    CHECK(bad.nan_mismatches == 1);
  }
}
