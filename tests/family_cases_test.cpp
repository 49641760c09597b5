// The bundled family cases as a whole: the reference and the cpu kernels pass every one of
// them under the default gates, and every family mutant fails at least one.
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "cases/case.hpp"
#include "checks/runner.hpp"
#include "ops/common/mutants.hpp"
#include "ops/reference.hpp"
#include "backends/registry.hpp"

using namespace normcheck;

namespace {

const std::vector<std::string> kFamilies{"batch_norm", "group_norm", "instance_norm", "l2_normalize",
                                         "scale_norm", "ada_layer_norm", "ada_rms_norm", "qk_norm"};

std::vector<Case> family_cases() {
  std::vector<std::string> dirs;
  for (auto& f : kFamilies) dirs.push_back(std::string(NORMCHECK_SOURCE_DIR) + "/cases/" + f);
  std::vector<Case> all;
  for (auto& file : find_case_files(dirs))
    for (auto& c : parse_case_file(file)) all.push_back(std::move(c));
  return all;
}

std::vector<std::unique_ptr<Backend>> backends(const std::vector<std::string>& names) {
  std::vector<std::unique_ptr<Backend>> v;
  for (auto& n : names) v.push_back(make_backend(n));
  return v;
}

}  // namespace

TEST_CASE("families: every family has bundled cases", "[families]") {
  const auto cases = family_cases();
  for (auto& f : kFamilies) {
    int n = 0;
    for (auto& c : cases) n += std::string(to_string(c.problem.op)) == f;
    INFO(f);
    CHECK(n >= 5);
  }
}

TEST_CASE("families: reference and cpu pass every bundled family case", "[families]") {
  const auto cases = family_cases();
  auto be = backends({"reference", "cpu"});
  const auto results = run_cases(cases, be, {});
  REQUIRE(results.size() == 2 * cases.size());
  for (auto& r : results) {
    INFO(r.repro);
    for (auto& c : r.checks) INFO(c.name << ": " << c.detail);
    CHECK(r.status == Status::passed);
  }
}

TEST_CASE("families: every family mutant is killed by the bundled cases", "[families][mutant]") {
  const auto cases = family_cases();
  for (auto f : kernels::mutant::all_faults()) {
    if (!kernels::mutant::detail::is_family_fault(f)) continue;
    const std::string name = "mutant:" + std::string(kernels::mutant::to_string(f));
    std::vector<Case> mine;
    for (auto& c : cases)
      if (kernels::mutant::supports(f, c.problem.op)) mine.push_back(c);
    auto be = backends({name});
    int failed = 0;
    for (auto& r : run_cases(mine, be, {})) failed += r.status == Status::failed;
    INFO(name << " on " << mine.size() << " cases");
    CHECK(failed >= 1);
  }
}

/// Whether every finite input value squares without overflow or underflow in binary64
/// (the binary64 instantiation has no range reduction; the MPFR one needs none).
static bool squares_fit_binary64(const Problem& p) {
  for (auto& [name, t] : p.inputs)
    for (double v : t.to_doubles())
      if (std::isfinite(v) && v != 0 && (std::fabs(v) > 1e100 || std::fabs(v) < 1e-100)) return false;
  return true;
}

TEST_CASE("families: the reference template in binary64 agrees with MPFR", "[families][reference]") {
  for (auto& c : family_cases()) {
    if (c.problem.out_dtype != DType::f64 || !squares_fit_binary64(c.problem)) continue;
    const auto ex = reference::evaluate_exact(c.problem), db = reference::evaluate_double(c.problem);
    for (auto& [name, o] : ex) {
      const auto& d = db.at(name);
      for (std::size_t i = 0; i < o.size(); ++i) {
        INFO(c.name << " " << name << "[" << i << "]");
        const long double e = o.exact_at(i), g = d.exact_at(i);
        if (std::isnan(e)) CHECK(std::isnan(g));
        else if (std::isinf(e)) CHECK(g == e);  // (inf - inf is NaN: an infinite exact value is matched as is)
        else CHECK(std::fabs(static_cast<double>(g - e)) <= 1e-13 * (std::fabs(static_cast<double>(e)) + 1e-300) + o.cond[i] * 1e-13);
      }
    }
  }
}

namespace {
/// Parses `text` as a case file; returns the CaseError's "line field" or "ok".
std::string parse_text(const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / ("normcheck_family_" + std::to_string(::getpid()) + ".toml");
  std::ofstream(path) << text;
  std::string r = "ok";
  try {
    parse_case_file(path.string());
  } catch (const CaseError& e) {
    r = std::to_string(e.line) + " " + e.field;
  }
  std::filesystem::remove(path);
  return r;
}
}  // namespace

TEST_CASE("families: convention keys of another op, bad axes and bad property prefixes are errors with their line", "[families][parser]") {
  const std::string head = "[defaults]\ndtype = \"f32\"\n\n[[case]]\nname = \"c\"\n";
  CHECK(parse_text(head + "op = \"layer_norm\"\ninputs.x = { values = [[1, 2]] }\nconvention.num_groups = 2\n") ==
        "8 case.c.convention.num_groups");
  CHECK(parse_text(head + "op = \"group_norm\"\nconvention.momentum = 0.1\ninputs.x = { values = [[1, 2]] }\n") ==
        "7 case.c.convention.momentum");
  CHECK(parse_text(head + "op = \"l2_normalize\"\nconvention.axes = [2]\ninputs.x = { values = [[1, 2]] }\n") ==
        "7 case.c.convention.axes");
  CHECK(parse_text(head + "op = \"l2_normalize\"\ninputs.x = { values = [[1, 2]] }\nexpect.invariant_under = [{ scale = 2.0, at = [2] }]\n") ==
        "8 case.c.expect.invariant_under.at");
  CHECK(parse_text(head + "op = \"l2_normalize\"\ninputs.x = { values = [[1, 2]] }\nexpect.changes_under = [{ shift = 1.0, outputs = [\"h\"] }]\n") ==
        "8 case.c.expect.changes_under.outputs");
  CHECK(parse_text(head + "op = \"batch_norm\"\nconvention = { training = false, track_running_stats = false }\n"
                   "inputs.x = { values = [[1, 2], [3, 4]] }\nexpect.outputs = { running_mean = [0, 0] }\n") ==
        "9 case.c.expect.outputs.running_mean");
  CHECK(parse_text(head + "op = \"qk_norm\"\ninputs.q = { values = [[[[1, 2]]]] }\ninputs.k = { values = [[[[1, 2]]]] }\n"
                   "expect.invariant_under = [{ scale = 3.0, input = \"k\", outputs = [\"q_hat\", \"k_hat\", \"y\"] }]\n") == "ok");
}
