// Backward (issue 6): the exact reference gradients against high-precision central
// differences of the forward reference, their condition magnitudes against the true
// first-order sensitivity, hand-checked gradients, and the CPU kernels against the gate.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <map>

#include <boost/multiprecision/mpfr.hpp>
#include <fmt/format.h>

#include "spec/backend.hpp"
#include "cases/case.hpp"
#include "checks/budget.hpp"
#include "checks/metrics.hpp"
#include "checks/runner.hpp"
#include "family_test_util.hpp"
#include "test_util.hpp"
#include "ops/l2_normalize/reference.hpp"
#include "ops/common/row_norm.hpp"
#include "ops/common/row_norm_backward.hpp"
#include "spec/layout.hpp"
#include "ops/registry.hpp"
#include "backends/registry.hpp"

using namespace normcheck;
using normcheck::test::tensor;

namespace {

namespace mp = boost::multiprecision;
using T = mp::number<mp::mpfr_float_backend<78>, mp::et_off>;  // >= 256 bits
using Inputs = std::map<std::string, std::vector<T>>;

/// The forward op in T, assembled here from the reference's group templates (row_norm.hpp
/// normalize_group, l2_normalize.hpp l2_group) and the spec's layouts, independently of the
/// backward code: y for inputs `in` (as T, so a perturbation of 2^-40 is exact).
std::vector<T> forward(const Problem& p, const Inputs& in) {
  const Shape& xs = p.x().shape();
  const std::vector<T>& x = in.at("x");
  std::vector<T> y(x.size());
  std::vector<double> cond(x.size());
  auto get = [&](const char* k) { return in.count(k) ? in.at(k).data() : static_cast<const T*>(nullptr); };
  const Op op = p.op;
  if (op == Op::layer_norm || op == Op::rms_norm) {
      const RowLayout l = row_layout(p);
      for (std::int64_t r = 0; r < l.rows; ++r)
        reference::normalize_group(x.data() + r * l.m, l.m, p.op == Op::layer_norm, p.conv, get("gamma"), get("beta"),
                                   y.data() + r * l.m, cond.data() + r * l.m);
  } else if (op == Op::group_norm || op == Op::instance_norm || op == Op::batch_norm) {
      const ChannelLayout l = channel_layout(p);
      const bool eval = p.op == Op::batch_norm && !p.conv.training && p.conv.track_running_stats;
      // The elements of each group by flat index: (n, g) blocks, or BN's channels over N, spatial.
      std::vector<std::vector<std::int64_t>> groups;
      if (p.op == Op::batch_norm) {
        for (std::int64_t ch = 0; ch < l.c; ++ch) {
          groups.emplace_back();
          for (std::int64_t i = 0; i < l.n; ++i)
            for (std::int64_t j = 0; j < l.spatial; ++j) groups.back().push_back((i * l.c + ch) * l.spatial + j);
        }
      } else {
        const std::int64_t G = p.op == Op::instance_norm ? l.c : p.conv.num_groups, m = l.c / G * l.spatial;
        for (std::int64_t g = 0; g < l.n * G; ++g) {
          groups.emplace_back();
          for (std::int64_t j = 0; j < m; ++j) groups.back().push_back(g * m + j);
        }
      }
      for (auto& g : groups) {
        std::vector<T> xg, yg(g.size()), gg, bg;
        std::vector<double> cg(g.size());
        for (auto e : g) {
          xg.push_back(x[e]);
          const std::int64_t ch = (e / l.spatial) % l.c;
          if (in.count("gamma")) gg.push_back(in.at("gamma")[ch]);
          if (in.count("beta")) bg.push_back(in.at("beta")[ch]);
        }
        if (eval) {
          for (std::size_t k = 0; k < g.size(); ++k) {
            const std::int64_t ch = (g[k] / l.spatial) % l.c;
            const T& rv = in.at("running_var")[ch];
            const T n = (xg[k] - in.at("running_mean")[ch]) / reference::denominator(rv, p.conv);
            yg[k] = reference::apply_affine(n, p.conv, gg.data(), bg.data(), static_cast<std::int64_t>(k));
          }
        } else {
          reference::normalize_group(xg.data(), static_cast<std::int64_t>(g.size()), true, p.conv, gg.empty() ? nullptr : gg.data(),
                                     bg.empty() ? nullptr : bg.data(), yg.data(), cg.data());
        }
        for (std::size_t k = 0; k < g.size(); ++k) y[g[k]] = yg[k];
      }
  } else if (op == Op::l2_normalize || op == Op::scale_norm) {
      const ReductionLayout l = reduction_layout(xs, reduced_axes(p));
      const T gain = p.op == Op::scale_norm ? in.at("g")[0] : T(1);
      for (auto b : l.base) {
        std::vector<T> xg, yg(l.member.size());
        std::vector<double> cg(l.member.size());
        for (auto o : l.member) xg.push_back(x[b + o]);
        reference::l2_group(xg.data(), static_cast<std::int64_t>(xg.size()), p.conv, gain, yg.data(), cg.data());
        for (std::size_t k = 0; k < l.member.size(); ++k) y[b + l.member[k]] = yg[k];
      }
  } else if (op == Op::ada_layer_norm || op == Op::ada_rms_norm) {
      const std::int64_t d = xs.back(), rows = static_cast<std::int64_t>(x.size()) / d, per_batch = rows / xs.front();
      Convention c0 = p.conv;
      c0.affine = Affine::none;
      for (std::int64_t r = 0; r < rows; ++r) {
        reference::normalize_group(x.data() + r * d, d, p.op == Op::ada_layer_norm, c0, static_cast<const T*>(nullptr),
                                   static_cast<const T*>(nullptr), y.data() + r * d, cond.data() + r * d);
        const std::int64_t pb = (r / per_batch) * d;
        for (std::int64_t j = 0; j < d; ++j) y[r * d + j] = (T(1) + in.at("scale")[pb + j]) * y[r * d + j] + in.at("shift")[pb + j];
      }
  } else {
    FAIL("no backward");
  }
  return y;
}

/// Which reference output holds the gradient of each input.
const std::map<std::string, std::string> kGradOf{{"x", "dx"}, {"gamma", "dgamma"}, {"beta", "dbeta"},
                                                 {"scale", "ds"}, {"shift", "db"}, {"g", "dg"}};

/// Checks every gradient output of backward problem `p` against central differences
/// (L(theta + h e_k) - L(theta - h e_k)) / 2h of L = sum dy y, h = 2^-40, in >= 256 bits.
/// Truncation error h^2 L'''/6 ~ 2^-80, rounding 2^-256 / h: far below the long double in
/// which the reference's exact values are carried (2^-64 relative).
void check_against_fd(const Problem& p) {
  const auto ref = reference::evaluate_exact(p);
  Inputs in;
  for (auto& [name, t] : p.inputs)
    if (name != "dy") for (std::int64_t i = 0; i < t.size(); ++i) in[name].emplace_back(t.get(i));
  std::vector<T> dy;
  for (std::int64_t i = 0; i < p.inputs.at("dy").size(); ++i) dy.emplace_back(p.inputs.at("dy").get(i));
  auto loss = [&](const Inputs& v) {
    const auto y = forward(p, v);
    T s(0);
    for (std::size_t i = 0; i < y.size(); ++i) s += dy[i] * y[i];
    return s;
  };
  const T h = T(1) / mp::pow(T(2), 40);
  std::size_t outputs_checked = 0;
  for (auto& [input, out] : kGradOf) {
    if (!in.count(input)) continue;
    INFO("gradient " << out << " of input " << input);
    REQUIRE(ref.count(out));
    const auto& r = ref.at(out);
    std::vector<long double> fd(in.at(input).size());
    long double scale = 0;
    for (std::size_t k = 0; k < fd.size(); ++k) {
      Inputs plus = in, minus = in;
      plus[input][k] += h;
      minus[input][k] -= h;
      fd[k] = static_cast<long double>((loss(plus) - loss(minus)) / (2 * h));
      scale = std::max(scale, std::fabs(fd[k]));
    }
    for (std::size_t k = 0; k < fd.size(); ++k) {
      INFO(fmt::format("element {}: reference {:.21Lg}, central difference {:.21Lg}", k, r.exact_at(k), fd[k]));
      CHECK(std::fabs(r.exact_at(k) - fd[k]) <= 1e-15L * std::fabs(fd[k]) + 1e-17L * scale);
    }
    ++outputs_checked;
  }
  CHECK(outputs_checked == ref.size());  // every output is the gradient of an input
}

Problem bwd(Op op, const Shape& xs, std::uint64_t seed, double mean = 0.5) {
  Problem p = test::problem(op, xs, generate_normal(numel(xs), mean, 1.5, seed));
  p.conv.direction = Direction::backward;
  p.inputs["dy"] = tensor(xs, generate_normal(numel(xs), 0.0, 1.0, seed + 1));
  return p;
}

void with_affine(Problem& p, Affine a, std::int64_t size, std::uint64_t seed) {
  p.conv.affine = a;
  if (a == Affine::none) return;
  p.inputs["gamma"] = tensor({size}, generate_uniform(size, a == Affine::one_plus_w ? -0.5 : 0.5, 1.5, seed));
  if (a == Affine::gamma_beta) p.inputs["beta"] = tensor({size}, generate_uniform(size, -1, 1, seed + 1));
}

}  // namespace

