// Saved statistics (issue 16): mean and rstd = 1 / D(var) as optional outputs of layer_norm,
// rms_norm, group_norm, instance_norm and batch_norm forward. The reference's values, the cpu
// kernel's within the gate, and the runner's rules: measured and gated when a backend returns
// them, named as not returned otherwise, an error when returned with the wrong dtype.
#include <cmath>
#include <functional>

#include <catch2/catch.hpp>

#include "backends/registry.hpp"
#include "checks/budget.hpp"
#include "checks/runner.hpp"
#include "ops/reference.hpp"
#include "test_util.hpp"

using namespace normcheck;

namespace {

/// The cpu backend with its outputs edited: saved statistics dropped, changed or retyped.
class EditedCpu final : public Backend {
 public:
  explicit EditedCpu(std::function<void(Outputs&)> edit) : edit_(std::move(edit)) {}
  std::string name() const override { return "edited-cpu"; }
  std::string description() const override { return "cpu with edited outputs (test)"; }
  std::optional<std::string> unsupported(const ValidProblem&, const Recorded&) const override { return std::nullopt; }
  Outputs run(const ValidProblem& p, const Recorded& rec) override {
    Outputs o = cpu_->run(p, rec);
    edit_(o);
    return o;
  }

 private:
  std::unique_ptr<Backend> cpu_ = make_backend("cpu");
  std::function<void(Outputs&)> edit_;
};

CaseResult run_one(const Problem& p, std::function<void(Outputs&)> edit) {
  static std::vector<Case> cases;
  cases.clear();
  Case c;
  c.name = "saved_stats";
  c.file = "test";
  c.problem = p;
  cases.push_back(c);
  std::vector<std::unique_ptr<Backend>> bs;
  bs.push_back(std::make_unique<EditedCpu>(std::move(edit)));
  return run_cases(cases, bs, {}).at(0);
}

Problem channel_problem(Op op, Shape shape, std::int64_t groups = 0) {
  Problem p;
  p.op = op;
  p.out_dtype = DType::f32;
  p.conv.num_groups = groups;
  p.conv.track_running_stats = false;
  p.inputs["x"] = Tensor::from_doubles(DType::f32, shape, generate_normal(numel(shape), 3.0, 2.0, 1611));
  return p;
}

}  // namespace

TEST_CASE("saved statistics: layer_norm of [1, 2, 3] saves mean 2 and rstd sqrt(3/2), rms_norm rstd 1/sqrt(14/3)", "[saved_stats]") {
  const auto ln = reference::evaluate_exact(test::row_problem(Op::layer_norm, DType::f64, {3}, {1, 2, 3}));
  REQUIRE(ln.count("mean"));
  CHECK(ln.at("mean").shape == Shape{1});
  CHECK(ln.at("mean").rounded_at(0) == 2.0);
  CHECK(test::within_half_ulp_f64(ln.at("rstd").rounded_at(0), 1.224744871391589049));
  const auto rms = reference::evaluate_exact(test::row_problem(Op::rms_norm, DType::f64, {3}, {1, 2, 3}));
  CHECK_FALSE(rms.count("mean"));  // RMSNorm has no mean to save
  CHECK(test::within_half_ulp_f64(rms.at("rstd").rounded_at(0), 0.4629100498862757308));
  // eps enters rstd as it enters y: [5, 5, 5] with eps 1e-5 saves 1/sqrt(1e-5).
  const auto c = reference::evaluate_exact(test::row_problem(Op::layer_norm, DType::f32, {3}, {5, 5, 5}, 1e-5));
  CHECK(c.at("rstd").rounded_at(0) == static_cast<float>(316.22776601683793));
  CHECK(c.at("rstd").dtype == DType::f32);
  CHECK(is_optional_output(test::row_problem(Op::layer_norm, DType::f32, {3}, {1, 2, 3}), "rstd"));
  CHECK_FALSE(is_optional_output(test::row_problem(Op::layer_norm, DType::f32, {3}, {1, 2, 3}), "y"));
}

