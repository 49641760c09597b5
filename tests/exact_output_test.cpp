// The reference's per-output storage (spec/exact.hpp, issue 15's 24 bytes per element):
// condition magnitudes kept in binary32 toward zero, the rounding to the output dtype derived
// from the long double except where the reference stored another.
#include <catch2/catch.hpp>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "checks/metrics.hpp"
#include "checks/structural.hpp"
#include "ops/reference.hpp"
#include "ops/registry.hpp"
#include "test_util.hpp"

using namespace normcheck;

TEST_CASE("exact output: condition magnitudes are kept toward zero, to 2^-23, or whole", "[exact][cond]") {
  std::mt19937_64 g(11);
  std::vector<double> cs = {0.0, 1.0, 0.1, 1.0 / 3, FLT_MAX, static_cast<double>(FLT_MIN), 3.4028235677973366e38 /* just above FLT_MAX */,
                            1e300, 1e-300, 1e-40 /* binary32 subnormal */, 4.9e-324, HUGE_VAL, DBL_MAX};
  for (int k = 0; k < 10000; ++k) cs.push_back(std::ldexp(std::uniform_real_distribution<double>(1, 2)(g), static_cast<int>(g() % 600) - 300));
  CondMagnitudes m;
  m.resize(cs.size() + 1);
  for (std::size_t i = 0; i < cs.size(); ++i) m.set(i, cs[i]);
  m.set(cs.size(), NAN);
  for (std::size_t i = 0; i < cs.size(); ++i) {
    const double c = cs[i], kept = m[i];
    INFO(i << ": " << c << " kept " << kept);
    REQUIRE(kept <= c);  // never larger: stab is never smaller than with c itself
    REQUIRE(kept >= c * (1 - 0x1p-23));
    REQUIRE(m.upper(i) >= c);  // the side a change must exceed (changes_under, structural)
    REQUIRE(m.upper(i) <= c * (1 + 0x1p-22));
    if (c == 0 || std::isinf(c) || (c >= FLT_MIN && c <= FLT_MAX)) REQUIRE(kept == static_cast<double>(static_cast<float>(kept)));
    else REQUIRE(kept == c);  // outside binary32's normal range: whole
  }
  CHECK(std::isnan(m[cs.size()]));
  CHECK(std::isnan(m.upper(cs.size())));
  CHECK(m.to_doubles().size() == cs.size() + 1);
  // A later value replaces a wide one (a row the certified path left to MPFR writes again).
  const std::size_t wide = 7;
  REQUIRE(m[wide] == 1e300);
  m.set(wide, 2.0);
  CHECK(m[wide] == 2.0);
}

TEST_CASE("exact output: the rounding is the long double's, or the one the reference stored", "[exact][rounded]") {
  // 1 + 2^-24 is the binary32 midpoint between 1 and 1 + 2^-23: a long double on it rounds to
  // even (1). An exact value just above it (below the long double's precision) rounds up;
  // the reference's own rounding says so and is kept.
  const long double mid = 1.0L + 0x1p-24L;
  ExactOutput lit = ExactOutput::of_values(DType::f32, {3}, {mid, -mid, 0.75L});
  CHECK(lit.rounded_at(0) == 1.0);
  CHECK(lit.rounded_at(1) == -1.0);
  lit.set_rounded(0, 1.0 + 0x1p-23);
  lit.set_rounded(1, -1.0);  // the derived one: nothing kept
  lit.set_rounded(2, 0.75);
  CHECK(lit.unlike.size() == 1);
  CHECK(lit.rounded_at(0) == 1.0 + 0x1p-23);
  CHECK(lit.rounded_at(1) == -1.0);
  const Tensor t = lit.rounded();
  CHECK(t.dtype() == DType::f32);
  CHECK(t.shape() == Shape{3});
  CHECK(t.to_doubles() == std::vector<double>{1.0 + 0x1p-23, -1.0, 0.75});

  // The binary64 + tail form (every non-f64 output of the references): L = 1 + 2^-8 + 2^-60
  // rounds up in bf16 from its tail alone (binary64 1 + 2^-8 is the bf16 midpoint).
  ExactOutput o;
  o.dtype = DType::bf16;
  o.shape = {2};
  o.cond.resize(2);
  for (const long double L : {1.0L + 0x1p-8L + 0x1p-60L, 1.0L + 0x1p-8L}) {
    o.exact64.push_back(static_cast<double>(L));
    o.tail.push_back(ExactOutput::tail_of(L, o.exact64.back()));
  }
  REQUIRE(o.exact64[0] == 1.0 + 0x1p-8);
  CHECK(o.rounded_at(0) == 1.0 + 0x1p-7);
  CHECK(o.rounded_at(1) == 1.0);  // on the midpoint: to even
  o.set_rounded(1, 1.0 + 0x1p-7);  // an exact value above the midpoint by less than 2^-64
  CHECK(o.rounded_at(1) == 1.0 + 0x1p-7);

  // The quantizing norms' toward-zero option: the boundaries are the format's values.
  ExactOutput q = ExactOutput::of_values(DType::int8, {2}, {5.0L, -2.75L});
  q.rounding = Rounding::toward_zero;
  CHECK(q.rounded_at(0) == 5.0);
  CHECK(q.rounded_at(1) == -2.0);
  q.set_rounded(0, 4.0);  // exact 5 - 2^-70: its long double is 5
  CHECK(q.rounded_at(0) == 4.0);
}