TEST_CASE("backward: layer_norm and rms_norm gradients equal central differences of the forward reference",
          "[backward][reference][fd]") {
  const auto op = GENERATE(Op::layer_norm, Op::rms_norm);
  const auto affine = GENERATE(Affine::none, Affine::gamma, Affine::gamma_beta, Affine::one_plus_w);
  const auto placement = GENERATE(EpsPlacement::inside_sqrt, EpsPlacement::outside_sqrt);
  const auto variance = GENERATE(Variance::biased, Variance::unbiased);
  INFO(fmt::format("{} affine {} {} {}", to_string(op), to_string(affine), to_string(placement), to_string(variance)));
  Problem p = bwd(op, {3, 5}, 21);
  p.conv.eps = 1e-2;
  p.conv.eps_placement = placement;
  p.conv.variance = variance;
  with_affine(p, affine, 5, 22);
  check_against_fd(p);
}

TEST_CASE("backward: group_norm and instance_norm gradients equal central differences", "[backward][reference][fd]") {
  const auto affine = GENERATE(Affine::none, Affine::gamma_beta, Affine::one_plus_w);
  for (Op op : {Op::group_norm, Op::instance_norm}) {
    INFO(fmt::format("{} affine {}", to_string(op), to_string(affine)));
    Problem p = bwd(op, {2, 4, 3}, 31);
    p.conv.eps = 1e-3;
    if (op == Op::group_norm) p.conv.num_groups = 2;
    with_affine(p, affine, 4, 32);
    check_against_fd(p);
  }
}

