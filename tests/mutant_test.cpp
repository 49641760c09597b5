// The bundled cases must kill every mutant (a deliberately wrong kernel fails at least one
// case under the default gates) and pass the reference and cpu backends.
#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "checks/runner.hpp"
#include "test_util.hpp"
#include "backends/registry.hpp"
#include "ops/registry.hpp"

using namespace normcheck;

namespace {
const std::vector<Case>& bundled() {
  static const std::vector<Case> cases = [] {
    std::vector<Case> all;
    for (const auto& f : find_case_files({test::source_path("cases")}))
      for (auto& c : parse_case_file(f)) all.push_back(std::move(c));
    return all;
  }();
  return cases;
}

std::set<std::string> failing_cases(const std::string& backend, const std::string& only = "") {
  std::vector<std::unique_ptr<Backend>> bs;
  bs.push_back(make_backend(backend));
  std::vector<Case> selected;
  for (const auto& c : bundled())
    if (only.empty() || c.name == only) selected.push_back(c);
  std::set<std::string> failed;
  for (const auto& r : run_cases(selected, bs, {}))
    if (r.status == Status::failed || r.status == Status::error) failed.insert(r.cs->name);
  return failed;
}
}  // namespace

TEST_CASE("bundled cases: reference and cpu pass every case", "[mutant][bundled]") {
  for (const char* b : {"reference", "cpu"}) {
    INFO(b);
    const auto failed = failing_cases(b);
    CHECK(failed.empty());
    for (auto& f : failed) UNSCOPED_INFO("failed: " << f);
  }
}

TEST_CASE("bundled cases: each mutant fails the case aimed at its fault", "[mutant][bundled]") {
  // Each mutant names, in its op's table entry, a case built to catch its fault.
  for (const MutantDef* m : ops::mutants()) {
    INFO("mutant:" << m->name << " aimed at " << m->aimed_case);
    REQUIRE_FALSE(m->aimed_case.empty());
    const std::string aimed(m->aimed_case);
    CHECK(failing_cases("mutant:" + std::string(m->name), aimed).count(aimed) == 1);
  }
}