TEST_CASE("exact output: the references keep no rounding beside the long double on random data", "[exact][rounded]") {
  // What makes the output's rounding cost no memory: it is derived, and kept only where the
  // long double lies on a boundary. Random problems of every output dtype keep none; an
  // output whose rounding option were forgotten (toward zero derived as RNE) would keep
  // about half of its elements.
  std::mt19937_64 g(3);
  std::normal_distribution<double> nd(0.5, 3);
  std::vector<double> x(64 * 96);
  for (double& v : x) v = nd(g);
  for (const Op op : {Op::layer_norm, Op::rms_norm})
    for (const DType dt : {DType::f32, DType::bf16, DType::f16, DType::f64}) {
      const ExactOutputs ref = reference::evaluate_exact(test::row_problem(op, dt, {64, 96}, x, 1e-5));
      for (const auto& [name, out] : ref) {
        INFO(op.name() << " " << dtype_name(dt) << " " << name);
        CHECK(out.unlike.empty());
        CHECK(out.cond.size() == out.size());
      }
    }
  for (const Rounding mode : {Rounding::nearest_even, Rounding::toward_zero, Rounding::nearest_away})
    for (const DType out : {DType::int8, DType::fp8_e4m3fn, DType::fp8_e5m2}) {
      Problem p;
      p.op = *ops::find("rms_norm_quant");
      p.out_dtype = out;
      p.conv.eps = 1e-6;
      p.conv.acc_dtype = DType::f32;
      p.conv.rounding = mode;
      p.conv.normalized_shape = {96};
      p.inputs["x"] = Tensor::from_doubles(DType::f32, {64, 96}, x);
      const ExactOutputs ref = reference::evaluate_exact(p);
      INFO(dtype_name(out) << " rounding " << static_cast<int>(mode));
      const ExactOutput& y = ref.at("y");
      CHECK(y.rounding == mode);
      CHECK(y.unlike.empty());
      // Toward zero never rounds up in magnitude (derived to nearest, about half would).
      std::size_t up = 0;
      for (std::size_t i = 0; i < y.size(); ++i) up += std::fabs(y.rounded_at(i)) > std::fabs(static_cast<double>(y.exact_at(i)));
      if (mode == Rounding::toward_zero) CHECK(up == 0);
      else CHECK(up > y.size() / 4);
    }
}

