// l2_normalize and scale_norm: the reference against shared/spec/worked-examples.md, exactly.
#include <cmath>

#include <catch2/catch.hpp>

#include "family_test_util.hpp"

using namespace normcheck;
using normcheck::test::exact;
using normcheck::test::problem;
using normcheck::test::tensor;

TEST_CASE("l2_normalize: [3, 4] gives [0.6, 0.8] and [30, 40] the same", "[l2_normalize]") {
  Problem p = problem(Op::l2_normalize, {2, 2}, {3, 4, 30, 40});
  p.conv.eps_placement = EpsPlacement::clamp_norm;  // the op's defaults
  p.conv.eps = 1e-12;
  CHECK(exact(p) == std::vector<double>{0.6, 0.8, 0.6, 0.8});
  const auto yc = normcheck::test::cpu(p);  // x * (1/D): within an ulp or two
  for (std::size_t i = 0; i < yc.size(); ++i) CHECK(yc[i] == Approx(i % 2 ? 0.8 : 0.6).epsilon(1e-15));
}

TEST_CASE("l2_normalize: the zero vector maps to zero", "[l2_normalize][degenerate]") {
  Problem p = problem(Op::l2_normalize, {1, 3}, {0, 0, 0});
  p.conv.eps = 1e-12;
  CHECK(exact(p) == std::vector<double>{0, 0, 0});
  CHECK(normcheck::test::cpu(p) == std::vector<double>{0, 0, 0});
}

TEST_CASE("l2_normalize: eps clamps the norm, it is not added to it", "[l2_normalize]") {
  // eps = 2^-40; ||(3, 4) 2^-43|| = 0.625 eps: y = x / eps (x / (||x|| + eps) = (3, 4)/13).
  Problem p = problem(Op::l2_normalize, {1, 2}, {0x3p-43, 0x4p-43});
  p.conv.eps = 0x1p-40;
  CHECK(exact(p) == std::vector<double>{0.375, 0.5});
  CHECK(normcheck::test::cpu(p) == std::vector<double>{0.375, 0.5});
  // ||(3, 4) 2^-40|| = 5 eps: no trace of eps at all.
  Problem q = problem(Op::l2_normalize, {1, 2}, {0x3p-40, 0x4p-40});
  q.conv.eps = 0x1p-40;
  CHECK(exact(q) == std::vector<double>{0.6, 0.8});
}

TEST_CASE("l2_normalize: explicit axes, contiguous or not", "[l2_normalize]") {
  Problem p = problem(Op::l2_normalize, {2, 2}, {3, 1, 4, 2});
  p.conv.axes = {0};
  CHECK(exact(p) == std::vector<double>{0.6, 0.4472135954999579393, 0.8, 0.8944271909999158786});
  // axes {0, 2} of [2, 3, 2]: group j = x[:, j, :]; its squares sum to 1 after normalizing.
  const auto x = generate_normal(12, 0, 1, 3);
  Problem q = problem(Op::l2_normalize, {2, 3, 2}, x);
  q.conv.axes = {0, -1};
  const auto y = exact(q), yc = normcheck::test::cpu(q);
  for (int j = 0; j < 3; ++j) {
    double s = 0;
    for (int i = 0; i < 2; ++i)
      for (int k = 0; k < 2; ++k) s += y[(i * 3 + j) * 2 + k] * y[(i * 3 + j) * 2 + k];
    CHECK(s == Approx(1).epsilon(1e-15));
  }
  for (std::size_t i = 0; i < y.size(); ++i) CHECK(yc[i] == Approx(y[i]).epsilon(1e-15));
}

TEST_CASE("l2_normalize: x / RMS(x) = sqrt(d) x / ||x||", "[l2_normalize][rms_norm]") {
  Problem rms = problem(Op::rms_norm, {1, 2}, {3, 4});
  CHECK(exact(rms) == std::vector<double>{0.8485281374238570293, 1.131370849898476039});
  const auto x = generate_normal(64, 0.5, 2, 9);
  Problem r = problem(Op::rms_norm, {1, 64}, x), l = problem(Op::l2_normalize, {1, 64}, x);
  const auto yr = reference::evaluate_exact(r).at("y").exact_values(), yl = reference::evaluate_exact(l).at("y").exact_values();
  for (std::size_t i = 0; i < yr.size(); ++i) CHECK(static_cast<double>(yr[i]) == Approx(8.0L * yl[i]).epsilon(1e-17));
}

TEST_CASE("scale_norm: g x / ||x|| with one learned scalar", "[scale_norm]") {
  Problem p = problem(Op::scale_norm, {2, 2}, {3, 4, -30, 40});
  p.conv.eps_placement = EpsPlacement::clamp_norm;
  p.conv.eps = 1e-5;
  p.inputs["g"] = tensor({1}, {2});
  CHECK(exact(p) == std::vector<double>{1.2, 1.6, -1.2, 1.6});
  p.inputs["g"] = tensor({2}, {2, 3});
  CHECK_THROWS_AS(validate(p), SpecError);
}
