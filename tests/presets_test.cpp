// The catalog of framework conventions (ops/presets.hpp), as case files and compare-eps use it.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cases/case.hpp"
#include "backends/registry.hpp"
#include "checks/compare_eps.hpp"
#include "core/error.hpp"
#include "ops/presets.hpp"
#include "ops/reference.hpp"
#include "ops/registry.hpp"
#include "spec/convention.hpp"

using namespace normcheck;

namespace {
Convention of(std::string_view name, DType dt = DType::f32) {
  const Preset* p = find_preset(name);
  REQUIRE(p != nullptr);
  Convention c = default_convention(p->op);
  apply_preset(*p, dt, c);
  return c;
}
Case one_case(const std::string& text) {
  const auto cases = parse_case_text(text, "presets.toml");
  REQUIRE(cases.size() == 1);
  return cases[0];
}
constexpr const char* kLn = R"(
[[case]]
name = "c"
op = "layer_norm"
dtype = "f32"
inputs.x = { values = [1.0, 2.0, 3.0, 4.0] }
inputs.gamma = { values = [1.0, 1.0, 1.0, 1.0] }
inputs.beta = { values = [0.0, 0.0, 0.0, 0.0] }
)";
}  // namespace

TEST_CASE("presets: every entry is complete, named framework.Layer, and its fields read for every dtype", "[presets]") {
  std::set<std::string_view> names;
  REQUIRE(presets().size() >= 30);
  for (const Preset& p : presets()) {
    INFO(p.name);
    CHECK(names.insert(p.name).second);
    CHECK(p.name.find('.') != std::string_view::npos);
    CHECK(p.name.find_first_of(" ,=") == std::string_view::npos);  // usable in --conv NAME,eps=...
    CHECK(!p.fields.empty());
    CHECK(!p.accumulation.empty());
    CHECK(!p.rounding.empty());
    CHECK(p.source.size() > 20);
    CHECK((p.verified.rfind("read from source", 0) == 0 || p.verified.rfind("read from documentation", 0) == 0));
    // "run: tests/X" names a test that really runs this preset's framework layer.
    if (const auto at = p.verified.find("run: "); at != std::string_view::npos) {
      const std::string file(p.verified.substr(at + 5, p.verified.find(' ', at + 5) - at - 5));
      std::ifstream in(std::string(NORMCHECK_SOURCE_DIR) + "/" + file);
      REQUIRE(in.good());
      const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      bool checked = false;
      for (const char* form : {"\ncheck {}\n", "\ncheck {} ", "\n  check {} ", "\ncheck_bn {}\n", "\n  check_bn {}\n", "\ncheck_case {} ",
                               "\n  check_case {} "})
        checked = checked || text.find(fmt::format(fmt::runtime(form), p.name)) != std::string::npos;
      CHECK(checked);
    }
    CHECK(find_preset(p.name) == &p);
    for (DType dt : {DType::f64, DType::f32, DType::f16, DType::bf16}) {
      Convention c = default_convention(p.op);
      if (!p.unexpressible.empty()) {
        CHECK_THROWS_AS(apply_preset(p, dt, c), UsageError);
        continue;
      }
      REQUIRE_NOTHROW(apply_preset(p, dt, c));
      // Every field the preset names is in the convention it produced.
      const std::string text = convention_json(c, p.op).dump();
      CHECK(c.eps >= 0);
      CHECK(text.find("\"eps\"") != std::string::npos);
    }
  }
}

