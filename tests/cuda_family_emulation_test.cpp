// The CUDA family kernels (group_norm / instance_norm, batch_norm; src/kernels/cuda/family.cu)
// run on the CPU through their emulation (src/kernels/cuda/emulate_family.hpp: the device
// driver's host code, the same per-group code and reduction tree as the device), every
// output judged against the exact reference by the default gate. With a CUDA device present,
// the device's outputs must equal the emulation bit for bit (NaN payloads aside).
// Built with -ffp-contract=off (tests/CMakeLists.txt), as the kernels are with --fmad=false.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "cases/case.hpp"
#include "checks/budget.hpp"
#include "checks/runner.hpp"
#include "checks/metrics.hpp"
#include "kernels/cuda/emulate_family.hpp"
#include "ops/reference.hpp"
#ifdef NORMCHECK_HAVE_CUDA
#include "kernels/cuda/family.hpp"
#include "kernels/cuda/row_norm.hpp"
#endif

using namespace normcheck;
namespace kc = normcheck::kernels::cuda;

namespace {

enum class Fill { normal, shifted, tiny_var, huge, subnormal, constant };

std::vector<double> fill(std::size_t n, Fill f, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> n01;
  std::vector<double> v(n);
  for (auto& e : v) {
    switch (f) {
      case Fill::normal: e = n01(rng); break;
      case Fill::shifted: e = 1e4 + n01(rng); break;
      case Fill::tiny_var: e = 1.0 + 1e-3 * n01(rng); break;
      case Fill::huge: e = 1e37 * n01(rng); break;       // squares overflow binary32
      case Fill::subnormal: e = 1e-41 * n01(rng); break;  // squares underflow binary32
      case Fill::constant: e = 5.0; break;
    }
  }
  return v;
}

void add_affine(Problem& p, std::int64_t c) {
  if (p.conv.affine == Affine::none) return;
  std::vector<double> g(static_cast<std::size_t>(c)), b(static_cast<std::size_t>(c));
  for (std::int64_t j = 0; j < c; ++j) {
    g[j] = (p.conv.affine == Affine::one_plus_w ? 0.0 : 1.0) + 0.0625 * static_cast<double>(j % 7) - 0.125;
    b[j] = 0.01 * static_cast<double>(j % 5) - 0.02;
  }
  const bool f64 = p.x().dtype() == DType::f64;
  p.inputs["gamma"] = Tensor::from_doubles(f64 ? DType::f64 : DType::bf16, {c}, g);
  if (p.conv.affine == Affine::gamma_beta) p.inputs["beta"] = Tensor::from_doubles(f64 ? DType::f64 : DType::f32, {c}, b);
}

/// group_norm (G groups) or instance_norm of x [N, C, spatial].
Problem gn(Op op, DType xt, DType yt, std::int64_t n, std::int64_t c, std::int64_t spatial, std::int64_t groups,
           Fill f = Fill::normal, Affine af = Affine::gamma_beta, unsigned seed = 1) {
  Problem p;
  p.op = op;
  p.out_dtype = yt;
  p.conv.affine = af;
  p.conv.acc_dtype = xt == DType::f64 ? DType::f64 : DType::f32;
  if (op == Op::group_norm) p.conv.num_groups = groups;
  p.inputs["x"] = Tensor::from_doubles(xt, {n, c, spatial}, fill(static_cast<std::size_t>(n * c * spatial), f, seed));
  add_affine(p, c);
  validate(p);
  return p;
}

struct BnMode {
  bool training = true, track = true;
  std::optional<double> momentum = 0.1;
  std::int64_t steps = 0;  // > 0: `sequence` with this many calls
};

Problem bn(DType xt, DType yt, std::int64_t n, std::int64_t c, std::int64_t spatial, const BnMode& m, Fill f = Fill::normal,
           Affine af = Affine::gamma_beta, unsigned seed = 1) {
  Problem p;
  p.op = Op::batch_norm;
  p.out_dtype = yt;
  p.conv.affine = af;
  p.conv.acc_dtype = xt == DType::f64 ? DType::f64 : DType::f32;
  p.conv.training = m.training;
  p.conv.track_running_stats = m.track;
  p.conv.momentum = m.momentum;
  p.conv.num_batches_tracked = 3;
  p.conv.sequence = m.steps > 0;
  Shape xs = m.steps > 0 ? Shape{m.steps, n, c, spatial} : Shape{n, c, spatial};
  const std::int64_t total = (m.steps > 0 ? m.steps : 1) * n * c * spatial;
  p.inputs["x"] = Tensor::from_doubles(xt, xs, fill(static_cast<std::size_t>(total), f, seed));
  add_affine(p, c);
  if (m.track) {
    std::vector<double> rm(static_cast<std::size_t>(c)), rv(rm.size());
    for (std::int64_t j = 0; j < c; ++j) {
      rm[j] = 0.25 * static_cast<double>(j % 3) - 0.1;
      rv[j] = 0.5 + 0.375 * static_cast<double>(j % 4);
    }
    p.inputs["running_mean"] = Tensor::from_doubles(xt == DType::f64 ? DType::f64 : DType::f32, {c}, rm);
    p.inputs["running_var"] = Tensor::from_doubles(xt == DType::f64 ? DType::f64 : DType::bf16, {c}, rv);
  }
  validate(p);
  return p;
}

struct Emulated {
  Outputs out;
  std::vector<kc::FamilyLaunch> configs;
};

Emulated emulate(const Problem& p, std::int64_t max_grid = 0) {
  kc::emulation::HostExec ex;
  ex.max_grid = max_grid;
  Emulated e;
  if (p.op == Op::batch_norm) kc::emulation::batch_norm_forward(p, e.out, ex);
  else kc::emulation::group_norm_forward(p, e.out, ex);
  e.configs = ex.configs;
  return e;
}

std::string describe(const Problem& p) {
  std::string s = std::string(to_string(p.op)) + " x=" + std::string(dtype_name(p.x().dtype())) + " y=" +
                  std::string(dtype_name(p.out_dtype)) + " shape=" + shape_str(p.x().shape()) +
                  " G=" + std::to_string(p.conv.num_groups) + " eps=" + std::to_string(p.conv.eps) + " " +
                  std::string(to_string(p.conv.eps_placement)) + " " + std::string(to_string(p.conv.variance)) + " " +
                  std::string(to_string(p.conv.affine));
  if (p.op == Op::batch_norm)
    s += std::string(p.conv.training ? " training" : " eval") + (p.conv.track_running_stats ? " tracked" : " untracked") +
         (p.conv.momentum ? " momentum=" + std::to_string(*p.conv.momentum) : " cumulative");
  return s;
}

/// Every output of the emulated kernels within the default gate of the exact reference
/// (NaN where and only where the reference is NaN: an unwritten, poisoned element fails).
Emulated check_gate(const Problem& p, std::int64_t max_grid = 0) {
  Emulated e = emulate(p, max_grid);
  const auto ref = reference::evaluate_exact(p);
  const Gate g = default_gate(p);
  INFO(describe(p));
  std::size_t required = 0;  // the saved statistics are optional outputs: the kernels do not write them
  for (const auto& [name, r] : ref) required += !is_optional_output(p, name);
  CHECK(e.out.size() == required);
  for (const auto& [name, r] : ref) {
    INFO("output " << name);
    if (is_optional_output(p, name)) continue;
    REQUIRE(e.out.count(name) == 1);
    const MetricSet ms = measure(e.out.at(name), r, output_dtype(p, name), p.conv.acc_dtype);
    INFO("stab = " << ms.stab.value << " (gate " << g.max << ") at flat index " << ms.stab.index << " got " << ms.stab.got
                   << " exact " << static_cast<double>(ms.stab.exact) << "; NaN mismatches " << ms.nan_mismatches);
    CHECK(ms.nan_mismatches == 0);
    CHECK(ms.stab.value <= g.max);
  }
  return e;
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

bool same_outputs(const Outputs& a, const Outputs& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [k, v] : a)
    if (!b.count(k) || !same_bits(v, b.at(k))) return false;
  return true;
}

const std::pair<DType, DType> kPairs[] = {{DType::f32, DType::f32},  {DType::f16, DType::f16}, {DType::bf16, DType::bf16},
                                          {DType::bf16, DType::f32}, {DType::f32, DType::f16}, {DType::f64, DType::f64},
                                          {DType::f16, DType::f64}};

}  // namespace

