// The op table (src/ops/registry.cpp): every op is complete, has bundled cases in each
// direction it supports, and round-trips its convention through the one reader/writer pair.
// A new op gets these checks by its one registry line.
#include <set>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "ops/registry.hpp"
#include "spec/convention.hpp"
#include "test_util.hpp"

using namespace normcheck;

TEST_CASE("registry: every op defines its rules, reference and cpu kernel, and its backward consistently", "[registry]") {
  std::set<std::string_view> names;
  REQUIRE(ops::all().size() >= 11);
  for (Op op : ops::all()) {
    const OpDef& d = op.def();
    INFO(d.name);
    CHECK(names.insert(d.name).second);
    CHECK(ops::find(d.name) == op);
    CHECK_FALSE(d.formula.empty());
    CHECK(d.validate);
    CHECK(d.outputs);
    CHECK(d.groups);
    CHECK(d.group_size);
    CHECK(d.reference);
    CHECK(d.reference_double);
    CHECK(d.cpu);
    CHECK(d.has_backward() == (d.param_reduction != nullptr));
    CHECK(d.has_backward() != !d.no_backward.empty());
  }
}

TEST_CASE("registry: mutant names are unique over the table and each names its op's fault", "[registry][mutant]") {
  std::set<std::string_view> names;
  for (const MutantDef* m : ops::mutants()) {
    INFO(m->name);
    CHECK(names.insert(m->name).second);
    CHECK_FALSE(m->description.empty());
    CHECK(m->supports);
    CHECK(m->run);
    CHECK(ops::find_mutant(m->name) == m);
  }
  CHECK(ops::find_mutant("dyt_alpha_ignored"));
}

TEST_CASE("registry: every op has bundled cases in each direction it supports", "[registry][cases]") {
  std::map<std::string, std::set<Direction>> seen;
  for (const auto& f : find_case_files({test::source_path("cases")}))
    for (const Case& c : parse_case_file(f)) seen[std::string(c.problem.op.name())].insert(c.problem.conv.direction);
  for (Op op : ops::all()) {
    INFO(op.name());
    CHECK(seen[std::string(op.name())].count(Direction::forward));
    if (op.def().has_backward()) CHECK(seen[std::string(op.name())].count(Direction::backward));
  }
}

TEST_CASE("registry: each op's convention round-trips through write_convention and read_convention", "[registry][convention]") {
  for (Op op : ops::all()) {
    INFO(op.name());
    Convention c = default_convention(op);
    c.eps = 3.0517578125e-05;
    c.acc_dtype = DType::f64;
    c.normalized_shape = {4};
    c.num_groups = 2;  // (0, "not given", is no valid value to read back)
    const nlohmann::json j = convention_json(c, op);
    Convention back = default_convention(op);
    read_convention(JsonSource(j, "test"), op, back);
    CHECK(convention_json(back, op) == j);
    // Keys of other ops are refused, with the list of this op's keys.
    for (Op other : ops::all())
      for (const ConventionKey* k : other.def().params) {
        bool mine = false;
        for (const ConventionKey* m : op.def().params) mine = mine || m->name == k->name;
        if (mine) continue;
        nlohmann::json bad = j;
        bad[std::string(k->name)] = j.contains(std::string(k->name)) ? j[std::string(k->name)] : nlohmann::json(1);
        Convention x = default_convention(op);
        CHECK_THROWS_WITH(read_convention(JsonSource(bad, "test"), op, x), Catch::Contains("is not a parameter of"));
      }
  }
}