TEST_CASE("saved statistics: the cpu kernels' mean and rstd meet the gate (layer_norm, rms_norm, group_norm, instance_norm, batch_norm)", "[saved_stats][cpu]") {
  std::vector<Problem> ps;
  for (DType dt : {DType::f32, DType::bf16, DType::f64}) {
    ps.push_back(test::row_problem(Op::layer_norm, dt, {4, 77}, generate_normal(308, 100.0, 1.0, 1612), 1e-5));
    ps.push_back(test::row_problem(Op::rms_norm, dt, {4, 77}, generate_normal(308, 0.0, 3.0, 1613), 1e-6));
  }
  ps.push_back(channel_problem(Op::group_norm, {2, 6, 5}, 3));
  ps.push_back(channel_problem(Op::instance_norm, {2, 6, 5}));
  ps.push_back(channel_problem(Op::batch_norm, {4, 3, 5}));
  auto cpu = make_backend("cpu");
  for (const Problem& p : ps) {
    INFO(p.op.name() << " " << dtype_name(p.x().dtype()));
    const ExactOutputs ref = reference::evaluate_exact(p);
    const Outputs o = cpu->run(validate(p), {});
    const double gate = default_gate(p).max;
    for (const char* s : {"mean", "rstd"}) {
      if (!ref.count(s)) continue;
      REQUIRE(o.count(s));
      CHECK(o.at(s).dtype() == saved_stat_dtype(p));
      CHECK(o.at(s).shape() == ref.at(s).shape);
      CHECK(measure(o.at(s), ref.at(s), saved_stat_dtype(p), p.conv.acc_dtype).stab.value <= gate);
    }
  }
  // Shapes: group_norm [N, G], instance_norm [N, C], batch_norm [C]; eval batch_norm saves none.
  CHECK(output_shapes(ps[6]).at("rstd") == Shape{2, 3});
  CHECK(output_shapes(ps[7]).at("rstd") == Shape{2, 6});
  CHECK(output_shapes(ps[8]).at("mean") == Shape{3});
  Problem eval = ps[8];
  eval.conv.training = false;
  eval.conv.track_running_stats = true;
  eval.inputs["running_mean"] = Tensor::from_doubles(DType::f32, {3}, {0, 0, 0});
  eval.inputs["running_var"] = Tensor::from_doubles(DType::f32, {3}, {1, 1, 1});
  CHECK_FALSE(output_shapes(eval).count("mean"));
}

TEST_CASE("saved statistics: not returned is reported, a wrong one fails, a retyped one is an error", "[saved_stats][runner]") {
  const Problem p = test::row_problem(Op::layer_norm, DType::f32, {4, 16}, generate_normal(64, 1.0, 2.0, 1614), 1e-5);
  const CaseResult kept = run_one(p, [](Outputs&) {});
  CHECK(kept.status == Status::passed);
  CHECK(kept.output_metrics.size() == 3);  // y, mean, rstd
  const CaseResult dropped = run_one(p, [](Outputs& o) { o.erase("mean"); o.erase("rstd"); });
  CHECK(dropped.status == Status::passed);
  REQUIRE_FALSE(dropped.checks.empty());
  CHECK_THAT(dropped.checks[0].detail, Catch::Contains("not returned (optional, not checked): mean, rstd"));
  CHECK(dropped.output_metrics.size() == 1);
  // rstd = sqrt(var + eps) instead of its reciprocal: never a silent pass.
  const CaseResult wrong = run_one(p, [](Outputs& o) {
    for (std::int64_t i = 0; i < o.at("rstd").size(); ++i) o.at("rstd").set(i, 1.0 / o.at("rstd").get(i));
  });
  CHECK(wrong.status == Status::failed);
  const CaseResult retyped = run_one(p, [](Outputs& o) { o["rstd"] = o.at("rstd").cast(DType::bf16); });
  CHECK(retyped.status == Status::error);
  CHECK_THAT(retyped.reason, Catch::Contains("output 'rstd' has dtype bf16, expected f32"));
}
