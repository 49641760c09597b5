// ada_layer_norm and ada_rms_norm: the reference against shared/spec/worked-examples.md, exactly.
#include <catch2/catch.hpp>

#include "family_test_util.hpp"

using namespace normcheck;
using normcheck::test::exact;
using normcheck::test::problem;
using normcheck::test::tensor;

namespace {
Problem ada(Op op, const Shape& xs, const std::vector<double>& x, const std::vector<double>& s, const std::vector<double>& b,
            DType t = DType::f64) {
  Problem p = problem(op, xs, x, t);
  const Shape bd{xs.front(), xs.back()};
  p.inputs["scale"] = tensor(bd, s, t);
  p.inputs["shift"] = tensor(bd, b, t);
  return p;
}
}  // namespace

TEST_CASE("ada_layer_norm: normalized (-1, 1) with s = (1, 0), b = (0, 3) gives (-2, 4)", "[ada_layer_norm]") {
  CHECK(exact(ada(Op::ada_layer_norm, {1, 1, 2}, {1, 3}, {1, 0}, {0, 3})) == std::vector<double>{-2, 4});
}

TEST_CASE("ada_layer_norm: s = b = 0 leaves (-1, 1)", "[ada_layer_norm]") {
  CHECK(exact(ada(Op::ada_layer_norm, {1, 1, 2}, {1, 3}, {0, 0}, {0, 0})) == std::vector<double>{-1, 1});
}

TEST_CASE("ada_layer_norm: s and b broadcast over the tokens of their batch element", "[ada_layer_norm]") {
  const Problem p = ada(Op::ada_layer_norm, {2, 2, 2}, {1, 3, 5, 7, 2, 4, 0, -2}, {1, 0, 0, 1}, {0, 3, 1, -1});
  CHECK(exact(p) == std::vector<double>{-2, 4, -2, 4, 0, 1, 2, -3});
  CHECK(normcheck::test::cpu(p) == std::vector<double>{-2, 4, -2, 4, 0, 1, 2, -3});
}

TEST_CASE("ada_layer_norm: gate 0 gives h = x exactly", "[ada_layer_norm][gate]") {
  const auto x = generate_normal(2 * 5 * 48, 0.3, 3.0, 17);
  Problem p = ada(Op::ada_layer_norm, {2, 5, 48}, x, generate_normal(96, 0, 1, 18), generate_normal(96, 0, 1, 19), DType::f32);
  p.conv.eps = 1e-5;
  p.conv.gated = true;
  p.inputs["gate"] = tensor({2, 48}, std::vector<double>(96, 0.0), DType::f32);
  const auto xs = p.inputs.at("x").to_doubles();
  CHECK(exact(p, "h") == xs);
  CHECK(normcheck::test::cpu(p, "h") == xs);
}

TEST_CASE("ada_layer_norm: the gated residual h = x + g y", "[ada_layer_norm][gate]") {
  Problem p = ada(Op::ada_layer_norm, {2, 2, 2}, {1, 3, 5, 7, 2, 4, 0, -2}, {1, 0, 0, 1}, {0, 3, 1, -1});
  p.conv.gated = true;
  p.inputs["gate"] = tensor({2, 2}, {0, 0, 0.5, 2});
  CHECK(exact(p, "h") == std::vector<double>{1, 3, 5, 7, 2, 6, 1, -8});
}

TEST_CASE("ada_rms_norm: the RMS denominator, then the same modulation", "[ada_rms_norm]") {
  CHECK(exact(ada(Op::ada_rms_norm, {1, 1, 2}, {-1, 1}, {1, 0}, {0, 3})) == std::vector<double>{-2, 4});
  CHECK(exact(ada(Op::ada_rms_norm, {1, 1, 2}, {1, 3}, {1, 0}, {0, 3})) ==
        std::vector<double>{0.8944271909999158786, 4.341640786499873818});
}

TEST_CASE("ada_layer_norm: scale, shift and gate must be [B, d]", "[ada_layer_norm][validate]") {
  Problem p = ada(Op::ada_layer_norm, {2, 3, 4}, std::vector<double>(24, 1.0), std::vector<double>(8, 0.0),
                  std::vector<double>(8, 0.0));
  CHECK_NOTHROW(validate(p));
  p.inputs["scale"] = tensor({3, 4}, std::vector<double>(12, 0.0));
  try {
    validate(p);
    FAIL("scale [T, d] accepted");
  } catch (const SpecError& e) {
    CHECK(e.field == "inputs.scale.shape");
  }
  p.inputs["scale"] = tensor({2, 4}, std::vector<double>(8, 0.0));
  p.conv.gated = true;
  try {
    validate(p);
    FAIL("gated without a gate accepted");
  } catch (const SpecError& e) {
    CHECK(e.field == "inputs.gate");
  }
}
