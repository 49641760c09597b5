// The certified fast path of the reference (ops/common/ball.hpp) against its judge, MPFR: on
// every bundled forward layer_norm / rms_norm case and on random and adversarial rows, every
// output (the rounding to the output dtype, to binary64, the long double, the saved
// statistics) must be identical bit for bit, the condition magnitudes (a bound, evaluated in
// binary64 here) within (m + 16) 2^-52 relative, and the fast path must
// decide nearly every row of ordinary data (else it is no fast path). The row count scales
// with NORMCHECK_EQUIV_ROWS (default 3000 per op, dtype and data kind here).
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <array>
#include <random>
#include <set>

#include <catch2/catch.hpp>

#include "cases/case.hpp"
#include "cases/matrix.hpp"
#include "ops/common/ball.hpp"
#include "ops/common/family_common.hpp"
#include "ops/common/precision.hpp"
#include "checks/budget.hpp"
#include "ops/common/row_norm.hpp"
#include "ops/dyt/reference.hpp"
#include "ops/reference.hpp"
#include "ops/registry.hpp"
#include "spec/sample.hpp"
#include "test_util.hpp"

using namespace normcheck;
using reference::DDBall;
using reference::Uncertain;

namespace {

/// Both paths on p; returns the number of differing values (and names the first).
std::int64_t differences(const Problem& p, std::string* first = nullptr) {
  reference::set_fast_path(false);
  const ExactOutputs slow = reference::evaluate_exact(p);
  reference::set_fast_path(true);
  const ExactOutputs fast = reference::evaluate_exact(p);
  std::int64_t n = 0;
  auto differ = [&](const std::string& what) {
    if (n++ == 0 && first) *first = what;
  };
  // The same bits (the 10 significant bytes of an x87 long double), or both NaN (the sign of a
  // NaN means nothing and no metric reads it).
  auto same_bits = [](auto a, auto b) {
    return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof(double) < sizeof(a) ? 10 : sizeof(a)) == 0;
  };
  // Condition magnitudes are a first-order bound, computed in binary64 on the fast path:
  // within (m + 16) 2^-52 relative of MPFR's (row_norm.hpp cond_t), m the group size.
  // m: the op's group size (checks/budget.hpp; (C/G) spatial for the channel ops, d_k for qk_norm).
  // Each is kept in binary32 toward zero (spec/exact.hpp CondMagnitudes), which moves it by
  // less than 2^-23 relative: two such values on either side of a binary32 differ by one
  // binary32 step more.
  const double m = static_cast<double>(group_size(p));
  auto close_cond = [&](double a, double b) {
    return (std::isnan(a) && std::isnan(b)) || a == b || std::fabs(a - b) <= ((m + 16) * 0x1p-52 + 0x1p-23) * std::max(std::fabs(a), std::fabs(b));
  };
  for (const auto& [name, s] : slow) {
    if (!fast.count(name)) { differ(name + " missing"); continue; }
    const ExactOutput& f = fast.at(name);
    const Tensor sr = s.rounded(), fr = f.rounded();
    if (sr.nbytes() != fr.nbytes() || std::memcmp(sr.data(), fr.data(), sr.nbytes()) != 0)
      differ(name + ".rounded");
    if (s.exact.size() != f.exact.size() || s.exact64.size() != f.exact64.size() || s.cond.size() != f.cond.size() || s.size() == 0)
      differ(name + ": the stored forms differ in size (or are empty)");
    for (std::size_t i = 0; i < std::min(s.size(), f.size()); ++i) {
      if (!same_bits(s.exact_at(i), f.exact_at(i))) differ(fmt::format("{}.exact_at({}) {:.21Lg} vs {:.21Lg}", name, i, s.exact_at(i), f.exact_at(i)));
      if (!same_bits(s.exact64[i], f.exact64[i])) differ(fmt::format("{}.exact64[{}]", name, i));
      if (!close_cond(s.cond[i], f.cond[i])) differ(fmt::format("{}.cond[{}] {:.17g} vs {:.17g}", name, i, s.cond[i], f.cond[i]));
    }
  }
  return n;
}

/// The problem drawn at these dims (a difference the equivalence run found, replayed by its
/// Dims::str(): op, w, rows, x, param, regime, eps, seed).
Problem drawn(Op op, std::int64_t width, std::int64_t rows, DType x, DType param, const char* regime, const char* eps, std::uint64_t seed) {
  Dims d;
  d.width = width;
  d.rows = rows;
  d.x = x;
  d.param = param;
  d.regime = *parse_regime(regime);
  d.eps = *parse_eps_regime(eps);
  d.seed = seed;
  return *draw_problem(op, d);
}

std::int64_t env_rows(std::int64_t dflt) {
  const char* e = std::getenv("NORMCHECK_EQUIV_ROWS");
  return e ? std::max<std::int64_t>(1, std::atoll(e)) : dflt;
}

/// The random draws' seed: `base`, or with NORMCHECK_EQUIV_SEED=K another stream per K (runs
/// with different K draw disjoint rows, so a campaign at scale can be split over processes and
/// machines; README "The reference"). A K that is not a whole number fails the test.
std::uint64_t env_seed(std::uint64_t base) {
  const char* e = std::getenv("NORMCHECK_EQUIV_SEED");
  if (e == nullptr) return base;
  char* end = nullptr;
  const unsigned long long k = std::strtoull(e, &end, 10);
  REQUIRE((*e != '\0' && *end == '\0'));  // NORMCHECK_EQUIV_SEED must be a whole number
  std::seed_seq q{static_cast<std::uint32_t>(base), static_cast<std::uint32_t>(base >> 32), static_cast<std::uint32_t>(k), static_cast<std::uint32_t>(k >> 32)};
  std::uint32_t w[2];
  q.generate(w, w + 2);
  return (static_cast<std::uint64_t>(w[0]) << 32) | w[1];
}

/// The ops whose forward reference has the certified fast path.
bool fast_op(const Op& op) {
  const std::string n(op.name());
  return n == "layer_norm" || n == "rms_norm" || n.starts_with("fused_add_") || n.ends_with("_quant") || n == "group_norm" ||
         n == "instance_norm" || n == "l2_normalize" || n == "scale_norm" || n.starts_with("ada_") || n == "qk_norm" ||
         n == "batch_norm" || n == "dyt";
}

}  // namespace

