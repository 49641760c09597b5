// normcheck fuzz (issue 12): the ops' sample rules draw valid problems over every dimension,
// draws are deterministic, the cpu kernels meet the default gate on random draws, and every
// mutant is found and shrunk to a small case that the correct kernels pass.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <set>

#include "backends/registry.hpp"
#include "checks/runner.hpp"
#include "ops/reference.hpp"
#include "ops/registry.hpp"
#include "run/fuzz.hpp"
#include "spec/op.hpp"
#include "spec/sample.hpp"

using namespace normcheck;

namespace {

std::vector<std::unique_ptr<Backend>> one(const std::string& name) {
  std::vector<std::unique_ptr<Backend>> v;
  v.push_back(make_backend(name));
  return v;
}

Status status_on(const std::string& backend, const Case& cs) {
  auto be = one(backend);
  const auto r = run_cases({cs}, be, {});
  REQUIRE(r.size() == 1);
  return r.front().status;
}

}  // namespace

TEST_CASE("sample: every op draws valid problems at every regime, eps regime, dtype and small width", "[fuzz][sample]") {
  std::int64_t draws = 0;
  for (Op op : ops::all()) {
    INFO(op.name());
    REQUIRE(op.def().sample != nullptr);  // every op of the table can be drawn
    for (Regime r : all_regimes())
      for (EpsRegime e : all_eps_regimes())
        for (DType x : {DType::f64, DType::f32, DType::f16, DType::bf16})
          for (std::int64_t w : {1, 2, 3, 17})
            for (bool defaults : {false, true}) {
              Dims d;
              d.width = w;
              d.rows = w == 17 ? 3 : 1;
              d.x = d.param = x;
              d.regime = r;
              d.eps = e;
              d.default_convention = defaults;
              d.backward = op.def().has_backward() && w == 3;
              d.seed = static_cast<std::uint64_t>(draws) + 1;
              INFO(d.str());
              ValidProblem vp = draw_problem(op, d);  // throws SpecError on an invalid draw
              CHECK(vp->x().size() >= 1);
              ++draws;
            }
  }
  CHECK(all_regimes().size() == 11);  // constant_huge included
  CHECK(draws == static_cast<std::int64_t>(ops::all().size()) * 11 * 5 * 4 * 4 * 2);
}

TEST_CASE("sample: a draw is a function of its dims, and the regimes put what they say in x", "[fuzz][sample]") {
  Dims d;
  d.width = 9;
  d.rows = 2;
  d.seed = 77;
  const Op ln = *ops::find("layer_norm");
  const ValidProblem a = draw_problem(ln, d), b = draw_problem(ln, d);
  REQUIRE(a->inputs.size() == b->inputs.size());
  for (const auto& [name, t] : a->inputs) {
    const Tensor& u = b->inputs.at(name);
    REQUIRE(t.nbytes() == u.nbytes());
    CHECK(std::memcmp(t.data(), u.data(), t.nbytes()) == 0);
  }
  d.regime = Regime::huge;
  for (double v : draw_problem(ln, d)->x().to_doubles()) CHECK(std::abs(v) * std::abs(v) > 0x1.fffffep127);
  d.regime = Regime::subnormal;
  for (double v : draw_problem(ln, d)->x().to_doubles()) CHECK(std::abs(v) < 0x1p-126);
  d.regime = Regime::constant;
  const auto c = draw_problem(ln, d)->x().to_doubles();
  for (std::size_t j = 0; j < 9; ++j) CHECK(c[j] == c[0]);
  d.regime = Regime::constant_huge;  // one value per row at 2^117 N(0, 1) (f32)
  const auto h = draw_problem(ln, d)->x().to_doubles();
  for (std::size_t j = 0; j < 9; ++j) CHECK(h[j] == h[0]);
  for (std::size_t j = 9; j < 18; ++j) CHECK(h[j] == h[9]);
  CHECK(std::abs(h[0]) > 0x1p100);
  CHECK(std::abs(h[0]) < 0x1p127);
  d.placement = EpsPlacement::clamp_norm;  // Dims::placement wins over the op's own draw
  CHECK(draw_problem(ln, d)->conv.eps_placement == EpsPlacement::clamp_norm);
  d.placement.reset();
  d.regime = Regime::nonfinite;
  int bad = 0;
  for (double v : draw_problem(ln, d)->x().to_doubles()) bad += !std::isfinite(v);
  CHECK(bad == 1);
  FuzzOptions opt;
  opt.seed = 5;
  for (std::int64_t i = 0; i < 50; ++i) {
    const auto [op1, d1] = fuzz_draw(opt, i);
    const auto [op2, d2] = fuzz_draw(opt, i);
    CHECK(op1 == op2);
    CHECK(d1.str() == d2.str());
    CHECK((d1.width * d1.rows <= (1 << 15) || (d1.rows > 65535 && d1.width <= 3)));
  }
}