TEST_CASE("exact output: rounded() holds rounded_at() bit for bit, non-finite values included", "[exact][rounded]") {
  // rounded() stores a finite binary64 through Tensor::set's own rounding where its tail
  // cannot matter; everything else (NaN, infinities, boundaries, kept roundings) through
  // rounded_at(). Element by element both must give the same bytes.
  const std::vector<long double> ls = {0.0L, -0.0L, 1.0L, -1.5L, 1.0L + 0x1p-24L + 0x1p-60L, -(1.0L + 0x1p-8L) - 0x1p-62L, 464.0L,
                                       -464.0L - 0x1p-50L, 500.0L, -500.0L, 65520.0L, -65520.0L + 0x1p-40L, 0x1p128L, -0x1p-140L,
                                       std::numeric_limits<long double>::quiet_NaN(), -std::numeric_limits<long double>::quiet_NaN(),
                                       HUGE_VALL, -HUGE_VALL, 0x1p-1030L, 2.5L + 0x1p-60L /* int8: 3 */, -0.5L - 0x1p-62L /* int8: -1 */, 3.0L};
  for (const DType dt : {DType::f32, DType::bf16, DType::f16, DType::fp8_e4m3fn, DType::fp8_e5m2, DType::int8, DType::f64}) {
    ExactOutput o;
    o.dtype = dt;
    o.shape = {static_cast<std::int64_t>(ls.size())};
    o.cond.resize(ls.size());
    for (const long double L : ls) {
      o.exact64.push_back(round_to(DType::f64, L));
      if (dt == DType::f64) o.exact.push_back(L);
      else o.tail.push_back(ExactOutput::tail_of(L, o.exact64.back()));
    }
    o.set_rounded(ls.size() - 1, dt == DType::f64 ? 3.0 : 2.0);  // a kept rounding (int8: 2 for 3 is not derived)
    const Tensor t = o.rounded();
    Tensor want(dt, o.shape);
    for (std::size_t i = 0; i < ls.size(); ++i) want.set(static_cast<std::int64_t>(i), o.rounded_at(i));
    INFO(dtype_name(dt));
    REQUIRE(t.nbytes() == want.nbytes());
    CHECK(std::memcmp(t.data(), want.data(), t.nbytes()) == 0);
    for (std::size_t i = 0; i < ls.size(); ++i) {
      // Every derived rounding is the long double's own rounding, once.
      if (i + 1 == ls.size()) continue;
      const double direct = round_to(dt, ls[i]);
      INFO(static_cast<double>(ls[i]));
      CHECK(((std::isnan(direct) && std::isnan(o.rounded_at(i))) || (dt == DType::int8 && std::isnan(direct) && o.rounded_at(i) == 0) ||
             direct == o.rounded_at(i)));
    }
  }
}

TEST_CASE("exact output: a structural check asks the magnitudes' upper bound whether a group can show the property", "[exact][cond][structural]") {
  // sums_to_zero on y = (t, -t), whose exact sum is 0: the group can show the property only
  // if 2t exceeds its budget E(t) + E(-t), E from the condition magnitude c. Kept toward zero,
  // c is smaller than set, and so is the budget: a t between the two budgets would count as
  // discriminating although with c itself it does not (a MISTRUSTED case judged and passed).
  // The check reads upper() there; t is placed in that window.
  const Problem p = test::row_problem(Op::layer_norm, DType::f32, {1, 2}, {1, 2});
  const Gate gate{Metric::stab, 9, "test"};
  const double c = 0x1.234568p+20;  // a binary32: kept as is, upper() = c (1 + 2^-23)
  ExactOutput probe = ExactOutput::of_values(DType::f32, {1, 2}, {1.0L, -1.0L}, {c, c});
  REQUIRE(probe.cond[0] == c);
  const double c_hi = probe.cond.upper(0);
  REQUIRE(c_hi > c);
  const auto budget = [&](long double t, double cc) { return 2 * stab_allowance(gate.max, DType::f32, t, kernel_unit(DType::f32, cc, t)); };
  // The largest t (bisection on long doubles) whose 2t does not exceed the budget with c_hi.
  long double lo = 0, hi = 4 * budget(1.0L, c_hi);
  REQUIRE(2 * hi > budget(hi, c_hi));
  for (int k = 0; k < 200 && hi - lo > 0; ++k) {
    const long double mid = lo + (hi - lo) / 2;
    if (mid == lo || mid == hi) break;
    (2 * mid > budget(mid, c_hi) ? hi : lo) = mid;
  }
  const long double t = lo;
  REQUIRE(2 * t <= budget(t, c_hi));
  REQUIRE(2 * t > budget(t, c));  // the window: discriminating with the kept value alone
  const auto judge = [&](long double tt) {
    const ExactOutputs ref = {{"y", ExactOutput::of_values(DType::f32, {1, 2}, {tt, -tt}, {c, c})}};
    const Outputs out = {{"y", Tensor::from_doubles(DType::f32, {1, 2}, {round_to(DType::f32, tt), round_to(DType::f32, -tt)})}};
    return check_structural(Structural{Structural::Kind::sums_to_zero, "y", "", 1}, p, out, ref, gate).status;
  };
  CHECK(judge(t) == Status::mistrusted);
  CHECK(judge(t * (1 + 0x1p-20L)) == Status::passed);  // beyond both budgets: judged, and the sum is 0
}