TEST_CASE("ddball: exact inputs stay exact, ties and zeros are left to MPFR", "[reference][fastpath]") {
  const DDBall one(1.0), three(3.0);
  CHECK(static_cast<double>(one + three) == 4.0);
  CHECK(static_cast<double>(three / one) == 3.0);
  // 1/3 correctly rounded to binary64 and to binary32 from a ball.
  CHECK(static_cast<double>(one / three) == 1.0 / 3.0);
  CHECK(round_to(DType::f32, one / three) == static_cast<double>(1.0f / 3.0f));
  CHECK(static_cast<long double>(one / three) == 1.0L / 3.0L);
  // sqrt(2) in every format, against the hardware's correctly rounded square roots.
  CHECK(static_cast<double>(sqrt(DDBall(2.0))) == std::sqrt(2.0));
  CHECK(static_cast<long double>(sqrt(DDBall(2.0))) == std::sqrt(2.0L));
  // Exact where the operation is error-free: 2 - mean(1, 2, 3) is an exact 0 (a quotient
  // that is a double), and 1 + 2^-24 a decided tie of binary32 (to even: 1).
  const DDBall mu = (DDBall(1.0) + DDBall(2.0) + DDBall(3.0)) / DDBall(3);
  CHECK((DDBall(2.0) - mu).exact_zero());
  CHECK(round_to(DType::f32, DDBall(1.0) + DDBall(1.0) * DDBall(0x1p-24)) == 1.0);
  CHECK(round_to(DType::f32, DDBall(1.0) + DDBall(3.0) * DDBall(0x1p-24)) == 1.0 + 0x1p-22);
  // 3 (1/3) - 1 is 0 too, but computed with an error: its sign, its rounding are undecided.
  const DDBall zero = DDBall(3.0) * (DDBall(1.0) / DDBall(3.0)) - DDBall(1.0);
  CHECK_THROWS_AS(round_to(DType::f32, zero), Uncertain);
  CHECK_THROWS_AS((void)(zero < DDBall(0.0)), Uncertain);
  CHECK_THROWS_AS(sqrt(zero), Uncertain);
  // 0 times it: an exact 0 whose sign is that of the ball's exact value, which it cannot
  // prove (IEEE's -0 for 0 x negative); with a proven sign, IEEE's sign (found by a hunt:
  // batch_norm's y = 0 (x - mean) came back +0 where MPFR gives -0).
  CHECK_THROWS_AS(DDBall(0.0) * zero, Uncertain);
  CHECK_THROWS_AS(zero * DDBall(-0.0), Uncertain);
  CHECK(std::signbit(static_cast<double>(DDBall(0.0) * -(DDBall(1.0) / DDBall(3.0)))));
  CHECK(!std::signbit(static_cast<double>(DDBall(-0.0) * -(DDBall(1.0) / DDBall(3.0)))));
  CHECK(DDBall(1.0) < DDBall(2.0));
  // A value exactly at a binary32 midpoint, computed inexactly: undecided.
  const DDBall mid = DDBall(1.0) + (DDBall(3.0) * (DDBall(1.0) / DDBall(3.0))) * DDBall(0x1p-24);
  CHECK_THROWS_AS(round_to(DType::f32, mid), Uncertain);
  // Out of the range where the error bounds hold: undecided, never wrong.
  CHECK_THROWS_AS(DDBall(0x1p-600) * DDBall(0x1p-600), Uncertain);
  CHECK_THROWS_AS(DDBall(0x1p-600) * DDBall(0x1p-600 / 3), Uncertain);
  CHECK_THROWS_AS(DDBall(0x1p800) * DDBall(0x1p800 / 3), Uncertain);
  // An overflow inside an operation (x^2 of x ~ 2^600: inf - inf in TwoProduct) is never a
  // NaN result: the coverage matrix's "huge" regime once came back NaN from here.
  CHECK_THROWS_AS(DDBall(0x1p600) * DDBall(0x1p600), Uncertain);
  CHECK_THROWS_AS(DDBall(0x1p600) * DDBall(0x1p600 / 3), Uncertain);
  CHECK_THROWS_AS(DDBall(0x1p899) * DDBall(3.0), Uncertain);
  // ldexp: an exact scaling (an exact ball stays exact; a computed one keeps its radius,
  // scaled); a low part that would lose bits to underflow is left to MPFR.
  CHECK(ldexp(DDBall(3.0), 1).radius() == 0);
  CHECK(static_cast<double>(ldexp(DDBall(3.0), -2)) == 0.75);
  const DDBall third = DDBall(1.0) / DDBall(3.0), six = ldexp(third, 1);
  CHECK(six.hi() == 2 * third.hi());
  CHECK(six.lo() == 2 * third.lo());
  CHECK(six.radius() >= 2 * third.radius());
  CHECK(six.radius() <= 2 * third.radius() * (1 + 0x1p-49) + 0x1p-999);
  CHECK_THROWS_AS(ldexp(DDBall(1.0) + DDBall(0x1p-100), -1000), Uncertain);
  // a low part that underflows to 0 entirely (2^-800 + 2^-1074 scaled by 2^-100: a review found
  // it came back as the exact 2^-900)
  CHECK_THROWS_AS(ldexp(DDBall(0x1p-800) + DDBall(0x1p-1074), -100), Uncertain);
  CHECK(std::signbit(static_cast<double>(ldexp(DDBall(-0.0), 3))));
  // Signs of zero as IEEE (and MPFR): -0 - 0 = -0, -0 / 2 = -0, and so as a long double.
  CHECK(std::signbit(static_cast<long double>((DDBall(-0.0) - DDBall(0.0)) / DDBall(2.0))));
  // An exact double-double times an exact double whose product is a double-double stays exact:
  // batch_norm's running mean 1 * mu of a binary64 mean that was exactly a long double
  // midpoint (65 bits) came back a ball that no rounding could decide, and every binary64
  // batch_norm problem with such a channel went to MPFR.
  const double th = 0x1.3e0a7f2479fb5p-1, tl = -0x1.cdp-57;
  const DDBall tie = DDBall(th) + DDBall(tl);
  REQUIRE(tie.radius() == 0);
  const long double tie_ld = static_cast<long double>(th) + static_cast<long double>(tl);  // one rounding: the midpoint to even
  CHECK(static_cast<long double>(tie) == tie_ld);
  for (double f : {1.0, -1.0, 2.0, 0x1p-7, 3.0, -5.0}) {
    INFO("factor " << f);
    const DDBall p = DDBall(f) * tie, q = tie * DDBall(f);
    CHECK(p.radius() == 0);
    CHECK(q.radius() == 0);
    CHECK((p.hi() == q.hi() && p.lo() == q.lo()));
    // the exact product, against long double arithmetic where that is exact (|f| a power of two)
    if (f == 1.0 || f == -1.0 || f == 2.0 || f == 0x1p-7) CHECK(static_cast<long double>(p) == static_cast<long double>(f) * tie_ld);
    // the exact product in binary128 (68 significant bits at most here: every step exact)
    using Q = __float128;
    CHECK((static_cast<Q>(p.hi()) + static_cast<Q>(p.lo()) == static_cast<Q>(f) * (static_cast<Q>(th) + static_cast<Q>(tl))));
  }
  CHECK(static_cast<long double>(DDBall(1.0) * tie) == tie_ld);
  // A product that is not a double-double (65 bits times 53: 118) stays a ball.
  CHECK((DDBall(0x1.5555555555555p-2) * tie).radius() > 0);
  CHECK((tie * DDBall(0x1.5555555555555p-2)).radius() > 0);
}

TEST_CASE("round_significand: binary64 rounded to p bits as round_to does in the normal range", "[dtype][reference]") {
  std::mt19937_64 g(3);
  std::uniform_int_distribution<std::uint64_t> bits;
  for (const DType t : {DType::f32, DType::bf16, DType::f16}) {
    const normcheck::FormatInfo& f = format_info(t);
    for (int i = 0; i < 200000; ++i) {
      std::uint64_t b = bits(g);
      if (i % 4 == 0) b &= ~((std::uint64_t{1} << (52 - f.precision)) - 1);  // exact midpoints and values
      if (i % 4 == 1) b |= (std::uint64_t{1} << (52 - f.precision)) - 1;     // carries into the exponent
      double h;
      std::memcpy(&h, &b, sizeof h);
      // h's exponent into the format's normal range
      int e0 = 0;
      h = std::ldexp(std::frexp(h, &e0), static_cast<int>(bits(g) % static_cast<std::uint64_t>(f.max_exp - f.min_exp)) + f.min_exp);
      if (!(std::fabs(h) >= f.min_normal && std::fabs(h) <= f.max_finite)) continue;
      const double want = round_to(t, h), got = reference::dd::round_significand(h, f.precision);
      if (std::isinf(want)) continue;  // beyond max_finite: quick_decides declines such a candidate
      INFO(dtype_name(t) << " " << h);
      REQUIRE(got == want);
    }
  }
}

TEST_CASE("ddball: TwoProduct by FMA and by Dekker's split give the same exact error", "[reference][fastpath]") {
  // two_prod takes the FMA where the CPU has one (kHardwareFma); both ways must return the
  // exact a b - p, so the choice can never change a ball. MPFR at 256 bits is the judge.
  using M = reference::detail::mp256;
  std::mt19937_64 g(7);
  std::uniform_real_distribution<double> u(1, 2);
  std::uniform_int_distribution<int> e(-480, 480), s(0, 1);
  int inexact = 0;
  for (int i = 0; i < 20000; ++i) {
    const double ua = u(g);
    // Every 7th a with a 24-bit significand and b's an 8-bit one: an exact product (e = 0).
    double a = std::ldexp(i % 7 ? ua : static_cast<float>(ua), e(g)), b = std::ldexp(u(g), e(g));
    if (i % 7 == 0) b = std::ldexp(std::round(std::ldexp(b, -std::ilogb(b) + 7)), std::ilogb(b) - 7);
    if (s(g)) a = -a;
    double p1, e1, p2, e2;
    reference::dd::two_prod(a, b, p1, e1);
    reference::dd::two_prod_dekker(a, b, p2, e2);
    REQUIRE(p1 == p2);
    REQUIRE(e1 == e2);
    REQUIRE(M(a) * M(b) == M(p1) + M(e1));
    inexact += e1 != 0;
  }
  CHECK(inexact > 10000);
  CHECK(inexact < 20000);
#if defined(__x86_64__) && defined(__GNUC__)
  CHECK((reference::dd::kHardwareFma || !__builtin_cpu_supports("fma")));  // the fast way where there is one
#endif
}