TEST_CASE("backward: batch_norm gradients equal central differences, training through the batch statistics and eval",
          "[backward][reference][fd]") {
  const auto affine = GENERATE(Affine::none, Affine::gamma_beta, Affine::one_plus_w);
  const auto training = GENERATE(true, false);
  INFO(fmt::format("affine {} training {}", to_string(affine), training));
  Problem p = bwd(Op::batch_norm, {3, 2, 2}, 41);
  p.conv.eps = 1e-3;
  p.conv.training = training;
  p.conv.momentum = 0.1;
  p.inputs["running_mean"] = tensor({2}, {0.25, -0.5});
  p.inputs["running_var"] = tensor({2}, {1.5, 0.75});
  with_affine(p, affine, 2, 42);
  check_against_fd(p);
}

TEST_CASE("backward: l2_normalize and scale_norm gradients equal central differences", "[backward][reference][fd]") {
  for (Op op : {Op::l2_normalize, Op::scale_norm}) {
    INFO(to_string(op));
    Problem p = bwd(op, {2, 3, 2}, 51);
    p.conv.eps = 1e-12;
    p.conv.eps_placement = EpsPlacement::clamp_norm;
    p.conv.axes = {1};  // a strided group
    if (op == Op::scale_norm) p.inputs["g"] = tensor({1}, {1.75});
    check_against_fd(p);
  }
}

TEST_CASE("backward: ada_layer_norm and ada_rms_norm gradients (dx, ds, db) equal central differences",
          "[backward][reference][fd]") {
  for (Op op : {Op::ada_layer_norm, Op::ada_rms_norm}) {
    INFO(to_string(op));
    Problem p = bwd(op, {2, 3, 4}, 61);
    p.conv.eps = 1e-4;
    p.inputs["scale"] = tensor({2, 4}, generate_uniform(8, -0.5, 0.5, 62));
    p.inputs["shift"] = tensor({2, 4}, generate_uniform(8, -1, 1, 63));
    check_against_fd(p);
  }
}

