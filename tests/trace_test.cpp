// normcheck trace: model files, the residual stack, per-site errors, injected faults.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "cases/case.hpp"
#include "ops/reference.hpp"
#include "trace/trace.hpp"

using namespace normcheck;
using namespace normcheck::trace;

namespace {

std::string write_model(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / ("normcheck_trace_test_" + std::to_string(::getpid()));  // per process: ctest -j
  std::filesystem::create_directories(dir);
  const auto path = (dir / name).string();
  std::ofstream(path) << text;
  return path;
}

const char* kTiny = R"(
[model]
name = "tiny"
d = 16
tokens = 4
blocks = 6
placement = "PLACEMENT"
dtype = "DTYPE"
seed = 5

[branch]
kind = "linear_gelu"
scale = 1.0

[quiet]
rows = [1]
scale = 3e-4

[norm]
op = "OP"
eps = 1e-6
affine = "AFFINE"
gain = { mean = 1.0, std = 0.1 }
)";

std::string tiny(std::string placement, std::string dtype = "bf16", std::string op = "rms_norm", std::string affine = "gamma",
                 std::string extra = "") {
  std::string t = kTiny;
  auto sub = [&](const std::string& k, const std::string& v) { t.replace(t.find(k), k.size(), v); };
  sub("PLACEMENT", placement);
  sub("DTYPE", dtype);
  sub("OP", op);
  sub("AFFINE", affine);
  return t + extra;
}

/// The CaseError a model text raises (fails the test if none).
CaseError error_of(const std::string& text) {
  const std::string path = write_model("bad.trace.toml", text);
  try {
    parse_model_file(path);
  } catch (const CaseError& e) {
    return e;
  }
  FAIL("no CaseError for:\n" << text);
  return CaseError("", 0, "", "");
}

}  // namespace

TEST_CASE("trace: model-file errors name file, line and field", "[trace][parser]") {
  const std::string ok = tiny("pre_norm");
  REQUIRE_NOTHROW(parse_model_file(write_model("ok.trace.toml", ok)));

  struct Bad { std::string text; int line; std::string field, msg; };
  std::string unknown_placement = ok;
  unknown_placement.replace(unknown_placement.find("\"pre_norm\""), 10, "\"prenorm\"");
  std::string zero_blocks = ok;
  zero_blocks.replace(zero_blocks.find("blocks = 6"), 10, "blocks = 0");
  std::string f64 = ok;
  f64.replace(f64.find("\"bf16\""), 6, "\"f64\"");
  std::string quiet_row = ok;
  quiet_row.replace(quiet_row.find("rows = [1]"), 10, "rows = [4]");
  std::string bad_eps = ok;
  bad_eps.replace(bad_eps.find("eps = 1e-6"), 10, "eps = -1.0");
  const std::vector<Bad> bad{
      {unknown_placement, 7, "model.placement", "unknown 'prenorm'"},
      {zero_blocks, 6, "model.blocks", "out of range"},
      {f64, 8, "model.dtype", "unknown activation dtype 'f64'"},
      {quiet_row, 16, "quiet.rows", "row 4 is outside [0, 4)"},
      {bad_eps, 21, "norm.eps", "eps must be finite and >= 0"},
      {ok + "\n[extra]\nx = 1\n", 25, "extra", "unknown key 'extra'"},
      {ok + "\n[norm_post]\neps = 1e-5\n", 25, "norm_post", "only a sandwich model has post norms"},
      {ok + "\n[final_norm]\naffine = \"gamma_beta\"\nbias = 3\n", 27, "final_norm.bias", "expected a table"},
      {tiny("pre_norm", "bf16", "group_norm"), 20, "norm.op", "untraceable op 'group_norm'"},
      {"[model\nname = 1\n", 1, "toml", ""},
  };
  for (const auto& b : bad) {
    const CaseError e = error_of(b.text);
    INFO(e.what());
    CHECK(e.line == b.line);
    CHECK(e.field == b.field);
    CHECK(std::string(e.what()).find(b.msg) != std::string::npos);
    CHECK(std::string(e.what()).find("bad.trace.toml:" + std::to_string(b.line) + ": " + b.field + ": ") != std::string::npos);
  }
}

TEST_CASE("trace: the stack computes the documented block formulas", "[trace]") {
  // With every norm replaced by the identity, pre_norm is x <- rnd(x + tau rnd(gelu(W x)))
  // and post_norm is x <- rnd(tau (x + rnd(gelu(W x)))): recompute both by hand in double
  // from the stack's own weights and compare bit for bit.
  for (const char* placement : {"pre_norm", "post_norm"}) {
    const Model m = parse_model_file(write_model("formula.trace.toml", tiny(placement, "f32")));
    const Stack st = build_stack(m);
    int calls = 0;
    const Tensor got = run_stack(st, [&](const Site& s, const Problem& p) {
      CHECK(s.index == calls++);
      CHECK(p.out_dtype == DType::f32);
      return p.x();
    });
    CHECK(calls == 6);
    std::vector<double> x = st.x0.to_doubles();
    const std::int64_t d = m.d;
    for (std::int64_t b = 0; b < m.blocks; ++b) {
      std::vector<double> nx(x.size());
      for (std::int64_t t = 0; t < m.tokens; ++t)
        for (std::int64_t i = 0; i < d; ++i) {
          float acc = 0.0f;
          for (std::int64_t j = 0; j < d; ++j) acc += st.weights[b][i * d + j] * static_cast<float>(x[t * d + j]);
          acc = 0.5f * acc * (1.0f + std::erf(acc * 0.70710678118654752f));
          const double tau = t == 1 ? 3e-4 : 1.0, f = static_cast<double>(acc);
          nx[t * d + i] = std::string(placement) == "pre_norm" ? static_cast<float>(x[t * d + i] + tau * f)
                                                               : static_cast<float>(tau * (x[t * d + i] + f));
        }
      x = nx;
    }
    CHECK(got.to_doubles() == x);
  }
}