TEST_CASE("ddball: a product of exact operands declared exact is the exact product", "[reference][fastpath]") {
  // DDBall::mul returns radius 0 for an exact double-double times an exact double only where
  // error-free steps show the product is that double-double. MPFR at 256 bits is the judge;
  // the operands are drawn so that both outcomes occur: double-doubles of 53 + k bits (k up
  // to 60: low parts of 1..53 bits, some with a gap of zeros), factors of 1..53 bits (1, powers
  // of two, small integers, full doubles), signs, exponents across the range, both orders.
  using M = reference::detail::mp256;
  std::mt19937_64 g(11);
  std::uniform_real_distribution<double> u(1, 2);
  std::uniform_int_distribution<int> e(-400, 400), bits(1, 53), gap(0, 12);
  auto with_bits = [&](double v, int k) {  // v's leading k bits
    const int x = std::ilogb(v);
    return std::ldexp(std::trunc(std::ldexp(v, k - 1 - x)), x - k + 1);
  };
  int exact = 0, ball = 0;
  for (int i = 0; i < 200000; ++i) {
    const double h = std::ldexp(u(g), e(g)) * (g() % 2 ? 1 : -1);
    double l = std::ldexp(with_bits(u(g), bits(g)), std::ilogb(h) - 54 - gap(g)) * (g() % 2 ? 1 : -1);
    if (i % 5 == 0) l = 0;
    const double hh = h + l;  // (hh, ll) normalized: |ll| <= ulp(hh) / 2
    const double ll = l - (hh - h);
    double d;
    switch (i % 6) {
      case 0: d = 1; break;
      case 1: d = std::ldexp(1.0, e(g) / 4); break;
      case 2: d = static_cast<double>(g() % 15 + 2); break;
      default: d = with_bits(u(g), bits(g)) * std::ldexp(1.0, e(g) / 4);
    }
    if (g() % 2) d = -d;
    const DDBall w = DDBall(hh) + DDBall(ll);  // an exact double-double where the add shows it
    if (w.radius() != 0) continue;
    DDBall p;
    try {
      p = i % 2 ? w * DDBall(d) : DDBall(d) * w;
    } catch (const Uncertain&) {
      continue;  // out of range
    }
    INFO(i << ": (" << hh << " + " << ll << ") * " << d);
    if (p.radius() == 0) {
      ++exact;
      REQUIRE(M(p.hi()) + M(p.lo()) == (M(hh) + M(ll)) * M(d));
    } else {
      ++ball;
      const M err = abs(M(p.hi()) + M(p.lo()) - (M(hh) + M(ll)) * M(d));
      REQUIRE(err <= M(p.radius()));
    }
  }
  CHECK(exact > 50000);
  CHECK(ball > 20000);
}

TEST_CASE("ddball: dyt's pairs and exp_n<2> give each element's single evaluation bit for bit", "[reference][fastpath]") {
  // dyt_terms_pair interleaves two elements' exps (exp_n<2>); every part of every result (midpoint,
  // low part, radius, the binary64 terms) and every Uncertain must be what one dyt_terms call
  // gives. Arguments: every branch (NaN, +-inf, +-0, a ball around 0, the series below
  // 2|z| = 1/64, the exp branch, saturation past 300, out of range) in every combination,
  // and random ones.
  using reference::detail::DytTerms;
  std::vector<DDBall> zs = {DDBall(NAN), DDBall(INFINITY), DDBall(-INFINITY), DDBall(0.0), DDBall(-0.0),
                            DDBall(1.0) - DDBall(3.0) * (DDBall(1.0) / DDBall(3.0)),  // a ball around 0
                            DDBall(0x1p-8), DDBall(-0.0078125), DDBall(0.0078125), DDBall(0.5) / DDBall(3.0), DDBall(-2.5),
                            DDBall(20.0) / DDBall(7.0), DDBall(299.9), DDBall(300.5), DDBall(-1e5), DDBall(0x1p-950)};
  std::mt19937_64 g(11);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int i = 0; i < 4000; ++i) zs.push_back(DDBall(std::ldexp(u(g), static_cast<int>(g() % 14) - 8)) * (DDBall(1.0) + DDBall(u(g)) / DDBall(3.0)));
  const auto single = [](const DDBall& z, DytTerms<DDBall>& t) {
    try {
      t = reference::detail::dyt_terms(z);
      return 0;
    } catch (const Uncertain& e) {
      return e.line;
    }
  };
  const auto same = [](const DytTerms<DDBall>& a, const DytTerms<DDBall>& b) {
    auto bits = [](double v) { std::uint64_t u; std::memcpy(&u, &v, 8); return u; };
    return bits(a.t.hi()) == bits(b.t.hi()) && bits(a.t.lo()) == bits(b.t.lo()) && bits(a.t.radius()) == bits(b.t.radius()) &&
           bits(a.s) == bits(b.s) && bits(a.sz) == bits(b.sz);
  };
  int paired = 0;
  for (std::size_t i = 0; i < zs.size(); ++i)
    for (std::size_t j : {i, (i + 1) % zs.size(), (i * 7 + 3) % zs.size(), std::size_t{0}, std::size_t{5}, std::size_t{9}}) {
      DytTerms<DDBall> s0, s1, p0, p1;
      const int u0 = single(zs[i], s0), u1 = single(zs[j], s1);
      bool threw = false;
      try {
        reference::detail::dyt_terms_pair(zs[i], zs[j], p0, p1);
      } catch (const Uncertain&) {
        threw = true;
      }
      INFO(i << " " << j << " " << zs[i].hi() << " " << zs[j].hi());
      REQUIRE(threw == (u0 != 0 || u1 != 0));
      if (threw) continue;
      REQUIRE(same(s0, p0));
      REQUIRE(same(s1, p1));
      paired += std::isfinite(zs[i].hi()) && std::isfinite(zs[j].hi()) && 2 * std::fabs(zs[i].hi()) >= 0.015625 &&
                2 * std::fabs(zs[j].hi()) >= 0.015625 && std::fabs(zs[i].hi()) < 300 && std::fabs(zs[j].hi()) < 300;
    }
  CHECK(paired > 10000);  // most pairs took exp_n<2>
}

TEST_CASE("ddball: the long double's tail from binary64 arithmetic equals the long double conversion's", "[reference][fastpath]") {
  // long_double_tail(ball, r64) against ExactOutput::tail_of(long double(ball), r64): both
  // decided -> the same tail; the binary64 form may decline (Uncertain) only where the ball
  // lies within its radius of a long double rounding boundary or of r64 itself at a power of
  // two. Balls: random double-words, double-words just above and below powers of two, long
  // double midpoints (exact, and with a radius), exact doubles, both signs.
  std::mt19937_64 g(17);
  std::uniform_real_distribution<double> u(1, 2);
  int decided = 0, declined = 0;
  auto one = [&](const DDBall& x) {
    double r64;
    try {
      r64 = static_cast<double>(x);
    } catch (const Uncertain&) {
      return;
    }
    float want;
    try {
      want = ExactOutput::tail_of(static_cast<long double>(x), r64);
    } catch (const Uncertain&) {
      return;  // the long double itself undecided: nothing to compare
    }
    try {
      const float got = reference::long_double_tail(x, r64);
      INFO(x.hi() << " " << x.lo() << " " << x.radius());
      REQUIRE(got == want);
      ++decided;
    } catch (const Uncertain&) {
      ++declined;
    }
  };
  for (int i = 0; i < 200000; ++i) {
    const int e = static_cast<int>(g() % 200) - 100;
    const double h = std::ldexp(i % 5 == 0 ? 1.0 : u(g), e) * (g() % 2 ? 1 : -1);
    const int k = static_cast<int>(g() % 30);
    // low parts: random, the long double grid's multiples and midpoints (2^-64, 2^-65 of h), tiny
    double l = std::ldexp(u(g) - 1.5, e - 53 - k % 4);
    if (k == 4) l = std::ldexp(static_cast<double>(static_cast<int>(g() % 4096) - 2048), e - 64);
    if (k == 5) l = std::ldexp(static_cast<double>(static_cast<int>(g() % 4096) - 2048) + 0.5, e - 64);
    if (k == 6) l = std::ldexp(static_cast<double>(static_cast<int>(g() % 4096) - 2048) + 0.5, e - 65);
    if (k == 7) l = 0;
    if (k == 8) l = std::ldexp(u(g), e - 120);
    const DDBall exact = DDBall(h) + DDBall(l);  // TwoSum: an exact double-word
    one(exact);
    one(exact * (DDBall(1.0) + DDBall(0x1p-90)));  // with a radius
    one(DDBall(h) * (DDBall(1.0) / DDBall(3.0)) * DDBall(3.0));  // near h, radius
  }
  INFO("decided " << decided << ", declined " << declined);
  CHECK(decided > 300000);
  CHECK(declined < decided / 50);
}