TEST_CASE("cuda group_norm (emulated): G = 1, 2 < G < C, G = C, every dtype pair", "[cuda][emulation][group_norm]") {
  for (auto [xt, yt] : kPairs)
    for (std::int64_t G : {1, 3, 4, 12})
      for (auto [n, spatial] : {std::pair<std::int64_t, std::int64_t>{2, 5}, {1, 400}, {3, 1}}) {
        if (G == 1 && spatial == 1) continue;  // fine, but keep the loop short
        check_gate(gn(Op::group_norm, xt, yt, n, 12, spatial, G, Fill::normal, Affine::gamma_beta,
                      static_cast<unsigned>(G * 100 + spatial)));
      }
}

TEST_CASE("cuda instance_norm (emulated): every dtype pair, small and large spatial", "[cuda][emulation][group_norm]") {
  for (auto [xt, yt] : kPairs)
    for (std::int64_t spatial : {2, 17, 5000}) check_gate(gn(Op::instance_norm, xt, yt, 2, 3, spatial, 0, Fill::normal, Affine::gamma, 7));
}

TEST_CASE("cuda group_norm (emulated): block sizes from 32 to 1024 threads, capped grids stride", "[cuda][emulation][group_norm]") {
  std::set<int> threads;
  for (std::int64_t spatial : {1, 64, 300, 2048, 9000}) {
    const Problem p = gn(Op::group_norm, DType::f32, DType::f32, 2, 8, spatial, 2, Fill::shifted, Affine::gamma_beta, 3);
    const Emulated full = check_gate(p);
    threads.insert(full.configs.at(0).threads);
    const Emulated one = emulate(p, 1), three = emulate(p, 3);
    CHECK(same_outputs(full.out, one.out));
    CHECK(same_outputs(full.out, three.out));
  }
  CHECK(threads.count(32) == 1);
  CHECK(threads.count(1024) == 1);
}

