// Norm + quantization (src/ops/quant_norm): the quantized-output metric (quantization steps,
// a tie judged by the budget), the reference against hand-checked values, saturation and
// NaN rules, validation, and the injected faults of the mutants against the gate.
#include <cmath>

#include <catch2/catch.hpp>

#include "backends/registry.hpp"
#include "checks/budget.hpp"
#include "checks/metrics.hpp"
#include "ops/quant_norm/quant_norm.hpp"
#include "ops/reference.hpp"
#include "ops/registry.hpp"
#include "test_util.hpp"

using namespace normcheck;

namespace {

Problem quant(std::string_view op, DType x, DType out, Shape shape, const std::vector<double>& v, QuantScale qs = QuantScale::dynamic_per_token) {
  Problem p;
  p.op = *ops::find(op);
  p.out_dtype = out;
  p.conv.eps = 0.0;
  p.conv.quant_scale = qs;
  p.conv.acc_dtype = DType::f32;
  p.conv.normalized_shape = {shape.back()};
  p.inputs["x"] = Tensor::from_doubles(x, shape, v);
  return p;
}

/// The gate's value on output `name` of backend outputs `o` against the reference.
double stab_of(const Problem& p, const Outputs& o, const std::string& name) {
  const ExactOutputs ref = reference::evaluate_exact(p);
  return measure(o.at(name), ref.at(name), output_dtype(p, name), p.conv.acc_dtype).stab.value;
}

}  // namespace

TEST_CASE("stab_of: at most one correct rounding is 1, a tie either way passes, a wrong step does not", "[quant][metrics]") {
  CHECK(stab_of(0.0L, 16.0L, 1e-4L) == 0);
  CHECK(stab_of(8.0L, 16.0L, 1e-4L) == 1);  // an exact tie rounded either way
  CHECK(stab_of(8.0L + 3e-4L, 16.0L, 1e-4L) == Approx(4.0));  // 3 units of the kernel's allowance past the tie
  CHECK(stab_of(12.0L, 16.0L, 1e-4L) > 1e4);  // three quarters of a step: the wrong neighbour
  CHECK(std::isinf(static_cast<double>(stab_of(9.0L, 16.0L, 0.0L))));
  // Through measure(): v = 29.63 on the e4m3fn grid (spacing 2): 30 is right, 28 is a whole
  // step away from it (truncation), and the plain stab formula would have let 28 through.
  const ExactOutput r = ExactOutput::of_values(DType::fp8_e4m3fn, {1}, {29.626243192721647L}, {30.0});
  const double good = measure(Tensor::from_doubles(DType::fp8_e4m3fn, {1}, {30}), r, DType::fp8_e4m3fn, DType::f32).stab.value;
  const double trunc = measure(Tensor::from_doubles(DType::fp8_e4m3fn, {1}, {28}), r, DType::fp8_e4m3fn, DType::f32).stab.value;
  CHECK(good <= 1);
  CHECK(trunc > 1e4);
  CHECK(1.626 / (1.0 + 0x1p-24 * 30) < 9);  // the old formula: within any gate of 9 + sqrt(m)
}

TEST_CASE("rms_norm_quant: dynamic per-token e4m3fn of [1, 2, 3] is [144, 288, 448], scale y_3 / 448", "[quant]") {
  const auto o = reference::evaluate_exact(quant("rms_norm_quant", DType::f32, DType::fp8_e4m3fn, {3}, {1, 2, 3}));
  CHECK(o.at("y").rounded_at(0) == 144);
  CHECK(o.at("y").rounded_at(1) == 288);
  CHECK(o.at("y").rounded_at(2) == 448);
  // The exact pre-quantization value divides by the scale as stored (binary32): y_1 / fl32(y_3 / 448)
  // with y_1 = 1 / sqrt(14/3), y_3 = 3 y_1; 448/3 to within binary32's rounding of the scale.
  const long double y1 = 1.0L / std::sqrt(14.0L / 3), s32 = static_cast<float>(3 * y1 / 448);
  CHECK(std::fabs(o.at("y").exact_at(0) - y1 / s32) < 1e-13L);
  CHECK(std::fabs(o.at("y").exact_at(0) - 448.0L / 3) < 448.0L / 3 * 0x1p-24L);
  CHECK(o.at("scale").dtype == DType::f32);
  CHECK(o.at("scale").rounded_at(0) == static_cast<float>(0.003099844084059882125781));
}

TEST_CASE("rms_norm_quant: saturation reports the clamped value, no saturation the format's inf or NaN", "[quant]") {
  Problem p = quant("rms_norm_quant", DType::f32, DType::fp8_e4m3fn, {3}, {1, 2, 3}, QuantScale::static_per_tensor);
  p.inputs["scale"] = Tensor::from_doubles(DType::f32, {1}, {0.0025});
  auto o = reference::evaluate_exact(p);
  CHECK(o.at("y").rounded_at(2) == 448);
  CHECK(o.at("y").exact_at(2) == 448);  // clamped exact value
  p.conv.saturate = false;
  o = reference::evaluate_exact(p);
  CHECK(std::isnan(o.at("y").rounded_at(2)));
  CHECK(std::isnan(static_cast<double>(o.at("y").exact_at(2))));
  p.out_dtype = DType::fp8_e5m2;
  p.inputs["scale"] = Tensor::from_doubles(DType::f32, {1}, {2e-5});
  o = reference::evaluate_exact(p);
  CHECK(o.at("y").rounded_at(2) == HUGE_VAL);
}