TEST_CASE("ddball: radii bound the error of every operation on random operands", "[reference][fastpath]") {
  // Each result's exact value (MPFR at 256 bits on the same midpoints) lies in the ball.
  using M = reference::detail::mp256;
  std::mt19937_64 g(42);
  std::uniform_real_distribution<double> u(-1, 1);
  std::uniform_int_distribution<int> e(-60, 60);
  auto val = [&] { return std::ldexp(u(g), e(g)); };
  int checked = 0;
  for (int i = 0; i < 20000; ++i) {
    const DDBall a = DDBall(val()) / DDBall(val()), b = DDBall(val()) + DDBall(val()) * DDBall(val());
    auto inside = [](const DDBall& z, const M& exact) { return abs(M(z.hi()) + M(z.lo()) - exact) <= M(z.radius()); };
    const DDBall sum = DDBall(a.hi()) + DDBall(b.hi()), prod = DDBall(a.hi()) * DDBall(b.hi());
    CHECK(inside(sum, M(a.hi()) + M(b.hi())));
    CHECK(inside(prod, M(a.hi()) * M(b.hi())));
    if (b.hi() != 0) { CHECK(inside(DDBall(a.hi()) / DDBall(b.hi()), M(a.hi()) / M(b.hi()))); }
    if (a.hi() > 0) { CHECK(inside(sqrt(DDBall(a.hi())), sqrt(M(a.hi())))); }
    // Balls with radii: the exact operation on any member lies in the result's ball.
    const M am = M(a.hi()) + M(a.lo()) + M(a.radius()) * M(u(g)), bm = M(b.hi()) + M(b.lo()) + M(b.radius()) * M(u(g));
    CHECK(inside(a + b, am + bm));
    CHECK(inside(a * b, am * bm));
    if (std::fabs(b.hi()) > 2 * b.radius()) { CHECK(inside(a / b, am / bm)); }
    ++checked;
  }
  CHECK(checked == 20000);
}

TEST_CASE("ddball: exp, expm1, tanh and cosh balls hold the exact values", "[reference][fastpath]") {
  // Against MPFR at 256 bits on the same midpoints (and on a random member of a ball with a
  // radius): z over [-600, 600] at every scale, tiny and near-zero z (expm1's series),
  // multiples of ln2, the points (k + 1/2) ln2/256 where the reduction's k and table index
  // change, and both sides of expm1's switch from its series to exp at |z| = 1/64. The balls
  // must also stay tight, or the certified path would decide little: a relative radius of at
  // most 2^-90 (the reduction of |z| ~ 600 alone costs 2^-94), so that long double's 2^-64 is
  // decided for all but ~2^-26 of values.
  using M = reference::detail::mp256;
  std::mt19937_64 g(7);
  std::uniform_real_distribution<double> u(-1, 1);
  std::uniform_int_distribution<int> e(-40, 9);
  int checked = 0, uncertain = 0;
  auto inside = [](const DDBall& z, const M& exact) { return abs(M(z.hi()) + M(z.lo()) - exact) <= M(z.radius()); };
  for (int i = 0; i < 20000; ++i) {
    double zv = i % 5 == 0 ? std::nearbyint(u(g) * 800) * 0.6931471805599453 : std::ldexp(u(g), e(g));
    if (i % 5 == 1) zv = (std::nearbyint(u(g) * 221000) + 0.5) * (0.6931471805599453 / 256) * (1 + 0x1p-45 * u(g));
    if (i % 5 == 2 && i % 3 == 0) zv = (u(g) < 0 ? -1 : 1) * std::ldexp(1 + 0x1p-30 * u(g), -6);
    zv = std::max(-600.0, std::min(600.0, zv));
    const DDBall z(zv);
    const M zm(zv);
    auto check = [&](auto f, auto exact_f, const DDBall& arg, const M& exact_arg) {
      try {
        const DDBall v = f(arg);  // may throw Uncertain (then MPFR decides: not an error)
        CHECK(inside(v, exact_f(exact_arg)));
        INFO("z " << arg.hi() << " v " << v.hi() << " log2(radius / |v|) " << std::log2(v.radius() / std::fabs(v.hi())));
        if (arg.radius() == 0 && v.hi() != 0) CHECK(v.radius() <= std::fabs(v.hi()) * 0x1p-90);
        ++checked;
      } catch (const Uncertain&) {
        if (std::fabs(zv) < 290) ++uncertain;  // tanh beyond: expm1(2z) leaves the range (MPFR's)
      }
    };
    namespace bm = boost::multiprecision;
    check([](const DDBall& v) { return exp(v); }, [](const M& v) { return M(bm::exp(v)); }, z, zm);
    check([](const DDBall& v) { return expm1(v); }, [](const M& v) { return M(bm::expm1(v)); }, z, zm);
    check([](const DDBall& v) { return tanh(v); }, [](const M& v) { return M(bm::tanh(v)); }, z, zm);
    check([](const DDBall& v) { return cosh(v); }, [](const M& v) { return M(bm::cosh(v)); }, z, zm);
    // A ball with a radius: the exact function of a member lies in the result's ball.
    const DDBall zb = DDBall(zv) * (DDBall(1.0) / DDBall(3.0)) * DDBall(3.0);
    const M member = M(zb.hi()) + M(zb.lo()) + M(zb.radius()) * M(u(g));
    check([](const DDBall& v) { return exp(v); }, [](const M& v) { return M(bm::exp(v)); }, zb, member);
    check([](const DDBall& v) { return tanh(v); }, [](const M& v) { return M(bm::tanh(v)); }, zb, member);
  }
  INFO(uncertain << " undecided in range");
  CHECK(uncertain == 0);
  CHECK(checked > 110000);
  // Exact and special arguments.
  CHECK(static_cast<double>(exp(DDBall(0.0))) == 1.0);
  CHECK(static_cast<double>(tanh(DDBall(-0.0))) == 0.0);
  CHECK(std::signbit(static_cast<double>(tanh(DDBall(-0.0)))));
  CHECK(static_cast<double>(tanh(DDBall(INFINITY))) == 1.0);
  CHECK(static_cast<double>(tanh(DDBall(-INFINITY))) == -1.0);
  CHECK(static_cast<double>(exp(DDBall(1.0))) == std::exp(1.0));  // glibc's exp is correctly rounded at 1
  CHECK_THROWS_AS(exp(DDBall(700.0)), Uncertain);
}

TEST_CASE("reference fast path: every bundled forward row-norm, fused, quantizing, group/instance/batch norm, l2/scale, ada, qk norm and dyt case, bit for bit", "[reference][fastpath]") {
  // The case files and the coverage matrix's quick tier (its regimes: huge values whose
  // squares overflow, tiny, subnormal, mixed, constant, zeros, non-finite), and its full tier
  // with NORMCHECK_EQUIV_FULL=1.
  std::int64_t problems = 0, rows_certified_before = reference::fast_path_counts().certified;
  std::vector<Case> all;
  for (const auto& file : find_case_files({test::source_path("cases")}))
    for (Case& cs : parse_case_file(file)) all.push_back(std::move(cs));
  for (Case& cs : coverage_matrix(std::getenv("NORMCHECK_EQUIV_FULL") ? Tier::full : Tier::quick)) all.push_back(std::move(cs));
  {
    for (const Case& cs : all) {
      const std::string file = cs.file;
      const Problem& p = cs.problem;
      if (!fast_op(p.op) || p.conv.direction != Direction::forward) continue;
      std::string first;
      INFO(file << " case " << cs.name);
      CHECK(differences(p, &first) == 0);
      if (!first.empty()) WARN(first);
      ++problems;
    }
  }
  CHECK(problems > 400);
  // The fast path decided rows here (the test exercised it, not only its fallback).
  CHECK(reference::fast_path_counts().certified - rows_certified_before > 1000);
}