TEST_CASE("backward: the condition magnitude of dx bounds its first-order sensitivity to x, dy and the parameters",
          "[backward][reference][cond]") {
  // True sum_j |d dx_i/d theta_j theta_j| over theta = x, dy, gamma (w for one_plus_w), by
  // central differences of relative perturbations theta_j (1 +- h), against c(dx_i); and
  // sum_j |dn_i/dx_j x_j| against nu_i (the parameter gradients' x terms).
  const auto center = GENERATE(true, false);
  const auto placement = GENERATE(EpsPlacement::inside_sqrt, EpsPlacement::outside_sqrt, EpsPlacement::clamp_norm);
  const auto affine = GENERATE(Affine::none, Affine::gamma, Affine::one_plus_w);
  const auto mean = GENERATE(0.0, 20.0);
  INFO(fmt::format("center {} {} affine {} mean {}", center, to_string(placement), to_string(affine), mean));
  const std::int64_t m = 7;
  Convention c;
  c.eps = 1e-2;
  c.eps_placement = placement;
  c.affine = affine;
  auto load = [](const std::vector<double>& v) { return std::vector<T>(v.begin(), v.end()); };
  std::map<std::string, std::vector<T>> th{{"x", load(generate_normal(m, mean, 1.0, 71))},
                                           {"dy", load(generate_normal(m, 0.0, 1.0, 72))},
                                           {"p", load(generate_uniform(m, -1.5, 1.5, 73))}};
  struct Out { std::vector<T> dx, n, nu; std::vector<double> c; };
  auto run = [&](const std::map<std::string, std::vector<T>>& v) {
    Out o{std::vector<T>(m), std::vector<T>(m), std::vector<T>(m), std::vector<double>(m)};
    std::vector<T> gain = v.at("p");
    if (affine == Affine::one_plus_w) for (auto& g : gain) g = T(1) + g;
    const bool aff = affine != Affine::none;
    reference::normalize_group_backward(v.at("x").data(), v.at("dy").data(), m, center, m, c, aff ? gain.data() : nullptr,
                                        aff ? v.at("p").data() : nullptr, o.dx.data(), o.c.data(), o.n.data(), o.nu.data());
    return o;
  };
  const Out base = run(th);
  const T h = T(1) / mp::pow(T(2), 40);
  std::vector<T> sens(m, T(0)), nsens(m, T(0));
  for (const char* k : {"x", "dy", "p"}) {
    if (std::string(k) == "p" && affine == Affine::none) continue;
    for (std::int64_t j = 0; j < m; ++j) {
      auto plus = th, minus = th;
      plus[k][j] *= 1 + h;
      minus[k][j] *= 1 - h;
      const Out a = run(plus), b = run(minus);
      for (std::int64_t i = 0; i < m; ++i) {
        sens[i] += abs(a.dx[i] - b.dx[i]) / (2 * h);
        if (std::string(k) == "x") nsens[i] += abs(a.n[i] - b.n[i]) / (2 * h);
      }
    }
  }
  double tight = 0;
  for (std::int64_t i = 0; i < m; ++i) {
    const double s = static_cast<double>(sens[i]), ns = static_cast<double>(nsens[i]);
    INFO(fmt::format("element {}: sensitivity {:.6g} <= c {:.6g}; n: {:.6g} <= nu {:.6g}", i, s, base.c[i], ns,
                     static_cast<double>(base.nu[i])));
    CHECK(s <= base.c[i] * (1 + 1e-9));
    CHECK(ns <= static_cast<double>(base.nu[i]) * (1 + 1e-9));
    tight = std::max(tight, s / base.c[i]);
  }
  // The bound is O(m) and not absurdly loose: some element reaches a fair fraction of it.
  INFO("max sensitivity / c = " << tight);
  CHECK(tight >= 0.5);  // 0.62 .. 0.99 over these sections
}