TEST_CASE("cuda group_norm (emulated): every eps placement, variance and affine convention", "[cuda][emulation][group_norm]") {
  for (Op op : {Op::group_norm, Op::instance_norm})
    for (EpsPlacement pl : {EpsPlacement::inside_sqrt, EpsPlacement::outside_sqrt, EpsPlacement::clamp_var, EpsPlacement::clamp_norm})
      for (Variance var : {Variance::biased, Variance::unbiased})
        for (Affine af : {Affine::none, Affine::gamma, Affine::gamma_beta, Affine::one_plus_w})
          for (double eps : {1e-5, 0.5}) {
            Problem p = gn(op, DType::f32, DType::f32, 2, 4, 37, 2, Fill::tiny_var, af, 5);
            p.conv.eps_placement = pl;
            p.conv.variance = var;
            p.conv.eps = eps;
            check_gate(p);
          }
}

TEST_CASE("cuda group_norm (emulated): groups far from 1 in magnitude", "[cuda][emulation][group_norm][range]") {
  for (Op op : {Op::group_norm, Op::instance_norm})
    for (Fill f : {Fill::shifted, Fill::tiny_var, Fill::huge, Fill::subnormal})
      for (DType yt : {DType::f32, DType::bf16}) {
        Problem p = gn(op, DType::f32, yt, 2, 6, 300, 3, f, Affine::gamma_beta, 11);
        p.conv.eps = 0;  // eps would swamp the subnormal groups' variance
        check_gate(p);
      }
}

TEST_CASE("cuda group_norm (emulated): NaN/inf groups give NaN groups, constant groups zeros or NaN",
          "[cuda][emulation][group_norm][degenerate]") {
  for (DType t : {DType::f32, DType::bf16, DType::f16, DType::f64}) {
    // 2 samples x 3 groups of 2 channels x 50: poison groups (0,0), (0,2) and (1,1).
    Problem p = gn(Op::group_norm, t, t, 2, 6, 50, 3, Fill::normal, Affine::gamma_beta, 5);
    Tensor& x = p.inputs["x"];
    const std::int64_t m = 100;
    x.set(0 * m + 17, std::nan(""));
    x.set(2 * m + 99, HUGE_VAL);
    x.set(4 * m + 0, -HUGE_VAL);
    const Emulated e = check_gate(p);
    const Tensor& y = e.out.at("y");
    for (std::int64_t grp = 0; grp < 6; ++grp)
      for (std::int64_t j = 0; j < m; ++j) {
        const bool bad = grp == 0 || grp == 2 || grp == 4;
        CHECK(std::isnan(y.get(grp * m + j)) == bad);
      }
  }
  for (Op op : {Op::group_norm, Op::instance_norm}) {
    Problem p = gn(op, DType::f32, DType::f32, 2, 4, 33, 2, Fill::constant, Affine::none, 1);
    p.conv.eps = 1e-5;
    const Emulated e = check_gate(p);
    for (std::int64_t i = 0; i < e.out.at("y").size(); ++i) CHECK(e.out.at("y").get(i) == 0.0);
    p.conv.eps = 0;  // 0/0: NaN, as the reference
    const Emulated z = check_gate(p);
    for (std::int64_t i = 0; i < z.out.at("y").size(); ++i) CHECK(std::isnan(z.out.at("y").get(i)));
  }
}

