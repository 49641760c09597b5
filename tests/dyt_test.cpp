// Dynamic Tanh (src/ops/dyt): the reference against hand-checked values, the CPU kernel
// within the default gate on random inputs of every dtype, the analytic gradients against
// central differences of the reference, and the condition magnitude as a bound.
#include <cmath>

#include <catch2/catch.hpp>

#include "ops/reference.hpp"
#include "ops/registry.hpp"
#include "backends/registry.hpp"
#include "test_util.hpp"

using namespace normcheck;

namespace {

Op dyt() { return *ops::find("dyt"); }

Problem dyt_problem(DType dt, Shape shape, const std::vector<double>& x, double alpha, Affine affine = Affine::none) {
  Problem p;
  p.op = dyt();
  p.out_dtype = dt;
  p.conv.affine = affine;
  p.conv.acc_dtype = dt == DType::f64 ? DType::f64 : DType::f32;
  p.conv.normalized_shape = {shape.back()};
  p.inputs["x"] = Tensor::from_doubles(dt, shape, x);
  p.inputs["alpha"] = Tensor::from_doubles(dt, {1}, {alpha});
  const std::int64_t d = shape.back();
  if (affine != Affine::none) p.inputs["gamma"] = Tensor::from_doubles(dt, {d}, generate_normal(d, 1.0, 0.2, 41));
  if (affine == Affine::gamma_beta) p.inputs["beta"] = Tensor::from_doubles(dt, {d}, generate_normal(d, 0.0, 0.2, 42));
  return p;
}

}  // namespace

TEST_CASE("dyt: tanh(alpha x) of hand-checked values, rounded once", "[dyt]") {
  const auto y = reference::evaluate_exact(dyt_problem(DType::f64, {4}, {-1, 0, 1, 4}, 0.5)).at("y");
  CHECK(test::within_half_ulp_f64(y.rounded_at(0), -0.46211715726000975850));  // tanh(-0.5)
  CHECK(y.rounded_at(1) == 0);
  CHECK(test::within_half_ulp_f64(y.rounded_at(2), 0.46211715726000975850));
  CHECK(test::within_half_ulp_f64(y.rounded_at(3), 0.96402758007581688395));  // tanh(2)
}

TEST_CASE("dyt: saturation and non-finite inputs stay elementwise, no NaN from inf", "[dyt][degenerate]") {
  const auto y = reference::evaluate_exact(dyt_problem(DType::f32, {4}, {INFINITY, -INFINITY, NAN, 50}, 1.0)).at("y");
  CHECK(y.rounded_at(0) == 1);
  CHECK(y.rounded_at(1) == -1);
  CHECK(std::isnan(y.rounded_at(2)));
  CHECK(y.rounded_at(3) == 1);
  CHECK(std::isfinite(y.cond[0]));
}

TEMPLATE_TEST_CASE_SIG("dyt: the cpu kernel meets the default gate on random rows, forward and backward", "[dyt][cpu]",
                       ((DType T), T), DType::f64, DType::f32, DType::f16, DType::bf16) {
  auto cpu = make_backend("cpu");
  for (double alpha : {0.5, 2.0})
    for (Affine a : {Affine::none, Affine::gamma, Affine::gamma_beta})
      for (bool backward : {false, true}) {
        Problem p = dyt_problem(T, {6, 48}, generate_normal(288, 0.0, 3.0, 43), alpha, a);
        if (backward) {
          p.conv.direction = Direction::backward;
          p.inputs["dy"] = Tensor::from_doubles(T, {6, 48}, generate_normal(288, 0.0, 1.0, 44));
        }
        const ValidProblem vp = validate(p);
        const auto ref = reference::evaluate_exact(vp);
        const auto out = cpu->run(vp, {});
        const double gate = default_gate(p).max;
        for (const auto& [name, r] : ref) {
          INFO(dtype_name(T) << " alpha " << alpha << " " << to_string(a) << " " << name);
          CHECK(measure(out.at(name), r, p.out_dtype, p.conv.acc_dtype).stab.value <= gate);
        }
      }
}

TEST_CASE("dyt: gradients equal central differences of the reference, cond bounds the sensitivity", "[dyt][backward]") {
  // 256-bit MPFR in binary64-exact inputs; h = 2^-30 relative keeps the truncation error of
  // a central difference (h^2 |f'''|) far below the tolerance.
  Problem p = dyt_problem(DType::f64, {2, 3}, {0.3, -1.2, 2.5, 0.05, -0.7, 1.9}, 0.8, Affine::gamma_beta);
  p.conv.direction = Direction::backward;
  p.inputs["dy"] = Tensor::from_doubles(DType::f64, {2, 3}, {1.0, -0.5, 0.25, 2.0, 0.75, -1.5});
  const auto g = reference::evaluate_exact(p);
  Problem f = p;
  f.conv.direction = Direction::forward;
  f.inputs.erase("dy");
  const Tensor& dy = p.inputs.at("dy");
  // L(inputs) = sum dy * y.
  auto loss = [&](const Problem& q) {
    const auto y = reference::evaluate_exact(q).at("y");
    long double s = 0;
    for (std::int64_t i = 0; i < dy.size(); ++i) s += static_cast<long double>(dy.get(i)) * y.exact_at(i);
    return s;
  };
  const std::map<std::string, std::string> grad{{"x", "dx"}, {"alpha", "dalpha"}, {"gamma", "dgamma"}, {"beta", "dbeta"}};
  for (const auto& [in, out] : grad) {
    const Tensor& t = f.inputs.at(in);
    for (std::int64_t i = 0; i < t.size(); ++i) {
      const double v = t.get(i), h = std::ldexp(std::fabs(v) > 0 ? std::fabs(v) : 1.0, -30);
      Problem up = f, dn = f;
      up.inputs.at(in).set(i, v + h);
      dn.inputs.at(in).set(i, v - h);
      // The steps as stored (v +- h rounds to binary64).
      const long double step = static_cast<long double>(up.inputs.at(in).get(i)) - dn.inputs.at(in).get(i);
      const long double fd = (loss(up) - loss(dn)) / step;
      const long double an = g.at(out).exact_at(i);
      INFO(in << "[" << i << "]: analytic " << static_cast<double>(an) << " finite difference " << static_cast<double>(fd));
      CHECK(std::fabs(static_cast<double>(an - fd)) <= 1e-9 * (1 + std::fabs(static_cast<double>(an))));
    }
  }
  // The condition magnitude of dx bounds its first-order change under relative
  // perturbations of x (one of the terms it sums).
  const auto& dx = g.at("dx");
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(dx.size()); ++i) {
    const double v = f.inputs.at("x").get(i), h = std::ldexp(std::fabs(v), -30);
    Problem up = p;
    up.inputs.at("x").set(i, v + h);
    const long double rel = (static_cast<long double>(up.inputs.at("x").get(i)) - v) / std::fabs(v);
    const long double d = (reference::evaluate_exact(up).at("dx").exact_at(i) - dx.exact_at(i)) / rel;
    CHECK(std::fabs(static_cast<double>(d)) <= dx.cond[i] * (1 + 1e-6));
  }
}