TEST_CASE("presets: the values read from each framework", "[presets]") {
  // PyTorch's RMSNorm eps=None is the epsilon of the opmath dtype (rms_norm_composite), not
  // finfo(x.dtype).eps as its documentation says: 2^-23 for bf16 data, not 2^-7.
  CHECK(of("pytorch.RMSNorm", DType::bf16).eps == std::ldexp(1.0, -23));
  CHECK(of("pytorch.RMSNorm", DType::f16).eps == std::ldexp(1.0, -23));
  CHECK(of("pytorch.RMSNorm", DType::f32).eps == std::ldexp(1.0, -23));
  CHECK(of("pytorch.RMSNorm", DType::f64).eps == std::ldexp(1.0, -52));
  CHECK(of("pytorch.RMSNorm").affine == Affine::gamma);
  const Convention t = of("pytorch.LayerNorm");
  CHECK(t.eps == 1e-5);
  CHECK(t.eps_placement == EpsPlacement::inside_sqrt);
  CHECK(t.variance == Variance::biased);
  CHECK(t.affine == Affine::gamma_beta);
  CHECK(of("keras.LayerNormalization").eps == 1e-3);
  CHECK(of("flax.LayerNorm").eps == 1e-6);
  CHECK(of("hf.GemmaRMSNorm").affine == Affine::one_plus_w);
  CHECK(of("hf.LlamaRMSNorm").eps == 1e-6);
  CHECK(of("ggml.NORM").affine == Affine::none);
  CHECK(of("pytorch.F.normalize").eps_placement == EpsPlacement::clamp_norm);
  CHECK(of("pytorch.F.normalize").eps == 1e-12);
  CHECK(of("tf.math.l2_normalize").eps_placement == EpsPlacement::clamp_var);  // the clamp on the squared norm
  CHECK(of("onnx.LpNormalization").eps == 0);
  const Convention bn = of("pytorch.BatchNorm2d");
  REQUIRE(bn.momentum.has_value());
  CHECK(*bn.momentum == 0.1);
  CHECK(bn.training);
  const Convention obn = of("onnx.BatchNormalization");
  CHECK(!obn.training);  // training_mode=0
  CHECK(*obn.momentum == Approx(0.1));  // ONNX's momentum 0.9 weighs the old value
  // Refused until qk_norm can state its rounding order (never run with one rounding instead).
  CHECK(find_preset("hf.Qwen3QKNorm")->fields.find("qk_form=rms") != std::string_view::npos);
  Convention qk = default_convention(Op::qk_norm);
  CHECK_THROWS_WITH(apply_preset(*find_preset("hf.Qwen3QKNorm"), DType::bf16, qk), Catch::Contains("normalized_dtype"));
  CHECK(of("pytorch.InstanceNorm2d").affine == Affine::none);
  CHECK(bn.running_variance == Variance::unbiased);  // PyTorch folds the unbiased batch variance into running_var
  const Convention kbn = of("keras.BatchNormalization");
  CHECK(kbn.running_variance == Variance::biased);  // Keras and Flax the biased one
  CHECK(*kbn.momentum == Approx(0.01));              // Keras's momentum 0.99 weighs the old value
  CHECK(kbn.eps == 1e-3);
  CHECK(of("flax.BatchNorm").running_variance == Variance::biased);
  // What normcheck cannot state is refused, never approximated (no entry needs it today).
  const Preset odd{"x.Odd", Op::batch_norm, "eps=1e-5", "f32", "once", "a source of twenty chars", "read from source",
                   "its running var is a median", ""};
  Convention c = default_convention(Op::batch_norm);
  CHECK_THROWS_WITH(apply_preset(odd, DType::f32, c), Catch::Contains("median"));
}

TEST_CASE("presets: unknown names are refused with a suggestion", "[presets]") {
  CHECK(find_preset("pytorch.layernorm") == nullptr);  // exact spelling only
  CHECK_THAT(unknown_preset_message("pytorch.layernorm"), Catch::Contains("did you mean pytorch.LayerNorm?"));
  CHECK_THAT(unknown_preset_message("zzz"), !Catch::Contains("did you mean"));
}

TEST_CASE("presets in case files: convention = NAME, preset = NAME with overrides", "[presets][parser]") {
  const Case a = one_case(std::string(kLn) + "convention = \"keras.LayerNormalization\"\n");
  CHECK(a.problem.conv.eps == 1e-3);
  CHECK(a.problem.conv.affine == Affine::gamma_beta);
  CHECK(a.problem.conv.normalized_shape == Shape{4});  // the case's, not the preset's
  const Case b = one_case(std::string(kLn) + "convention = { preset = \"keras.LayerNormalization\", eps = 1e-4 }\n");
  CHECK(b.problem.conv.eps == 1e-4);  // a key beside the preset overrides it
  CHECK(b.problem.conv.affine == Affine::gamma_beta);
  // [defaults] keys override a case's preset too (documented: explicit keys win).
  const Case d = one_case("[defaults]\nconvention.eps = 2e-5\n" + std::string(kLn) + "convention = \"pytorch.LayerNorm\"\n");
  CHECK(d.problem.conv.eps == 2e-5);
  // Errors name the file, the line and the field.
  try {
    one_case(std::string(kLn) + "convention = \"pytorch.layernorm\"\n");
    FAIL("an unknown preset was accepted");
  } catch (const CaseError& e) {
    CHECK(e.field == "case.c.convention");
    CHECK(e.line == 9);
    CHECK_THAT(e.what(), Catch::Contains("did you mean pytorch.LayerNorm"));
  }
  CHECK_THROWS_WITH(one_case(std::string(kLn) + "convention.preset = \"hf.LlamaRMSNorm\"\n"),
                    Catch::Contains("preset hf.LlamaRMSNorm is a convention of rms_norm; this case's op is layer_norm"));
  CHECK_THROWS_WITH(one_case(std::string(kLn) + "convention.preset = 3\n"), Catch::Contains("presets.toml:9: case.c.convention.preset: expected a string"));
  // A preset whose affine the case's inputs do not match fails the op's rules, as a field would.
  CHECK_THROWS_AS(one_case(std::string(kLn) + "convention = \"ggml.NORM\"\n"), CaseError);
}