TEST_CASE("cuda batch_norm (emulated): training, eval and untracked, every dtype pair", "[cuda][emulation][batch_norm]") {
  BnMode train, cumulative, eval, untracked, untracked_eval;
  cumulative.momentum = std::nullopt;
  eval.training = false;
  untracked.track = false;
  untracked_eval.track = false;
  untracked_eval.training = false;
  for (auto [xt, yt] : kPairs)
    for (const BnMode& m : {train, cumulative, eval, untracked, untracked_eval})
      for (auto [n, spatial] : {std::pair<std::int64_t, std::int64_t>{4, 1}, {3, 50}, {2, 3000}}) {
        const Emulated e = check_gate(bn(xt, yt, n, 5, spatial, m, Fill::normal, Affine::gamma_beta, static_cast<unsigned>(n + spatial)));
        CHECK(e.out.count("running_mean") == (m.track ? 1u : 0u));
      }
}

TEST_CASE("cuda batch_norm (emulated): sequences chain the running stats", "[cuda][emulation][batch_norm]") {
  for (auto [xt, yt] : {std::pair{DType::f32, DType::f32}, std::pair{DType::bf16, DType::bf16}, std::pair{DType::f64, DType::f64}})
    for (std::optional<double> mom : {std::optional<double>(0.1), std::optional<double>()})
      for (bool training : {true, false}) {
        BnMode m;
        m.steps = 3;
        m.momentum = mom;
        m.training = training;
        check_gate(bn(xt, yt, 4, 3, 20, m, Fill::shifted, Affine::gamma_beta, 9));
      }
}

TEST_CASE("cuda batch_norm (emulated): every convention, far magnitudes, capped grids", "[cuda][emulation][batch_norm]") {
  for (EpsPlacement pl : {EpsPlacement::inside_sqrt, EpsPlacement::outside_sqrt, EpsPlacement::clamp_var, EpsPlacement::clamp_norm})
    for (Variance var : {Variance::biased, Variance::unbiased})
      for (Affine af : {Affine::none, Affine::gamma, Affine::gamma_beta, Affine::one_plus_w})
        for (bool training : {true, false}) {
          BnMode m;
          m.training = training;
          Problem p = bn(DType::f32, DType::f32, 3, 4, 21, m, Fill::tiny_var, af, 2);
          p.conv.eps_placement = pl;
          p.conv.variance = var;
          p.conv.eps = 0.5;
          check_gate(p);
        }
  for (Fill f : {Fill::shifted, Fill::tiny_var, Fill::huge, Fill::subnormal})
    for (bool track : {true, false}) {
      // x ~ 1e37: the exact running_var (~1e73) has no binary32 value; y alone is judged there.
      if (f == Fill::huge && track) continue;
      BnMode m;
      m.track = track;
      Problem p = bn(DType::f32, DType::f32, 3, 4, 300, m, f, Affine::gamma_beta, 13);
      p.conv.eps = 0;
      check_gate(p);
    }
  BnMode seq;
  seq.steps = 2;
  const Problem p = bn(DType::bf16, DType::bf16, 8, 7, 300, seq, Fill::normal, Affine::gamma_beta, 4);
  const Emulated full = check_gate(p), capped = check_gate(p, 2);
  CHECK(same_outputs(full.out, capped.out));
}

TEST_CASE("cuda batch_norm (emulated): NaN/inf channels, constant channels", "[cuda][emulation][batch_norm][degenerate]") {
  for (DType t : {DType::f32, DType::bf16, DType::f64})
    for (bool training : {true, false}) {
      BnMode m;
      m.training = training;
      Problem p = bn(t, t, 3, 4, 10, m, Fill::normal, Affine::gamma_beta, 6);
      Tensor& x = p.inputs["x"];
      x.set((0 * 4 + 1) * 10 + 3, std::nan(""));  // sample 0, channel 1
      x.set((2 * 4 + 3) * 10 + 9, -HUGE_VAL);     // sample 2, channel 3
      const Emulated e = check_gate(p);
      const Tensor& y = e.out.at("y");
      for (std::int64_t i = 0; i < 3; ++i)
        for (std::int64_t ch = 0; ch < 4; ++ch)
          for (std::int64_t j = 0; j < 10; ++j) {
            const std::int64_t k = (i * 4 + ch) * 10 + j;
            // batch statistics: NaN over the whole channel; eval: the element only (-inf stays infinite)
            if (training) CHECK(std::isnan(y.get(k)) == (ch == 1 || ch == 3));
            else CHECK(std::isfinite(y.get(k)) == (k != 13 && k != (2 * 4 + 3) * 10 + 9));
          }
      for (std::int64_t ch = 0; ch < 4; ++ch) CHECK(std::isnan(e.out.at("running_var").get(ch)) == (training && (ch == 1 || ch == 3)));
    }
  for (bool track : {true, false}) {
    BnMode m;
    m.track = track;
    Problem p = bn(DType::f32, DType::f32, 3, 2, 11, m, Fill::constant, Affine::none, 1);
    p.conv.eps = 1e-5;
    const Emulated e = check_gate(p);
    for (std::int64_t i = 0; i < e.out.at("y").size(); ++i) CHECK(e.out.at("y").get(i) == 0.0);
    p.conv.eps = 0;
    const Emulated z = check_gate(p);
    for (std::int64_t i = 0; i < z.out.at("y").size(); ++i) CHECK(std::isnan(z.out.at("y").get(i)));
  }
}