TEST_CASE("reference fast path: random and adversarial rows, bit for bit", "[reference][fastpath]") {
  const std::int64_t rows = env_rows(3000);
  std::mt19937_64 g(env_seed(20261203));
  std::normal_distribution<double> normal(0, 1);
  enum class Data { normal, large_mean_tiny_spread, wide_exponents, near_constant, midpoint_ties };
  struct Kind {
    Data data;
    const char* name;
  };
  const Kind kinds[] = {{Data::normal, "normal"},
                        {Data::large_mean_tiny_spread, "large_mean_tiny_spread"},
                        {Data::wide_exponents, "wide_exponents"},
                        {Data::near_constant, "near_constant"},
                        {Data::midpoint_ties, "midpoint_ties"}};
  for (const Op opn : {Op::layer_norm, Op::rms_norm}) {
    for (DType dt : {DType::f32, DType::bf16, DType::f16, DType::f64}) {
      for (const Kind& kind : kinds) {
        const bool ties = kind.data == Data::midpoint_ties;
        const std::uint64_t before_c = reference::fast_path_counts().certified, before_r = reference::fast_path_counts().recomputed;
        std::int64_t done = 0, diffs = 0;
        std::string first;
        while (done < rows) {
          // ties: rows [5, 7] have n = -1, +1 exactly (eps 0), and gamma, beta put y on a midpoint.
          const std::int64_t m = ties ? 2 : std::uniform_int_distribution<std::int64_t>(1, 96)(g);
          const std::int64_t r = std::min<std::int64_t>(rows - done, 64);
          std::vector<double> x(static_cast<std::size_t>(r * m));
          const double center = std::ldexp(1.0, std::uniform_int_distribution<int>(4, 12)(g));
          for (std::size_t i = 0; i < x.size(); ++i) {
            double v = normal(g);
            switch (kind.data) {
              case Data::normal: break;
              case Data::large_mean_tiny_spread: v = center + v * 1e-3 * center; break;
              case Data::wide_exponents: v = std::ldexp(v, std::uniform_int_distribution<int>(-30, 30)(g)); break;
              case Data::near_constant: v = 3.0 + (i % 7 == 0 ? v * 1e-6 : 0.0); break;
              case Data::midpoint_ties: v = i % 2 == 0 ? 5.0 : 7.0; break;
            }
            x[i] = v;
          }
          Problem p = test::row_problem(opn, dt, Shape{r, m}, x);
          p.conv.eps = ties ? 0.0 : std::vector<double>{1e-5, 1e-6, 1e-12, 0.0, 1e-3}[done / 64 % 5];
          p.conv.eps_placement = static_cast<EpsPlacement>(done / 64 % 4);
          p.conv.variance = done / 64 % 3 == 1 ? Variance::unbiased : Variance::biased;
          if (m == 1) p.conv.variance = Variance::biased;
          p.conv.affine = static_cast<Affine>(done / 64 % 4);
          if (done / 64 % 7 == 3 && dt != DType::f64) p.conv.normalized_dtype = dt;
          if (p.conv.affine != Affine::none) {
            std::vector<double> gam(static_cast<std::size_t>(m)), bet(static_cast<std::size_t>(m));
            for (std::int64_t j = 0; j < m; ++j) {
              gam[j] = ties ? 0x1p-11 : 1 + 0.1 * normal(g);
              bet[j] = ties ? 1.0 : 0.1 * normal(g);  // y = 1 +- 2^-11: bf16/f16 midpoints
            }
            if (ties && dt == DType::f32) std::fill(gam.begin(), gam.end(), 0x1p-24);
            if (ties && dt == DType::f64) std::fill(gam.begin(), gam.end(), 0x1p-53);
            p.inputs["gamma"] = Tensor::from_doubles(dt, Shape{m}, gam);
            if (p.conv.affine == Affine::gamma_beta) p.inputs["beta"] = Tensor::from_doubles(dt, Shape{m}, bet);
          }
          try {
            (void)validate(p);
          } catch (const SpecError&) {
            done += r;
            continue;
          }
          std::string f;
          const std::int64_t d = differences(p, &f);
          if (d && first.empty()) first = f;
          diffs += d;
          done += r;
        }
        const auto c = reference::fast_path_counts().certified - before_c, rc = reference::fast_path_counts().recomputed - before_r;
        INFO(opn.name() << " " << dtype_name(dt) << " " << kind.name << ": " << c << " rows certified, " << rc << " recomputed; " << first);
        CHECK(diffs == 0);
        CHECK(c > 0);  // the fast path decided some of these rows (every kind has some it can)
      }
    }
  }
}

TEST_CASE("reference fast path: problems drawn for every op, dtype and regime, bit for bit", "[reference][fastpath]") {
  // Every op with the fast path, through its own sample rule (spec/sample.hpp: every data
  // regime, among them a large mean with a tiny spread, huge, tiny, subnormal, mixed, constant
  // and non-finite rows; every eps regime; the op's own convention choices), at random widths
  // 1..96 and group counts: NORMCHECK_EQUIV_ROWS normalization groups ("rows") per op and x
  // dtype (default 300). The run at scale is README's "Equivalence at scale".
  // NORMCHECK_EQUIV_OPS=dyt,layer_norm limits it to those ops (each must be one with the fast
  // path, and each is then required to have run: a typo cannot pass as "nothing to check").
  const std::int64_t want = env_rows(300);
  std::set<std::string> only;
  if (const char* e = std::getenv("NORMCHECK_EQUIV_OPS")) {
    std::string s = e;
    for (std::size_t b = 0; b <= s.size();) {
      const std::size_t c = std::min(s.find(',', b), s.size());
      if (c > b) only.insert(s.substr(b, c - b));
      b = c + 1;
    }
    REQUIRE(!only.empty());
  }
  // NORMCHECK_EQUIV_FROM=OP[:DTYPE] replays the stream up to that op (and x dtype) without
  // evaluating it: the problems from there on are those the whole run draws (a difference
  // found at scale is reproduced in minutes instead of hours).
  std::string from_op, from_dt;
  if (const char* e = std::getenv("NORMCHECK_EQUIV_FROM")) {
    const std::string s = e;
    from_op = s.substr(0, s.find(':'));
    if (s.find(':') != std::string::npos) from_dt = s.substr(s.find(':') + 1);
    REQUIRE(ops::find(from_op));
  }
  bool replaying = !from_op.empty();
  std::mt19937_64 g(env_seed(20261205));
  const auto& regimes = all_regimes();
  const auto& eps_regimes = all_eps_regimes();
  std::int64_t ops_checked = 0;
  std::set<std::string> ran;
  for (Op op : ops::all()) {
    if (!fast_op(op) || !op.def().sample) continue;
    if (!only.empty() && !only.count(std::string(op.name()))) continue;
    for (DType dt : {DType::f32, DType::bf16, DType::f16, DType::f64}) {
      if (replaying && op.name() == from_op && (from_dt.empty() || from_dt == dtype_name(dt))) replaying = false;
      if (!replaying) ran.insert(std::string(op.name()));
      const std::uint64_t before_c = reference::fast_path_counts().certified, before_r = reference::fast_path_counts().recomputed;
      std::int64_t rows = 0, diffs = 0, draws = 0, refused = 0;
      std::string first, first_dims;
      while (rows < want || draws < 20) {  // at least 20 problems: a dyt "row" is its whole normalized_shape
        Dims d;
        d.width = std::uniform_int_distribution<std::int64_t>(1, 96)(g);
        d.rows = std::uniform_int_distribution<std::int64_t>(1, 24)(g);
        d.x = dt;
        d.param = g() % 2 ? dt : DType::f32;
        d.regime = regimes[g() % regimes.size()];
        d.eps = eps_regimes[g() % eps_regimes.size()];
        d.default_convention = g() % 4 == 0;
        d.seed = g();
        Problem p;
        try {
          p = *draw_problem(op, d);
        } catch (const SpecError&) {
          ++refused;  // a point the op cannot be drawn at (its sample rule's refusal)
          if (refused > 1000 && draws == 0) break;
          continue;
        }
        ++draws;
        std::string f;
        const std::int64_t n = replaying ? 0 : differences(p, &f);
        if (n && first.empty()) {
          first = f;
          first_dims = d.str();
        }
        diffs += n;
        rows += std::max<std::int64_t>(1, p.x().size() / std::max<std::int64_t>(1, group_size(p)));
      }
      if (replaying) continue;  // (drawn, not evaluated: NORMCHECK_EQUIV_FROM)
      const auto c = reference::fast_path_counts().certified - before_c, rc = reference::fast_path_counts().recomputed - before_r;
      INFO(op.name() << " " << dtype_name(dt) << ": " << draws << " problems, " << rows << " rows; fast path units " << c
                     << " certified, " << rc << " recomputed; " << first << " at " << first_dims);
      if (std::getenv("NORMCHECK_EQUIV_REPORT"))
        WARN(op.name() << " " << dtype_name(dt) << ": " << draws << " problems, " << rows << " rows, " << c << " units certified, "
                       << rc << " recomputed in MPFR, " << diffs << " differences (NORMCHECK_EQUIV_SEED "
                       << (std::getenv("NORMCHECK_EQUIV_SEED") ? std::getenv("NORMCHECK_EQUIV_SEED") : "unset") << ")");
      CHECK(draws > 0);
      CHECK(diffs == 0);
      CHECK(c > 0);  // the fast path decided some of them
      ++ops_checked;
    }
  }
  if (!from_op.empty()) CHECK((!replaying && ops_checked > 0));  // the op (and dtype) named was reached
  else if (only.empty()) CHECK(ops_checked >= 4 * 12);
  else CHECK(ran == only);  // every op named ran (an unknown or slow-path-only name fails)
}