TEST_CASE("trace: sites, names and seeded parameters", "[trace]") {
  const Model m = parse_model_file(write_model("sites.trace.toml", tiny("sandwich", "bf16", "rms_norm", "one_plus_w", "\n[final_norm]\n")));
  const Stack st = build_stack(m);
  REQUIRE(st.sites.size() == 13);
  CHECK(st.sites[0].name == "block00.pre");
  CHECK(st.sites[3].name == "block01.post");
  CHECK(st.sites[12].name == "final");
  CHECK(st.sites[12].block == -1);
  CHECK(st.sites[1].gamma.dtype() == DType::bf16);
  CHECK(st.sites[1].gamma.to_doubles() != st.sites[2].gamma.to_doubles());  // per-site seeds
  CHECK(build_stack(m).x0.to_doubles() == st.x0.to_doubles());              // deterministic
  CHECK(parse_injection(st, "mutant:eps_missing@block01.post") == std::make_pair(3, std::string("mutant:eps_missing")));
  CHECK(parse_injection(st, "cpu@12").first == 12);
  CHECK_THROWS_AS(parse_injection(st, "cpu@13"), std::invalid_argument);
  CHECK_THROWS_AS(parse_injection(st, "cpu"), std::invalid_argument);
}

TEST_CASE("trace: the reference backend reproduces the reference stack exactly", "[trace]") {
  for (const char* placement : {"pre_norm", "post_norm", "sandwich"}) {
    const Model m = parse_model_file(write_model("ref.trace.toml", tiny(placement, "bf16", "layer_norm", "gamma_beta")));
    const TraceResult r = run_trace(m, {"reference", {}});
    REQUIRE(r.sites.size() == (std::string(placement) == "sandwich" ? 12u : 6u));
    for (auto& s : r.sites) {
      INFO(placement << " site " << s.index);
      CHECK(s.same_input);                       // identical streams: the norms alone differ
      CHECK(s.local.ulp.value <= 0.5);           // correctly rounded
      CHECK(s.accumulated.ulp.value <= 0.5);
    }
    CHECK_FALSE(r.first_local);
    CHECK_FALSE(r.first_accumulated);
    CHECK(r.failures() == 0);
  }
}

TEST_CASE("trace: with zero branches every site sees x0, and cpu's error is the same at each", "[trace]") {
  const Model m = parse_model_file(write_model("zero.trace.toml", tiny("pre_norm", "f32", "rms_norm", "none")));
  Model z = m;
  z.branch_scale = 0;
  const TraceResult r = run_trace(z, {"cpu", {}});
  REQUIRE(r.sites.size() == 6);
  // F = 0: x <- x + tau * 0 = x, so every site normalizes x0 with the same (unit) gains.
  for (auto& s : r.sites) {
    CHECK(s.same_input);
    CHECK(s.local.abs.value == r.sites[0].local.abs.value);
    CHECK(s.local.stab.value == r.sites[0].local.stab.value);
    CHECK(s.local.stab.value <= s.gate.max);
  }
  CHECK(r.failures() == 0);
}

TEST_CASE("trace: an injected eps fault is the first local divergence at exactly its site", "[trace][mutant]") {
  for (const char* placement : {"pre_norm", "post_norm", "sandwich"}) {
    for (const char* dtype : {"bf16", "f32"}) {
      const Model m = parse_model_file(write_model("inject.trace.toml", tiny(placement, dtype, "rms_norm", "gamma", "\n[final_norm]\n")));
      const TraceResult clean = run_trace(m, {"cpu", {}});
      CHECK(clean.failures() == 0);
      for (int k = 0; k < static_cast<int>(clean.sites.size()); ++k) {
        const TraceResult r = run_trace(m, {"cpu", {{k, "mutant:eps_outside_sqrt"}}});
        INFO(placement << " " << dtype << " injected at " << k);
        REQUIRE(r.first_local);
        CHECK(*r.first_local == k);
        CHECK(r.sites[static_cast<std::size_t>(k)].backend == "mutant:eps_outside_sqrt");
        for (int j = 0; j < k; ++j) CHECK_FALSE(r.sites[static_cast<std::size_t>(j)].acc_fail());
        if (r.first_accumulated) CHECK(*r.first_accumulated >= k);
      }
    }
  }
}

TEST_CASE("trace: the accumulated limit is sqrt(sum (gate + 4)^2)", "[trace]") {
  const Model m = parse_model_file(write_model("limit.trace.toml", tiny("pre_norm")));
  const TraceResult r = run_trace(m, {"cpu", {}});
  const double g = 1 + 8 + std::sqrt(16.0);
  for (std::size_t k = 0; k < r.sites.size(); ++k) CHECK(r.sites[k].acc_limit == Approx((g + 4) * std::sqrt(k + 1.0)));
}

TEST_CASE("trace: the bundled models parse", "[trace]") {
  const std::string root = std::getenv("NORMCHECK_SOURCE_DIR") ? std::getenv("NORMCHECK_SOURCE_DIR") : NORMCHECK_SOURCE_DIR;
  int n = 0;
  for (auto& e : std::filesystem::directory_iterator(root + "/cases/traces")) {
    if (e.path().string().ends_with(".trace.toml")) {
      const Model m = parse_model_file(e.path().string());
      CHECK(build_stack(m).sites.size() >= 12);
      ++n;
    }
  }
  CHECK(n == 3);
  // and `normcheck run`'s folder scan leaves them out
  for (auto& f : find_case_files({root + "/cases"})) CHECK_FALSE(f.ends_with(".trace.toml"));
}