namespace {

/// The emulated family kernels as a backend, for the runner (gate, expected values, properties).
class EmulatedFamilyBackend final : public Backend {
 public:
  std::string name() const override { return "cuda-emulated"; }
  std::string description() const override { return "the CUDA family kernels, emulated on the CPU"; }
  std::optional<std::string> unsupported(const ValidProblem& vp, const Recorded&) const override {
    const Problem& p = *vp;
    if (p.op != Op::group_norm && p.op != Op::instance_norm && p.op != Op::batch_norm) return std::string("not a family op");
    if (p.conv.acc_dtype != DType::f32 && p.conv.acc_dtype != DType::f64) return std::string("accumulation not offered");
    return std::nullopt;
  }
  Outputs run(const ValidProblem& p, const Recorded&) override { return emulate(*p).out; }
};

}  // namespace

TEST_CASE("cuda family kernels (emulated): every bundled group_norm, instance_norm and batch_norm case passes",
          "[cuda][emulation][families]") {
  std::vector<std::string> dirs;
  for (const char* f : {"group_norm", "instance_norm", "batch_norm"}) dirs.push_back(std::string(NORMCHECK_SOURCE_DIR) + "/cases/" + f);
  std::vector<Case> cases;
  for (auto& file : find_case_files(dirs))
    for (auto& c : parse_case_file(file))
      // The cuda kernels are forward only and take dense tensors (views: SKIPPED by the runner).
      if (c.problem.conv.direction == Direction::forward && c.problem.layout == MemoryLayout::contiguous) cases.push_back(std::move(c));
  REQUIRE(cases.size() >= 15);
  std::vector<std::unique_ptr<Backend>> be;
  be.push_back(std::make_unique<EmulatedFamilyBackend>());
  const auto results = run_cases(cases, be, {});
  REQUIRE(results.size() == cases.size());
  for (auto& r : results) {
    INFO(r.repro);
    for (auto& c : r.checks) INFO(c.name << ": " << c.detail);
    CHECK(r.status == Status::passed);
  }
}

#ifdef NORMCHECK_HAVE_CUDA
TEST_CASE("cuda family kernels: the device matches the emulation bit for bit", "[cuda][device]") {
  if (auto why = kc::device_unavailable()) {
    WARN("no device, not checked: " << *why);
    return;
  }
  std::vector<Problem> ps;
  for (auto [xt, yt] : kPairs) {
    for (std::int64_t G : {1, 4, 16})
      for (std::int64_t spatial : {1, 49, 4096}) ps.push_back(gn(Op::group_norm, xt, yt, 3, 16, spatial, G, Fill::shifted, Affine::gamma_beta, 21));
    ps.push_back(gn(Op::instance_norm, xt, yt, 2, 5, 777, 0, Fill::huge, Affine::gamma, 22));
    BnMode train, eval, untracked, seq;
    eval.training = false;
    untracked.track = false;
    seq.steps = 3;
    seq.momentum = std::nullopt;
    for (const BnMode& m : {train, eval, untracked, seq})
      for (std::int64_t spatial : {1, 300}) ps.push_back(bn(xt, yt, 8, 6, spatial, m, Fill::normal, Affine::gamma_beta, 23));
  }
  for (const Problem& p : ps) {
    Outputs dev;
    if (p.op == Op::batch_norm) kc::batch_norm_forward(p, dev);
    else kc::group_norm_forward(p, dev);
    const Emulated e = emulate(p);
    INFO(describe(p));
    CHECK(same_outputs(dev, e.out));
  }
}
#endif