TEST_CASE("backward: hand-checked gradients (worked examples)", "[backward][reference][worked]") {
  auto run = [](Op op, const Shape& xs, const std::vector<double>& x, const std::vector<double>& dy) {
    Problem p = test::problem(op, xs, x);
    p.conv.direction = Direction::backward;
    p.inputs["dy"] = tensor(xs, dy);
    return p;
  };
  SECTION("layer_norm [1,2,3], dy = [1,0,0]: dx = sqrt(3/2) (1/6, -1/3, 1/6)") {
    const auto dx = test::exact(run(Op::layer_norm, {1, 3}, {1, 2, 3}, {1, 0, 0}), "dx");
    CHECK(test::within_half_ulp_f64(dx[0], 0.2041241452319315082));
    CHECK(test::within_half_ulp_f64(dx[1], -0.4082482904638630164));
    CHECK(test::within_half_ulp_f64(dx[2], 0.2041241452319315082));
  }
  SECTION("rms_norm [3,4], dy = [1,0]: dx = (0.64, -0.48) / sqrt(12.5), orthogonal to x") {
    const auto dx = test::exact(run(Op::rms_norm, {1, 2}, {3, 4}, {1, 0}), "dx");
    CHECK(test::within_half_ulp_f64(dx[0], 0.18101933598375616625));
    CHECK(test::within_half_ulp_f64(dx[1], -0.13576450198781712468));
  }
  SECTION("l2_normalize [3,4], dy = [1,0]: dx = (0.128, -0.096)") {
    Problem p = run(Op::l2_normalize, {2}, {3, 4}, {1, 0});
    p.conv.eps = 1e-12;
    const auto dx = test::exact(p, "dx");
    CHECK(dx[0] == 0.128);
    CHECK(dx[1] == -0.096);
  }
  SECTION("batch_norm training on [1, 3]: the output is -+1 whatever x, so dx = 0; eval: dy / sqrt(running_var)") {
    Problem p = run(Op::batch_norm, {2, 1}, {1, 3}, {1, 0});
    p.conv.momentum = 1.0;
    p.inputs["running_mean"] = tensor({1}, {2});
    p.inputs["running_var"] = tensor({1}, {2});
    CHECK(test::exact(p, "dx") == std::vector<double>{0, 0});
    p.conv.training = false;
    const auto dx = test::exact(p, "dx");
    CHECK(test::within_half_ulp_f64(dx[0], 0.7071067811865475244));
    CHECK(dx[1] == 0);
  }
  SECTION("layer_norm with gamma_beta over two rows: dgamma = sum dy n, dbeta = sum dy") {
    Problem p = run(Op::layer_norm, {2, 3}, {1, 2, 3, 1, 3, 5}, {1, 0, 0, 0, 1, 0});
    p.conv.affine = Affine::gamma_beta;
    p.inputs["gamma"] = tensor({3}, {1, 1.0625, 1.125});
    p.inputs["beta"] = tensor({3}, {0.5, -0.5, 0.25});
    CHECK(test::exact(p, "dbeta") == std::vector<double>{1, 1, 0});
    const auto dg = test::exact(p, "dgamma");
    CHECK(test::within_half_ulp_f64(dg[0], -1.224744871391589049));
    CHECK(dg[1] == 0);
    CHECK(dg[2] == 0);
  }
}

namespace {
/// A backward problem of op on x [shape] ~ N(mean, 1) in dtype dt, dy ~ N(0, 1), with every
/// parameter the op takes (gamma/beta per affine, scale/shift, g, running stats).
Problem random_backward(Op op, const Shape& xs, DType dt, double mean, Affine affine, std::uint64_t seed) {
  Problem p = test::problem(op, xs, generate_normal(numel(xs), mean, 1.0, seed), dt);
  p.conv.eps = 1e-5;
  if (op == Op::l2_normalize || op == Op::scale_norm) p.conv = default_convention(op);
  p.conv.acc_dtype = dt == DType::f64 ? DType::f64 : DType::f32;
  p.conv.normalized_shape = Shape{xs.back()};
  p.conv.direction = Direction::backward;
  p.inputs["dy"] = tensor(xs, generate_normal(numel(xs), 0.0, 1.0, seed + 1), dt);
  const bool channels = op == Op::group_norm || op == Op::instance_norm || op == Op::batch_norm;
  const std::int64_t psize = channels ? xs[1] : xs.back();
  if (op != Op::l2_normalize && op != Op::scale_norm && op != Op::ada_layer_norm && op != Op::ada_rms_norm) {
    with_affine(p, affine, psize, seed + 2);
    for (const char* k : {"gamma", "beta"})
      if (p.inputs.count(k)) p.inputs[k] = p.inputs[k].cast(dt);
  }
  if (op == Op::group_norm) p.conv.num_groups = 2;
  if (op == Op::batch_norm) {
    p.conv.momentum = 0.1;
    p.inputs["running_mean"] = tensor({xs[1]}, generate_uniform(xs[1], -1, 1, seed + 4), dt);
    p.inputs["running_var"] = tensor({xs[1]}, generate_uniform(xs[1], 0.5, 2, seed + 5), dt);
  }
  if (op == Op::scale_norm) p.inputs["g"] = tensor({1}, {1.75}, dt);
  if (op == Op::ada_layer_norm || op == Op::ada_rms_norm) {
    const Shape bd{xs.front(), xs.back()};
    p.inputs["scale"] = tensor(bd, generate_uniform(numel(bd), -0.5, 0.5, seed + 6), dt);
    p.inputs["shift"] = tensor(bd, generate_uniform(numel(bd), -1, 1, seed + 7), dt);
  }
  return p;
}
}  // namespace

