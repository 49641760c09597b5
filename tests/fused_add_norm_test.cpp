// Fused residual add + norm (src/ops/fused_add_norm): the reference against hand-checked
// values, which value the norm reads (h as stored vs the unrounded sum), h in the residual's
// dtype, the validation rules, and the bundled cases' h kept away from rounding boundaries.
#include <cmath>

#include <catch2/catch.hpp>

#include "backends/registry.hpp"
#include "checks/check.hpp"
#include "ops/fused_add_norm/fused_add_norm.hpp"
#include "ops/reference.hpp"
#include "ops/registry.hpp"
#include "test_util.hpp"

using namespace normcheck;

namespace {

Problem fused(std::string_view op, DType xdt, DType rdt, Shape shape, const std::vector<double>& x, const std::vector<double>& r,
              double eps = 0.0) {
  Problem p;
  p.op = *ops::find(op);
  p.out_dtype = xdt;
  p.conv.eps = eps;
  p.conv.acc_dtype = xdt == DType::f64 ? DType::f64 : DType::f32;
  p.conv.normalized_shape = {shape.back()};
  p.inputs["x"] = Tensor::from_doubles(xdt, shape, x);
  p.inputs["residual"] = Tensor::from_doubles(rdt, shape, r);
  return p;
}

}  // namespace

TEST_CASE("fused_add_rms_norm: x + residual = [1, 2, 3] gives RMSNorm of [1, 2, 3] and h = [1, 2, 3]", "[fused_add_norm]") {
  const auto o = reference::evaluate_exact(fused("fused_add_rms_norm", DType::f64, DType::f64, {3}, {0.5, 1, 1.5}, {0.5, 1, 1.5}));
  CHECK(test::within_half_ulp_f64(o.at("y").rounded_at(0), 0.4629100498862757307833));
  CHECK(test::within_half_ulp_f64(o.at("y").rounded_at(2), 1.38873014965882719235));
  CHECK(o.at("h").rounded_at(1) == 2.0);
  // The binary64 twin of the template agrees to a few ULPs.
  const auto d = reference::evaluate_double(fused("fused_add_rms_norm", DType::f64, DType::f64, {3}, {0.5, 1, 1.5}, {0.5, 1, 1.5}));
  CHECK(std::fabs(d.at("y").rounded_at(2) - o.at("y").rounded_at(2)) <= 4 * ulp(DType::f64, 1.0));
}

TEST_CASE("fused_add_layer_norm: the norm reads h as stored (a bf16 tie gives a constant row) or the unrounded sum", "[fused_add_norm]") {
  Problem p = fused("fused_add_layer_norm", DType::bf16, DType::bf16, {1, 2}, {1, 1}, {0x1p-8, 0}, 1e-5);
  const auto rounded = reference::evaluate_exact(p);
  CHECK(rounded.at("y").rounded_at(0) == 0.0);  // h = [1, 1]: a constant row
  CHECK(rounded.at("h").rounded_at(0) == 1.0);  // 1 + 2^-8 is the tie between 1 and 1 + 2^-7: to even
  CHECK(rounded.at("h").exact_at(0) == 1.0L + 0x1p-8L);  // h's exact value is the sum itself
  p.conv.norm_input = NormInput::unrounded;
  const auto unrounded = reference::evaluate_exact(p);
  CHECK(std::fabs(unrounded.at("y").exact_at(0) - 0.525483825499449357398L) < 1e-15L);
  CHECK(unrounded.at("h").rounded_at(0) == 1.0);  // h is stored rounded either way
  // The cpu kernel reads what the convention says; its mutant reads the other value.
  auto cpu = make_backend("cpu");
  CHECK(cpu->run(validate(p), {}).at("y").get(0) > 0.5);
  CHECK(ops::fused::cpu_flipped(p).at("y").get(0) == 0.0);
}

