// The coverage matrix's quick tier (part of the default suite) holds, for every op, the points
// where kernels change strategy with the problem's size (cases/matrix.hpp "scale"): a gap
// audit's faulty backends, each modelled on a published bug class (rows past a launch grid's
// y limit, a persistent kernel's state carried from group to group, a row split over blocks
// and merged without Welford's correction, dgamma/dbeta partial sums of row tiles dropped),
// passed the default suite before them. A point an op's sample rule refuses is left out of
// the matrix silently, so each is asserted here by its generated case.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "cases/matrix.hpp"
#include "ops/registry.hpp"

using namespace normcheck;

TEST_CASE("coverage matrix quick: every op has the scale points", "[matrix]") {
  std::map<std::string, std::set<std::string>> names;  // op -> its quick cases' names
  std::map<std::string, std::int64_t> longest_axis;     // case -> x's longest axis
  for (const Case& cs : coverage_matrix(Tier::quick)) {
    names[std::string(cs.problem.op.name())].insert(cs.name);
    std::int64_t a = 0;
    for (std::int64_t e : cs.problem.x().shape()) a = std::max(a, e);
    longest_axis[cs.name] = a;
  }
  std::int64_t ops_checked = 0;
  for (Op op : ops::all()) {
    if (!op.def().sample) continue;
    const std::string o(op.name());
    INFO(o);
    const auto& n = names[o];
    auto has = [&](const std::string& name) { return n.count(name) == 1; };
    const std::string base = "mx_" + o + "_";
    CHECK(has(base + "w2_r65537_f32_f32_normal_typical_def"));
    // one axis of x holds the 65537 groups (the op's defaults: not split over batch or heads,
    // which would keep every axis below a launch grid's limit)
    CHECK(longest_axis[base + "w2_r65537_f32_f32_normal_typical_def"] >= 65537);
    CHECK(has(base + "w33_r300_bf16_bf16_normal_typical"));
    for (const char* w : {"4097", "8192", "16385"})
      for (const char* x : {"f32", "bf16", "f16"}) CHECK(has(base + "w" + w + "_r2_" + x + "_" + x + "_normal_typical"));
    if (op.def().has_backward()) {
      CHECK(has(base + "w33_r300_f32_f32_normal_typical_bwd"));
      CHECK(has(base + "w33_r300_bf16_bf16_normal_typical_bwd"));
      CHECK(has(base + "w8_r4099_f32_f32_normal_typical_bwd"));
    }
    ++ops_checked;
  }
  CHECK(ops_checked >= 15);  // every op of the table has a sample rule (a dropped one fails here)
}