TEST_CASE("backward: cpu kernels within the default backward gate on random inputs, every op and dtype",
          "[backward][cpu]") {
  struct Shapes { Op op; Shape xs; };
  const std::vector<Shapes> all{{Op::layer_norm, {6, 4097}}, {Op::layer_norm, {33, 17}}, {Op::rms_norm, {6, 4097}},
                                {Op::rms_norm, {33, 17}},    {Op::group_norm, {3, 4, 37}}, {Op::instance_norm, {3, 4, 37}},
                                {Op::batch_norm, {9, 3, 29}}, {Op::l2_normalize, {5, 300}}, {Op::scale_norm, {5, 300}},
                                {Op::ada_layer_norm, {2, 5, 257}}, {Op::ada_rms_norm, {2, 5, 257}}};
  auto cpu = make_backend("cpu");
  const auto dt = GENERATE(DType::f64, DType::f32, DType::f16, DType::bf16);
  const auto mean = GENERATE(0.0, 100.0);
  const auto affine = GENERATE(Affine::gamma_beta, Affine::one_plus_w);
  for (auto& [op, xs] : all) {
    for (bool training : {true, false}) {
      if (!training && op != Op::batch_norm) continue;
      const std::uint64_t seed = 500 + test::op_index(op) * 11 + static_cast<std::uint64_t>(dt) * 3 + (mean > 0);
      Problem p = random_backward(op, xs, dt, mean, affine, seed);
      p.conv.training = training;
      const auto ref = reference::evaluate_exact(p);
      const auto out = cpu->run(validate(p), {});
      const Gate g = default_gate(p);
      for (auto& [name, r] : ref) {
        const MetricSet ms = measure(out.at(name), r, p.out_dtype, p.conv.acc_dtype);
        INFO(fmt::format("{} {} {} dtype {} mean {} affine {} training {}: stab {} (gate {}) at {} got {} exact {}", to_string(op),
                         shape_str(xs), name, dtype_name(dt), mean, to_string(affine), training, ms.stab.value, g.max,
                         fmt::join(ms.stab.coords, ","), ms.stab.got, static_cast<double>(ms.stab.exact)));
        CHECK(ms.stab.value <= g.max);
        CHECK(ms.nan_mismatches == 0);
      }
    }
  }
}

namespace {
/// A backend that knows nothing of the backward direction (as every third-party backend
/// written before it): it would answer a backward problem with the forward y.
class ForwardOnly final : public Backend {
 public:
  std::string name() const override { return "forward-only"; }
  std::string description() const override { return "test: the cpu forward kernels, no backward"; }
  std::optional<std::string> unsupported(const ValidProblem&, const Recorded&) const override { return std::nullopt; }
  Outputs run(const ValidProblem& p, const Recorded& r) override {
    Problem f = *p;
    f.conv.direction = Direction::forward;
    f.inputs.erase("dy");
    return cpu_->run(validate(f), r);
  }

 private:
  std::unique_ptr<Backend> cpu_ = make_backend("cpu");
};
}  // namespace

TEST_CASE("backward: a backend that does not declare supports_backward() skips backward cases", "[backward][runner]") {
  std::vector<Case> cases;
  for (auto& c : parse_case_file(test::source_path("cases/layer_norm/backward.toml"))) cases.push_back(std::move(c));
  for (auto& c : parse_case_file(test::source_path("cases/layer_norm/worked_examples.toml"))) cases.push_back(std::move(c));
  std::vector<std::unique_ptr<Backend>> bs;
  bs.push_back(std::make_unique<ForwardOnly>());
  int skipped = 0, passed = 0;
  for (auto& r : run_cases(cases, bs, {})) {
    INFO(r.cs->name << ": " << r.reason);
    if (r.cs->problem.conv.direction == Direction::backward) {
      CHECK(r.status == Status::skipped);
      CHECK(r.reason == "forward-only: forward only (no backward)");
      ++skipped;
    } else {
      CHECK(r.status == Status::passed);
      ++passed;
    }
  }
  CHECK(skipped > 0);
  CHECK(passed > 0);
}