TEST_CASE("fused_add_norm: h has the residual's dtype (bf16 activations, f32 residual stream)", "[fused_add_norm]") {
  const Problem p = fused("fused_add_rms_norm", DType::bf16, DType::f32, {3}, {1, 2, 3}, {0.5, 0.25, 0.125});
  CHECK(output_dtype(p, "h") == DType::f32);
  CHECK(output_dtype(p, "y") == DType::bf16);
  const ExactOutputs ref = reference::evaluate_exact(p);
  CHECK(ref.at("h").dtype == DType::f32);
  auto cpu = make_backend("cpu");
  Outputs o = cpu->run(validate(p), {});
  CHECK(o.at("h").get(2) == 3.125);
  CHECK_NOTHROW(check_outputs(p, o, ref));
  o["h"] = o.at("h").cast(DType::bf16);  // h stored in x's dtype: a broken backend, not a failed check
  CHECK_THROWS_WITH(check_outputs(p, o, ref), Catch::Contains("output 'h' has dtype bf16, expected f32"));
}

TEST_CASE("fused_add_norm: validation names the field", "[fused_add_norm][spec]") {
  Problem p = fused("fused_add_rms_norm", DType::f32, DType::f32, {2, 3}, {1, 2, 3, 4, 5, 6}, {1, 2, 3, 4, 5, 6});
  Problem q = p;
  q.inputs.erase("residual");
  CHECK_THROWS_WITH(validate(q), Catch::Contains("needs input residual"));
  q = p;
  q.inputs["residual"] = Tensor::from_doubles(DType::f32, {3}, {1, 2, 3});
  CHECK_THROWS_WITH(validate(q), Catch::Contains("residual has shape [3], expected x's [2, 3]"));
  q = p;
  q.inputs["residual"] = p.inputs.at("residual").cast(DType::fp8_e4m3fn);
  CHECK_THROWS_WITH(validate(q), Catch::Contains("not fp8_e4m3fn"));
  q = p;
  q.inputs["bias"] = Tensor::from_doubles(DType::f32, {2}, {1, 2});
  CHECK_THROWS_WITH(validate(q), Catch::Contains("bias has shape [2], expected normalized_shape [3]"));
  q = p;
  q.out_dtype = DType::int8;
  CHECK_THROWS_WITH(validate(q), Catch::Contains("has no quantized output"));
}

TEST_CASE("fused_add_norm: in the bundled cases no stored h lies within reach of a rounding boundary of its dtype", "[fused_add_norm][cases]") {
  // With norm_input = rounded and h narrower than the accumulation, a kernel's wide sum (two
  // binary32 additions, error <= 2 u (|x| + |r| + |b|)) that lands on the other side of a
  // midpoint of h's dtype stores a neighbour: a legitimate but different input of the norm.
  // The bundled cases must not depend on that (reference.hpp): every such element's wide sum
  // is exact in binary32, or its exact value keeps 4 u (|x| + |r| + |b|) from every midpoint.
  int checked = 0;
  for (const std::string dir : {"cases/fused_add_rms_norm", "cases/fused_add_layer_norm", "cases/rms_norm_quant", "cases/layer_norm_quant"})
    for (const auto& f : find_case_files({test::source_path(dir)}))
      for (const Case& c : parse_case_file(f)) {
        const Problem& p = c.problem;
        const Tensor* r = p.input("residual");
        if (!r || p.conv.norm_input != NormInput::rounded || r->dtype() == DType::f32 || r->dtype() == DType::f64) continue;
        const Tensor& x = p.x();
        const Tensor* b = p.input("bias");
        const std::int64_t m = p.conv.normalized_shape.back();
        for (std::int64_t i = 0; i < x.size(); ++i) {
          const long double bv = b ? b->get(i % m) : 0.0;
          const long double exact = static_cast<long double>(x.get(i)) + r->get(i) + bv;  // 64-bit significand: exact here
          float wide = static_cast<float>(x.get(i)) + static_cast<float>(r->get(i));
          if (b) wide += static_cast<float>(bv);
          ++checked;
          if (static_cast<long double>(wide) == exact || !std::isfinite(exact)) continue;
          const double stored = round_to(r->dtype(), exact);
          const long double step = ulp(r->dtype(), static_cast<double>(exact));
          const long double to_mid = std::fabs(std::fabs(exact - stored) - step / 2);
          const long double reach = 4 * 0x1p-24L * (std::fabs(x.get(i)) + std::fabs(r->get(i)) + std::fabs(bv));
          INFO(c.name << " element " << i);
          CHECK(to_mid > reach);
        }
      }
  CHECK(checked > 10000);
}