TEST_CASE("presets in compare-eps: NAME[,overrides], the op checked", "[presets][compare_eps]") {
  CHECK(parse_convention_spec("pytorch.RMSNorm", Op::rms_norm, DType::bf16).conv.eps == std::ldexp(1.0, -23));
  const auto o = parse_convention_spec("pytorch.LayerNorm,eps=1e-6", Op::layer_norm, DType::f32);
  CHECK(o.conv.eps == 1e-6);
  CHECK(o.label == "pytorch.LayerNorm,eps=1e-6");
  CHECK_THROWS_WITH(parse_convention_spec("pytorch.LayerNorm", Op::rms_norm, DType::f32), Catch::Contains("not of rms_norm"));
  CHECK_THROWS_WITH(parse_convention_spec("pytorch.LayerNorm,affine=none", Op::layer_norm, DType::f32), Catch::Contains("unknown key"));
  CHECK_THROWS_WITH(parse_convention_spec("keras.LayerNorm", Op::layer_norm, DType::f32), Catch::Contains("did you mean"));
  for (Op op : {Op::layer_norm, Op::rms_norm})
    for (const auto& name : default_compare_presets(op)) CHECK_NOTHROW(parse_convention_spec(name, op, DType::f32));
}

TEST_CASE("normalized_dtype: Llama rounds the normalized value to x's dtype before the weight", "[presets][rounding]") {
  // x = [1, 5] bf16, eps 1e-6, weight [3, 3]: n = x / sqrt(13 + 1e-6) = [0.27735, 1.3867504].
  // Llama (hf.LlamaRMSNorm, normalized_dtype = bf16): round(1.3867504) = 1.390625 (bf16 steps of
  // 2^-7 in [1, 2)); 3 * 1.390625 = 4.171875 is a tie between 4.15625 and 4.1875 (steps of 2^-5
  // in [4, 8)), even: 4.1875. One rounding (normalized_dtype none): round(4.1602512) = 4.15625.
  Problem p;
  p.op = Op::rms_norm;
  p.conv = default_convention(Op::rms_norm);
  apply_preset(*find_preset("hf.LlamaRMSNorm"), DType::bf16, p.conv);
  REQUIRE(p.conv.normalized_dtype == DType::bf16);
  p.conv.normalized_shape = Shape{2};
  p.out_dtype = DType::bf16;
  p.inputs["x"] = Tensor::from_doubles(DType::bf16, Shape{1, 2}, {1, 5});
  p.inputs["gamma"] = Tensor::from_doubles(DType::bf16, Shape{2}, {3, 3});
  const auto llama = reference::evaluate_exact(p).at("y").rounded().to_doubles();
  CHECK(llama == std::vector<double>{0.83203125, 4.1875});
  auto cpu = make_backend("cpu");
  CHECK(cpu->run(validate(p), {}).at("y").to_doubles() == llama);  // the kernel rounds where the convention says
  p.conv.normalized_dtype.reset();
  const auto once = reference::evaluate_exact(p).at("y").rounded().to_doubles();
  CHECK(once == std::vector<double>{0.83203125, 4.15625});
  CHECK(cpu->run(validate(p), {}).at("y").to_doubles() == once);
  // The backward does not read it (the cast's derivative is 1, as autograd takes it): a backward
  // case under a preset that sets it has the gradients of the same formula.
  p.conv.direction = Direction::backward;
  p.inputs["dy"] = Tensor::from_doubles(DType::bf16, Shape{1, 2}, {1, 0.5});
  const auto plain = reference::evaluate_exact(p).at("dx").exact_values();
  p.conv.normalized_dtype = DType::bf16;
  CHECK(reference::evaluate_exact(p).at("dx").exact_values() == plain);
}
