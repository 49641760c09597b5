// C-ABI plugins and external workers through the Backend interface: the example plugin
// meets the default gate; a crash fails one evaluation and the next one gets a new worker.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include "spec/backend.hpp"
#include "checks/budget.hpp"
#include "checks/metrics.hpp"
#include "test_util.hpp"
#include "backends/registry.hpp"

using namespace normcheck;
using test::row_problem;

namespace {
BackendOptions host_options() {
  BackendOptions o;
  o.host_exe = NORMCHECK_BIN;  // this test binary is not normcheck: name the plugin host
  o.timeout_s = 60;
  return o;
}
std::string plugin(const std::string& name) { return fmt::format("plugin:{}/libnc_{}.so", NORMCHECK_PLUGIN_DIR, name); }

/// stab of the backend's y against the exact reference.
double stab_of(Backend& b, const Problem& problem) {
  const ValidProblem vp = validate(problem);
  const Problem& p = *vp;
  REQUIRE_FALSE(b.unsupported(vp, {}));
  const Outputs o = b.run(vp, {});
  return measure(o.at("y"), reference::evaluate_exact(p).at("y"), p.out_dtype, p.conv.acc_dtype).stab.value;
}
}  // namespace

TEMPLATE_TEST_CASE_SIG("plugin: the example plugin meets the default gate on random rows", "[plugin]", ((DType T), T),
                       DType::f64, DType::f32, DType::f16, DType::bf16) {
  auto b = make_backend(plugin("example_plugin"), host_options());
  for (Op op : {Op::layer_norm, Op::rms_norm}) {
    for (Affine a : {Affine::none, Affine::gamma, Affine::gamma_beta, Affine::one_plus_w}) {
      Problem p = row_problem(op, T, {3, 96}, generate_normal(288, 3.0, 2.0, 11), 1e-5, a);
      if (a != Affine::none) p.inputs["gamma"] = Tensor::from_doubles(T, {96}, generate_normal(96, 1.0, 0.5, 12));
      if (a == Affine::gamma_beta) p.inputs["beta"] = Tensor::from_doubles(T, {96}, generate_normal(96, 0.0, 0.5, 13));
      INFO(fmt::format("{} {} {}", to_string(op), dtype_name(T), to_string(a)));
      CHECK(stab_of(*b, p) <= default_gate(p).max);
    }
  }
}

TEST_CASE("plugin: an op an ABI 1 plugin cannot be sent is skipped with the reason", "[plugin]") {
  auto b = make_backend(plugin("example_abi1"), host_options());
  Problem p = row_problem(Op::layer_norm, DType::f32, {1, 4}, {1, 2, 3, 4});
  p.op = Op::group_norm;
  p.inputs["x"] = Tensor::from_doubles(DType::f32, {1, 2, 2}, {1, 2, 3, 4});
  p.conv.num_groups = 1;
  const auto why = b->unsupported(validate(p), {});
  REQUIRE(why);
  CHECK_THAT(*why, Catch::Contains("plugin ABI 1 covers layer_norm and rms_norm, not group_norm"));
}

TEST_CASE("plugin: a segfault fails that evaluation only, the next one runs in a new worker", "[plugin][isolation]") {
  auto b = make_backend(plugin("fault_segfault"), host_options());
  const ValidProblem bad = validate(row_problem(Op::layer_norm, DType::f64, {4}, {1, 2, 3, 4}));
  const Problem good = row_problem(Op::layer_norm, DType::f64, {1, 3}, {1, 2, 3});
  CHECK(stab_of(*b, good) <= 1);
  CHECK_FALSE(b->unsupported(bad, {}));  // the crash is kept for run()
  CHECK_THROWS_AS(b->run(bad, {}), BackendError);
  CHECK_FALSE(b->unsupported(bad, {}));
  CHECK_THROWS_WITH(b->run(bad, {}), Catch::Contains("SIGSEGV") && Catch::Contains("restarted"));
  CHECK(stab_of(*b, good) <= 1);
}

TEST_CASE("plugin: bad plugin paths are usage errors, bad libraries backend errors", "[plugin]") {
  CHECK_THROWS_AS(make_backend("plugin:/no/such/libx.so", host_options()), std::invalid_argument);
  CHECK_THROWS_AS(make_backend("plugin:", host_options()), std::invalid_argument);
  CHECK_THROWS_WITH(make_backend(plugin("fault_bad_abi"), host_options()), Catch::Contains("ABI version 999"));
  CHECK_THROWS_AS(make_backend(plugin("fault_bad_abi"), host_options()), BackendError);
}

TEST_CASE("cmd: a command that is not executable is a usage error", "[cmd]") {
  CHECK_THROWS_AS(make_backend("cmd:/no/such/worker --x", host_options()), std::invalid_argument);
  CHECK_THROWS_AS(make_backend("cmd:", host_options()), std::invalid_argument);
  CHECK(is_backend_spec("cmd:anything"));
  CHECK(is_backend_spec("plugin:x.so"));
  CHECK_FALSE(is_backend_spec("onednn"));
}

TEST_CASE("onednn: layer_norm f32 meets the gate, what it cannot express is skipped with the reason", "[onednn]") {
  auto b = make_backend("onednn");
  if (auto why = b->unavailable()) {
    WARN("onednn not built: " << *why);
    return;
  }
  Problem p = row_problem(Op::layer_norm, DType::f32, {4, 128}, generate_normal(512, 1.0, 3.0, 5), 1e-5, Affine::gamma_beta);
  p.inputs["gamma"] = Tensor::from_doubles(DType::f32, {128}, generate_normal(128, 1.0, 0.5, 6));
  p.inputs["beta"] = Tensor::from_doubles(DType::f32, {128}, generate_normal(128, 0.0, 0.5, 7));
  CHECK(stab_of(*b, p) <= default_gate(p).max);
  Problem q = p;
  q.conv.eps_placement = EpsPlacement::outside_sqrt;
  CHECK_THAT(b->unsupported(validate(q), {}).value_or(""), Catch::Contains("eps_placement outside_sqrt not expressible"));
  Problem r = row_problem(Op::rms_norm, DType::f32, {1, 4}, {1, 2, 3, 4});
  CHECK_THAT(b->unsupported(validate(r), {}).value_or(""), Catch::Contains("no RMS normalization"));
  // one_plus_w: 1 + w exact in f32 -> expressed; 1 + 2^-30 is not a binary32 value -> skipped.
  Problem s = row_problem(Op::layer_norm, DType::f32, {1, 4}, {1, 2, 3, 5}, 1e-5, Affine::one_plus_w);
  s.inputs["gamma"] = Tensor::from_doubles(DType::f32, {4}, {0.5, -0.25, 0, 2});
  CHECK(stab_of(*b, s) <= default_gate(s).max);
  s.inputs["gamma"].set(0, std::ldexp(1.0, -30));
  CHECK_THAT(b->unsupported(validate(s), {}).value_or(""), Catch::Contains("1 + gamma at [0]"));
}