TEST_CASE("reference fast path: fused residual adds on random and adversarial rows, bit for bit", "[reference][fastpath]") {
  // h = x + residual (+ bias) rounded to the residual's dtype (or not), then the norm: rows
  // whose sum lands near a rounding boundary of h's dtype, cancelling sums, f32 residuals
  // beside bf16/f16 data.
  const std::int64_t rows = env_rows(3000) / 4;
  std::mt19937_64 g(env_seed(20261204));
  std::normal_distribution<double> normal(0, 1);
  for (const char* name : {"fused_add_rms_norm", "fused_add_layer_norm"}) {
    const Op op = *ops::find(name);
    for (DType dt : {DType::f32, DType::bf16, DType::f16, DType::f64}) {
      const std::uint64_t before = reference::fast_path_counts().certified;
      std::int64_t done = 0, diffs = 0;
      std::string first;
      while (done < rows) {
        const std::int64_t m = std::uniform_int_distribution<std::int64_t>(1, 80)(g), r = 16;
        std::vector<double> x(static_cast<std::size_t>(r * m)), res(x.size()), bias(static_cast<std::size_t>(m)), gam(bias);
        for (std::size_t i = 0; i < x.size(); ++i) {
          x[i] = normal(g);
          // Every third row cancels: residual = -x + a tiny part; every fifth sits a quarter
          // ulp of the data's dtype off x, so h's rounding is close to a boundary.
          const std::size_t row = i / static_cast<std::size_t>(m);
          res[i] = row % 3 == 0 ? -x[i] + 1e-3 * normal(g) : row % 5 == 0 ? std::ldexp(x[i], -10) : normal(g);
        }
        for (auto& v : bias) v = 0.1 * normal(g);
        for (auto& v : gam) v = 1 + 0.1 * normal(g);
        Problem p = test::row_problem(op, dt, Shape{r, m}, x);
        const DType rdt = done / r % 2 && dt != DType::f64 ? DType::f32 : dt;
        p.inputs["residual"] = Tensor::from_doubles(rdt, Shape{r, m}, res);
        if (done / r % 3 == 1) p.inputs["bias"] = Tensor::from_doubles(dt, Shape{m}, bias);
        p.conv.eps = std::vector<double>{1e-5, 1e-6, 0.0}[done / r % 3];
        p.conv.norm_input = done / r % 4 == 2 ? NormInput::unrounded : NormInput::rounded;
        p.conv.affine = done / r % 2 ? Affine::gamma : Affine::none;
        if (p.conv.affine == Affine::gamma) p.inputs["gamma"] = Tensor::from_doubles(dt, Shape{m}, gam);
        try {
          (void)validate(p);
        } catch (const SpecError&) {
          done += r;
          continue;
        }
        std::string f;
        const std::int64_t d = differences(p, &f);
        if (d && first.empty()) first = f;
        diffs += d;
        done += r;
      }
      INFO(name << " " << dtype_name(dt) << ": " << first);
      CHECK(diffs == 0);
      CHECK(reference::fast_path_counts().certified > before);
    }
  }
}

TEST_CASE("reference fast path: quantizing norms on random rows and exact ties, bit for bit", "[reference][fastpath]") {
  // Dynamic and static scales, both scale forms, every 8-bit format, saturation on and off,
  // both roundings, with and without a residual; every fourth batch of rows puts y / s on
  // exact ties (rows of +-1, eps 0, gamma = j + 1/2, static scale 1).
  const std::int64_t rows = env_rows(3000) / 4;
  std::mt19937_64 g(env_seed(20261205));
  std::normal_distribution<double> normal(0, 1);
  for (const char* name : {"rms_norm_quant", "layer_norm_quant"}) {
    const Op op = *ops::find(name);
    for (DType out : {DType::fp8_e4m3fn, DType::fp8_e5m2, DType::int8}) {
      std::int64_t done = 0, diffs = 0, batch = 0;
      std::string first;
      const std::uint64_t before = reference::fast_path_counts().certified;
      while (done < rows) {
        const bool ties = batch % 4 == 3;
        const std::int64_t m = ties ? 4 : std::uniform_int_distribution<std::int64_t>(2, 80)(g), r = 16;
        std::vector<double> x(static_cast<std::size_t>(r * m)), gam(static_cast<std::size_t>(m));
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = ties ? (i % 2 ? -1.0 : 1.0) : normal(g) * (1 + batch % 3);
        for (std::int64_t j = 0; j < m; ++j) gam[j] = ties ? static_cast<double>(j) + 0.5 : 1 + 0.2 * normal(g);
        const DType dt = batch % 2 ? DType::bf16 : DType::f32;
        Problem p = test::row_problem(op, dt, Shape{r, m}, x, ties ? 0.0 : 1e-5, Affine::gamma);
        p.out_dtype = out;
        p.inputs["gamma"] = Tensor::from_doubles(dt, Shape{m}, gam);
        p.conv.quant_scale = ties || batch % 3 == 1 ? QuantScale::static_per_tensor : QuantScale::dynamic_per_token;
        if (p.conv.quant_scale == QuantScale::static_per_tensor)
          p.inputs["scale"] = Tensor::from_doubles(DType::f32, Shape{1}, {ties ? 1.0 : 0.03125});
        p.conv.scale_form = !ties && batch % 5 == 2 ? ScaleForm::multiplier : ScaleForm::divisor;
        p.conv.rounding = batch % 2 ? Rounding::nearest_away : Rounding::nearest_even;
        p.conv.saturate = out == DType::int8 || batch % 7 != 4;
        if (!ties && batch % 4 == 1) p.inputs["residual"] = Tensor::from_doubles(dt, Shape{r, m}, std::vector<double>(x.size(), 0.25));
        ++batch;
        try {
          (void)validate(p);
        } catch (const SpecError& e) {
          FAIL(e.what());
        }
        std::string f;
        const std::int64_t d = differences(p, &f);
        if (d && first.empty()) first = f;
        diffs += d;
        done += r;
      }
      INFO(name << " " << dtype_name(out) << ": " << first);
      CHECK(diffs == 0);
      CHECK(reference::fast_path_counts().certified > before);
    }
  }
}

TEST_CASE("reference fast path: it decides nearly every row of activation-shaped data", "[reference][fastpath]") {
  // Rows of a model's activations (width 768, normal data, the conventions frameworks use):
  // the rate of rows left to MPFR, here from 4 x 512 rows per op and dtype, must be below
  // 1e-3 (README reports the rate measured on 10^7 rows).
  const std::int64_t rows = std::max<std::int64_t>(512, env_rows(3000) / 6), m = 768;
  std::mt19937_64 g(7);
  std::normal_distribution<double> normal(0, 1);
  for (const Op op : {Op::layer_norm, Op::rms_norm}) {
    for (DType dt : {DType::f32, DType::bf16, DType::f16, DType::f64}) {
      for (int conv = 0; conv < 4; ++conv) {
        std::vector<double> x(static_cast<std::size_t>(rows * m)), gam(static_cast<std::size_t>(m)), bet(static_cast<std::size_t>(m));
        for (auto& v : x) v = 2 * normal(g) + 0.1;
        for (auto& v : gam) v = 1 + 0.2 * normal(g);
        for (auto& v : bet) v = 0.1 * normal(g);
        Problem p = test::row_problem(op, dt, Shape{rows, m}, x, conv % 2 ? 1e-6 : 1e-5,
                                      std::array{Affine::gamma_beta, Affine::gamma, Affine::one_plus_w, Affine::none}[conv]);
        if (p.conv.affine != Affine::none) p.inputs["gamma"] = Tensor::from_doubles(dt, Shape{m}, gam);
        if (p.conv.affine == Affine::gamma_beta) p.inputs["beta"] = Tensor::from_doubles(dt, Shape{m}, bet);
        if (conv == 1 && dt != DType::f64) p.conv.normalized_dtype = dt;  // Hugging Face's LlamaRMSNorm
        if (conv == 3) p.conv.eps_placement = EpsPlacement::outside_sqrt;
        const auto before = reference::fast_path_counts();
        (void)reference::evaluate_exact(p);
        const auto after = reference::fast_path_counts();
        const auto c = after.certified - before.certified, rc = after.recomputed - before.recomputed;
        INFO(op.name() << " " << dtype_name(dt) << " convention " << conv << ": " << c << " certified, " << rc << " recomputed");
        CHECK(c + rc == static_cast<std::uint64_t>(rows));
        CHECK(static_cast<double>(rc) <= 1e-3 * static_cast<double>(rows));
      }
    }
  }
  // The quantizing norms with a dynamic per-token scale: in bf16/f16 a row's largest |y| is
  // often shared by two elements (equal or opposite x: 8 or 11 bits), whose equal balls no
  // comparison can order; 14% of bf16 rows went to MPFR before quant_row took such a pair's
  // ball as the maximum without ordering them.
  for (const char* name : {"rms_norm_quant", "layer_norm_quant"})
    for (DType dt : {DType::f32, DType::bf16, DType::f16})
      for (DType out : {DType::int8, DType::fp8_e4m3fn}) {
        const Op op = *ops::find(name);
        std::vector<double> x(static_cast<std::size_t>(rows * m)), gam(static_cast<std::size_t>(m), 1.0);
        for (auto& v : x) v = 2 * normal(g) + 0.1;
        Problem p = test::row_problem(op, dt, Shape{rows, m}, x, 1e-5, Affine::gamma);
        p.inputs["gamma"] = Tensor::from_doubles(dt, Shape{m}, gam);  // gamma = 1: y's ties are x's
        p.out_dtype = out;
        p.conv.quant_scale = QuantScale::dynamic_per_token;
        const auto before = reference::fast_path_counts();
        (void)reference::evaluate_exact(p);
        const auto after = reference::fast_path_counts();
        const auto c = after.certified - before.certified, rc = after.recomputed - before.recomputed;
        INFO(name << " " << dtype_name(dt) << " into " << dtype_name(out) << ": " << c << " certified, " << rc << " recomputed");
        CHECK(c + rc == static_cast<std::uint64_t>(rows));
        CHECK(static_cast<double>(rc) <= 1e-3 * static_cast<double>(rows));
      }
}