TEST_CASE("sample: the regimes hold per normalization group of every op (one value, one mean)", "[fuzz][sample]") {
  // batch_norm's groups are channels across the batch, not the sampler's contiguous runs: its
  // "constant" draws had held several values per channel (variance > 0), and its "shifted"
  // channels means of both signs (no cancellation), so no matrix point gave it a channel of
  // variance 0 with a huge value (false-pass audit, 2026-12-07); group_norm with several
  // channels per group and axes = [0] likewise.
  for (Op op : ops::all()) {
    for (Regime r : {Regime::shifted}) {
      Dims d;
      d.width = 12;
      d.rows = 3;
      d.regime = r;
      for (std::uint64_t seed = 1; seed <= 8; ++seed) {
        d.seed = seed;
        const ValidProblem vp = draw_problem(op, d);
        const Tensor& x = vp->inputs.at(std::string(op.def().primary_input));
        const ReductionLayout g = group_layout(*vp);
        INFO(op.name() << " " << d.str());
        for (std::int64_t b : g.base)
          for (std::int64_t m : g.member) CHECK(std::signbit(x.get(b + m)) == std::signbit(x.get(b + g.member.front())));
      }
    }
    for (Regime r : {Regime::constant, Regime::constant_huge})
      for (std::int64_t w : {2, 4, 8, 12})
        for (std::uint64_t seed = 1; seed <= 6; ++seed) {
          Dims d;
          d.width = w;
          d.rows = 3;
          d.regime = r;
          d.seed = seed;
          const ValidProblem vp = draw_problem(op, d);
          const Tensor& x = vp->inputs.at(std::string(op.def().primary_input));
          const ReductionLayout g = group_layout(*vp);
          INFO(op.name() << " " << d.str());
          REQUIRE(!g.base.empty());
          for (std::int64_t b : g.base)
            for (std::int64_t m : g.member) CHECK(x.get(b + m) == x.get(b + g.member.front()));
        }
  }
}

TEST_CASE("fuzz: the cpu kernels meet the default gate on 300 draws of every op", "[fuzz]") {
  // The kernel faults fuzzing found (binary64 rows of tiny values whose eps s^2 overflowed,
  // squares underflowing to ss = 0, constant rows centred by a rounded mean, dy x overflowing
  // before sech^2 = 0, a residual sum rounded twice, one lane's sum of squares rounding the
  // same way 512 times, a dynamic scale below binary32's range) stay fixed.
  auto be = one("cpu");
  FuzzOptions opt;
  opt.seed = 1;
  opt.count = 300;
  opt.keep_going = true;
  opt.shrink_evaluations = 0;
  const FuzzReport rep = fuzz(be, opt);
  CHECK(rep.evaluated == 300);
  for (const auto& f : rep.failures) UNSCOPED_INFO("draw " << f.draw << ": " << f.op.name() << " " << f.dims.str() << ": " << f.message);
  CHECK(rep.failures.empty());
}

TEST_CASE("fuzz: every mutant is found within 400 draws of its ops and shrunk to at most 256 values the correct kernels pass", "[fuzz][mutant]") {
  for (const MutantDef* m : ops::mutants()) {
    const std::string name = "mutant:" + std::string(m->name);
    INFO(name);
    auto be = one(name);
    FuzzOptions opt;
    opt.seed = 1;
    opt.count = 400;
    opt.ops = ops::mutant_ops(*m);  // the ops that register the mutant (normcheck fuzz --op ...)
    REQUIRE(!opt.ops.empty());
    opt.shrink_evaluations = 300;
    const FuzzReport rep = fuzz(be, opt);
    REQUIRE(rep.failures.size() == 1);
    const FuzzFailure& f = rep.failures.front();
    INFO(f.op.name() << " " << f.shrunk_dims.str() << ": " << f.message);
    // Small, but for a fault that needs more rows than a launch grid's limit.
    CHECK((f.shrunk.problem.x().size() <= 256 || f.shrunk.problem.x().shape()[0] > 65535));
    CHECK(f.shrunk.problem.x().size() <= f.original.problem.x().size());
    // The shrunk case discriminates: it still fails on the mutant and passes on the kernels
    // that are right, so the finding is the mutant's fault and not the draw's.
    CHECK(status_on(name, f.shrunk) == f.status);
    CHECK(status_on("cpu", f.shrunk) == Status::passed);
    CHECK(status_on("reference", f.shrunk) == Status::passed);
  }
}

TEST_CASE("fuzz: the shrunk case file parses back to the same problem, with the exact expected values", "[fuzz]") {
  auto be = one("mutant:tail_unnormalized");
  FuzzOptions opt;
  opt.seed = 3;
  opt.count = 200;
  opt.ops = {*ops::find("layer_norm")};
  const FuzzReport rep = fuzz(be, opt);
  REQUIRE(rep.failures.size() == 1);
  const FuzzFailure& f = rep.failures.front();
  const std::string text = fuzz_case_file(f, "mutant:tail_unnormalized", "normcheck fuzz ...");
  INFO(text);
  const auto cases = parse_case_text(text, "fuzz.toml");
  REQUIRE(cases.size() == 1);
  const Case& c = cases.front();
  CHECK(c.name == f.name);
  const Problem& a = c.problem;
  const Problem& b = f.shrunk.problem;
  CHECK(a.op == b.op);
  CHECK(a.out_dtype == b.out_dtype);
  REQUIRE(a.inputs.size() == b.inputs.size());
  for (const auto& [name, t] : b.inputs) {
    INFO(name);
    const auto u = a.inputs.at(name).to_doubles(), v = t.to_doubles();
    REQUIRE(u.size() == v.size());
    for (std::size_t i = 0; i < u.size(); ++i) CHECK((u[i] == v[i] || (std::isnan(u[i]) && std::isnan(v[i]))));
  }
  REQUIRE(c.expected.has_value());
  const auto ex = reference::evaluate_exact(validate(b)).at("y").exact_f64();
  REQUIRE(c.expected->size() == ex.size());
  for (std::size_t i = 0; i < ex.size(); ++i) CHECK(((*c.expected)[i] == ex[i] || (std::isnan(ex[i]) && std::isnan((*c.expected)[i]))));
  CHECK(status_on("mutant:tail_unnormalized", c) == Status::failed);
  CHECK(status_on("cpu", c) == Status::passed);
}