TEST_CASE("rms_norm_quant: an all-zero row takes the scale floor, or gives NaN (e4m3fn) and 0 (int8) without one", "[quant][degenerate]") {
  Problem p = quant("rms_norm_quant", DType::f32, DType::fp8_e4m3fn, {2, 4}, {0, 0, 0, 0, 1, 1, 1, 1});
  p.conv.eps = 1e-6;
  auto o = reference::evaluate_exact(p);
  CHECK(std::isnan(o.at("y").rounded_at(0)));
  CHECK(o.at("scale").rounded_at(0) == 0);
  p.conv.scale_floor = 1.0 / (448 * 512);
  o = reference::evaluate_exact(p);
  CHECK(o.at("y").rounded_at(0) == 0);
  CHECK(o.at("scale").rounded_at(0) == static_cast<float>(1.0 / (448 * 512)));
  p.conv.scale_floor = 0;
  p.out_dtype = DType::int8;
  o = reference::evaluate_exact(p);
  CHECK(o.at("y").rounded_at(0) == 0);
  CHECK(o.at("y").exact_at(0) == 0);
  CHECK(o.at("y").rounded_at(4) == 127);
  auto cpu = make_backend("cpu");
  CHECK(stab_of(p, cpu->run(validate(p), {}), "y") <= 1);
}

TEST_CASE("quant ops: validation names the field", "[quant][spec]") {
  Problem p = quant("rms_norm_quant", DType::f32, DType::int8, {4}, {1, 2, 3, 4});
  Problem q = p;
  q.out_dtype = DType::f32;
  CHECK_THROWS_WITH(validate(q), Catch::Contains("out_dtype must be fp8_e4m3fn, fp8_e5m2 or int8"));
  q = p;
  q.conv.saturate = false;
  CHECK_THROWS_WITH(validate(q), Catch::Contains("int8 has no inf or NaN"));
  q = p;
  q.conv.quant_scale = QuantScale::static_per_tensor;
  CHECK_THROWS_WITH(validate(q), Catch::Contains("input scale is required"));
  q.inputs["scale"] = Tensor::from_doubles(DType::f32, {1}, {0});
  CHECK_THROWS_WITH(validate(q), Catch::Contains("scale must be finite and > 0"));
  q.inputs["scale"] = Tensor::from_doubles(DType::f32, {1}, {0.5});
  q.conv.scale_floor = 1e-6;
  CHECK_THROWS_WITH(validate(q), Catch::Contains("scale_floor applies to the dynamic scale only"));
  q = p;
  q.conv.acc_dtype = DType::fp8_e4m3fn;
  CHECK_THROWS_WITH(validate(q), Catch::Contains("no kernel accumulates in fp8_e4m3fn"));
  // The non-quantizing ops refuse a quantized output.
  Problem ln = test::row_problem(Op::layer_norm, DType::f32, {4}, {1, 2, 3, 4});
  ln.out_dtype = DType::fp8_e5m2;
  CHECK_THROWS_WITH(validate(ln), Catch::Contains("layer_norm has no quantized output"));
}

TEMPLATE_TEST_CASE_SIG("quant ops: the cpu kernel meets the gate and each injected fault fails it on random rows", "[quant][cpu]",
                       ((DType T), T), DType::fp8_e4m3fn, DType::fp8_e5m2, DType::int8) {
  for (std::string_view op : {"rms_norm_quant", "layer_norm_quant"}) {
    INFO(op);
    Problem p = quant(op, DType::bf16, T, {8, 96}, generate_normal(768, 0.0, 1.0, 1601));
    p.conv.eps = 1e-5;
    p.conv.affine = Affine::gamma;
    p.inputs["gamma"] = Tensor::from_doubles(DType::bf16, {96}, generate_uniform(96, 0.5, 4.0, 1602));
    const double gate = default_gate(p).max;
    CHECK(gate == Approx(1 + 12 + std::sqrt(96.0)));
    auto cpu = make_backend("cpu");
    const Outputs good = cpu->run(validate(p), {});
    CHECK(stab_of(p, good, "y") <= gate);
    CHECK(stab_of(p, good, "scale") <= gate);
    CHECK(stab_of(p, ops::quant::cpu_with(p, {.toward_zero = true}), "y") > gate);
    CHECK(stab_of(p, ops::quant::cpu_with(p, {.scale_pre_gamma = true}), "scale") > gate);
    CHECK(stab_of(p, ops::quant::cpu_with(p, {.per_tensor = true}), "scale") > gate);
  }
}