TEST_CASE("ddball: every output ball of a row holds the MPFR value", "[reference][fastpath]") {
  // Rigor where bit equality cannot see it: a ball can round right by luck with a radius
  // that is too small. Here the exact value (MPFR, 512 bits) of every y, cond, mean and rstd
  // of random rows must lie within the ball's radius.
  using M = reference::detail::mp512;
  std::mt19937_64 g(99);
  std::normal_distribution<double> nd(0, 1);
  std::int64_t outside = 0, checked = 0;
  for (int t = 0; t < 4000; ++t) {
    const std::int64_t m = 1 + t % 37;
    const bool center = t % 2 == 0;
    std::vector<DDBall> x(m), y(m), ga(m), be(m);
    std::vector<M> xm(m), ym(m), gm(m), bm(m);
    std::vector<double> cond(m), condm(m);
    const double scale = std::ldexp(1.0, static_cast<int>(t % 41) - 20), shift = t % 3 == 0 ? 1000.0 * scale : 0.0;
    for (std::int64_t j = 0; j < m; ++j) {
      const double v = round_to(DType::f32, shift + scale * nd(g)), gg = round_to(DType::f32, 1 + 0.1 * nd(g)), b = round_to(DType::f32, 0.1 * nd(g));
      x[j] = v; xm[j] = v; ga[j] = gg; gm[j] = gg; be[j] = b; bm[j] = b;
    }
    Convention c;
    c.eps = std::array{1e-5, 1e-6, 1e-12, 0.0, 1e-3}[t / 5 % 5];
    c.eps_placement = static_cast<EpsPlacement>(t / 25 % 4);
    c.variance = t / 100 % 2 && m > 1 ? Variance::unbiased : Variance::biased;
    c.affine = static_cast<Affine>(t / 200 % 4);
    reference::GroupStatistics<DDBall> st;
    reference::GroupStatistics<M> sm;
    try {
      reference::normalize_group(x.data(), m, center, c, ga.data(), be.data(), y.data(), cond.data(), static_cast<const DDBall*>(nullptr), &st);
    } catch (const Uncertain&) {
      continue;  // cond's conversion to double could not decide: nothing to check
    }
    reference::normalize_group(xm.data(), m, center, c, gm.data(), bm.data(), ym.data(), condm.data(), static_cast<const M*>(nullptr), &sm);
    auto holds = [&](const DDBall& b, const M& e) {
      ++checked;
      if (std::isnan(b.hi()) || boost::multiprecision::isnan(e)) return std::isnan(b.hi()) == static_cast<bool>(boost::multiprecision::isnan(e));
      if (std::isinf(b.hi()) || boost::multiprecision::isinf(e)) return M(b.hi()) == e;
      return abs(M(b.hi()) + M(b.lo()) - e) <= M(b.radius());
    };
    const std::int64_t before = outside;
    for (std::int64_t j = 0; j < m; ++j) outside += !holds(y[j], ym[j]);
    outside += !holds(st.mean, sm.mean) + !holds(st.rstd, sm.rstd);
    for (std::int64_t j = 0; j < m; ++j)
      outside += !(std::isnan(cond[j]) && std::isnan(condm[j])) && !(std::fabs(cond[j] - condm[j]) <= (m + 16) * 0x1p-52 * std::fabs(condm[j]));
    if (outside > before)
      WARN(fmt::format("row {} (m {}, centered {}, eps {}, placement {}, affine {}): y[0] {:.17g} r {:.3g} exact {:.20g}; mean r {:.3g}; rstd {:.17g} r {:.3g} exact {:.20g}; cond[0] {:.17g} vs {:.17g}", t, m, center, c.eps,
                       static_cast<int>(c.eps_placement), static_cast<int>(c.affine), y[0].hi(), y[0].radius(), static_cast<double>(ym[0]), st.mean.radius(), st.rstd.hi(), st.rstd.radius(), static_cast<double>(sm.rstd), cond[0], condm[0]));
  }
  CHECK(checked > 20000);
  CHECK(outside == 0);
}

TEST_CASE("ddball: row_moments' balls hold the exact mean, variance and differences", "[reference][fastpath]") {
  // The fused moments (ball.hpp row_moments) against MPFR at 512 bits on random rows: wide
  // exponents, a large mean with a tiny spread, exact zeros of both signs; every ball holds
  // the exact value and an exact zero difference keeps IEEE's sign, as the generic add.
  using M = reference::detail::mp512;
  std::mt19937_64 g(9);
  std::normal_distribution<double> nd(0, 1);
  int checked = 0;
  for (int t = 0; t < 3000; ++t) {
    const std::int64_t m = 1 + t % 97;
    std::vector<double> x(static_cast<std::size_t>(m));
    for (auto& v : x) {
      switch (t % 3) {
        case 0: v = std::ldexp(nd(g), std::uniform_int_distribution<int>(-30, 30)(g)); break;
        case 1: v = 4096 + 1e-6 * nd(g); break;
        default: v = g() % 3 == 0 ? (g() % 2 ? -0.0 : 0.0) : nd(g); break;
      }
    }
    const bool center = t % 2 == 0;
    std::vector<DDBall> xb(x.begin(), x.end()), d(x.size());
    DDBall mu, v;
    try {
      REQUIRE(row_moments(xb.data(), m, center, m, mu, v, d.data()));
    } catch (const Uncertain&) {
      continue;
    }
    M mum = 0, ss = 0;
    if (center) {
      for (double a : x) mum += M(a);
      mum /= M(m);
    }
    for (double a : x) ss += (M(a) - mum) * (M(a) - mum);
    const auto holds = [](const DDBall& b, const M& e) { return abs(M(b.hi()) + M(b.lo()) - e) <= M(b.radius()); };
    CHECK(holds(mu, mum));
    CHECK(holds(v, ss / M(m)));
    for (std::int64_t j = 0; j < m; ++j) {
      CHECK(holds(d[j], M(x[j]) - mum));
      if (x[j] == 0 && !center) CHECK(std::signbit(d[j].hi()) == std::signbit(x[j]));
    }
    ++checked;
  }
  CHECK(checked > 2500);
}

TEST_CASE("reference fast path: NORMCHECK_NO_FMA runs it without the FMA instruction", "[reference][fastpath]") {
  // ctest's reference_fast_path_no_fma runs this file's tests with NORMCHECK_NO_FMA=1: the
  // certified path then takes Dekker's TwoProduct in its build without FMA (ball.hpp
  // NC_BALL_PLAIN), the path of a CPU without FMA3; every other test here must still find 0
  // differences. Without the variable: the FMA wherever the CPU has one.
  if (std::getenv("NORMCHECK_NO_FMA")) {
    CHECK_FALSE(reference::dd::kHardwareFma);
  } else {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__FMA__)
    __builtin_cpu_init();
    CHECK(reference::dd::kHardwareFma == (__builtin_cpu_supports("fma") != 0));
#else
    SUCCEED("FMA decided at compile time");
#endif
  }
}

TEST_CASE("reference: a result within 2^-P of a rounding boundary is rounded from more bits (batch_norm running_var)", "[reference][fastpath]") {
  // Found by the equivalence run at scale (NORMCHECK_EQUIV_SEED=6): momentum none with 3
  // batches tracked (a = 1/4), x subnormal, so channel 7's running_var is
  // 0.75 * 0x1.35adc6p+1 = 0x1.d084a9p+0 (a binary32 midpoint) plus 0.25 v_u, v_u ~ 2^-297:
  // above the midpoint, so binary32 rounds it up. At P = 256 bits MPFR lost v_u and rounded the
  // midpoint to even (0x1.d084a8p+0); the fast path's double-double kept it.
  // (The draw found it; its momentum and running_var[7] are set here since the draw's list
  // of momenta grew: subnormal channels whatever the momentum, the midpoint from these.)
  Problem p = drawn(Op::batch_norm, 2, 10, DType::f32, DType::f32, "subnormal", "typical", 7428169574193895203ull);
  REQUIRE(p.conv.training);
  REQUIRE(p.conv.track_running_stats);
  p.conv.momentum.reset();
  p.conv.num_batches_tracked = 3;
  p.inputs.at("running_var").set(7, 0x1.35adc6p+1);
  REQUIRE_NOTHROW(validate(p));
  for (bool fast : {false, true}) {
    INFO("fast path " << fast);
    reference::set_fast_path(fast);
    const ExactOutputs o = reference::evaluate_exact(p);
    CHECK(o.at("running_var").rounded_at(7) == 0x1.d084aap+0);
    CHECK(o.at("running_var").exact64[7] == 0x1.d084a9p+0);  // the binary64 rounding is the midpoint itself
  }
  reference::set_fast_path(true);
  CHECK(differences(p) == 0);
}

TEST_CASE("reference: the MPFR path's rounding tests find the boundaries, and MPFR values near them", "[reference]") {
  using reference::is_binary64_midpoint;
  using reference::is_midpoint_of;
  // midpoints of binary32 (normal, negative, between subnormals), bfloat16, binary16's overflow threshold
  CHECK(is_midpoint_of(DType::f32, 0x1.d084a9p+0));
  CHECK(is_midpoint_of(DType::f32, -0x1.000001p-3));
  CHECK(is_midpoint_of(DType::f32, 0x1.8p-149));
  CHECK(is_midpoint_of(DType::bf16, 0x1.03p+0));
  CHECK(is_midpoint_of(DType::f16, 65520.0));
  // values of the format, a quarter step, a midpoint of a narrower format only
  CHECK_FALSE(is_midpoint_of(DType::f32, 0x1.d084a8p+0));
  CHECK_FALSE(is_midpoint_of(DType::f32, 0x1.d084a88p+0));
  CHECK_FALSE(is_midpoint_of(DType::bf16, 0x1.018p+0));
  CHECK_FALSE(is_midpoint_of(DType::f32, 0x1.03p+0));
  CHECK_FALSE(is_midpoint_of(DType::f16, 65519.0));
  // binary64 midpoints as long doubles (next to r), below a power of two too
  CHECK(is_binary64_midpoint(1.0L + 0x1p-53L, 1.0));
  CHECK(is_binary64_midpoint(16.0L - 0x1p-50L, 16.0));
  CHECK(is_binary64_midpoint(0x1.8p-1074L, 0x1p-1074));
  CHECK(is_binary64_midpoint(-1.0L + 0x1p-54L, -1.0));  // toward zero from a negative power of two: tail +2^-54
  CHECK(is_binary64_midpoint(0x1p1024L - 0x1p970L, 0x1.fffffffffffffp1023));  // the overflow threshold  // between binary64 subnormals (an f64 output keeps the long double)
  CHECK_FALSE(is_binary64_midpoint(1.0L + 0x1p-54L, 1.0));
  CHECK_FALSE(is_binary64_midpoint(16.0L - 0x1p-51L, 16.0));
  CHECK_FALSE(is_binary64_midpoint(1.0L, 1.0));
  // An MPFR value within 2^-(P/2) of a midpoint is noted as undecided, one beyond it is not.
  using reference::detail::mp256;
  const std::uint64_t n0 = reference::undecided_roundings();
  reference::detail::check_rounding(mp256(0x1.d084a9p+0) + mp256(0x1p-298), DType::f32);  // (at 256 bits: the midpoint itself)
  CHECK(reference::undecided_roundings() == n0 + 1);
  reference::detail::check_rounding(mp256(0x1.d084a9p+0) + mp256(0x1p-200), DType::f32);  // within 2^-128, beside it
  CHECK(reference::undecided_roundings() == n0 + 2);
  reference::detail::check_rounding(mp256(0x1.d084a9p+0) + mp256(0x1p-100), DType::f32);
  reference::detail::check_rounding(mp256(1.0) + mp256(0x1p-53) + mp256(0x1p-100), DType::f64);
  CHECK(reference::undecided_roundings() == n0 + 2);
  reference::detail::check_rounding(mp256(1.0) + mp256(0x1p-53) - mp256(0x1p-200), DType::f64);
  CHECK(reference::undecided_roundings() == n0 + 3);
}

TEST_CASE("reference: normalized_dtype's boundary grant is decided alike on both paths", "[reference][fastpath][normalized_dtype]") {
  // Found by the equivalence run at scale (NORMCHECK_EQUIV_SEED=19) the day the grant was
  // written: y.cond[71] 8289.7 on one path, 97.7 on the other (w = 5, 23 rows, bf16, shifted,
  // eps 0). The side of round(n) on which n lay was read from n's binary64 value, which the
  // two paths may round apart; it is now a comparison of the exact n in T.
  const Problem p = drawn(*ops::find("layer_norm"), 5, 23, DType::bf16, DType::f32, "shifted", "zero", 1937238856133328777ull);
  REQUIRE(p.conv.normalized_dtype.has_value());
  std::string first;
  CHECK(differences(p, &first) == 0);
  INFO(first);
}

TEST_CASE("reference: the dynamic scale's condition magnitude is the row's largest, on both paths (near-tied maxima)", "[reference][fastpath]") {
  // Found by the equivalence run at scale (NORMCHECK_EQUIV_SEED=17): layer_norm_quant f16
  // with an f32 residual of subnormals; row 8's |y_0|, |y_1| and |y_4| tie to 1e-38 relative,
  // which MPFR separates and the ball path cannot, so the argmax's own condition magnitude
  // differed between them (9.52e-5 vs 1.16e-4 for the scale). The max of |y| moves by at most
  // the largest change of one y_j: c_s = s (max_j c_j / amax + 1) on both.
  const Problem p = drawn(*ops::find("layer_norm_quant"), 8, 21, DType::f16, DType::f16, "subnormal", "comparable", 12278542597539599246ull);
  REQUIRE(p.inputs.count("residual") == 1);
  REQUIRE(p.conv.quant_scale == QuantScale::dynamic_per_token);
  std::string first;
  CHECK(differences(p, &first) == 0);
  INFO(first);
  // Row 8: the scale's magnitude is s (max_j c_j / amax + 1) from the row's own magnitudes
  // (the norm's c_j, divided out of y's: c_v = (c_j + |y_j| c_a / amax) / s + |v_j|, so
  // c_v s - |v_j| s = c_j + |y_j| c_a / amax), within the kept magnitudes' binary32 step.
  reference::set_fast_path(false);
  const ExactOutputs o = reference::evaluate_exact(p);
  const ExactOutput& sc = o.at("scale");
  const ExactOutput& y = o.at("y");
  const double s = static_cast<double>(sc.exact_at(8)), qmax = 57344.0;  // e5m2
  REQUIRE(p.out_dtype == DType::fp8_e5m2);
  const double amax = s * qmax, c_s = sc.cond[8];
  const double c_a = (c_s / s - 1) * amax;  // the c_a the scale was formed with
  double largest = 0;
  for (std::int64_t j = 0; j < 8; ++j) {
    const double v = std::fabs(static_cast<double>(y.exact_at(8 * 8 + j)));
    const double c_j = (y.cond[static_cast<std::size_t>(8 * 8 + j)] - v) * s - v * s * c_a / amax;  // this element's own c_j
    largest = std::max(largest, c_j);
  }
  CHECK(largest == Approx(c_a).epsilon(1e-5));  // c_a is the largest c_j (the argmax's own was 4.12 where the largest is 5.33)
  reference::set_fast_path(true);
}
