// Merging shard reports (report/model.cpp merge_reports): what the merged backend records say
// when the shards ran where a backend identified itself differently (the cpu backend's
// identity names the row kernel's instruction-set tier, which differs across machines).
#include <catch2/catch.hpp>

#include <string>

#include "report/model.hpp"

using namespace normcheck;

namespace {

/// A schema-2 report (report/model.hpp to_json) of shard `index` of 3, one passed case whose
/// cpu backend reports `identity`.
Report shard(int index, const std::string& identity) {
  const std::string text = R"({"normcheck": {"version": "0", "schema": 2},
  "run": {"suite": "s", "fingerprint": "f", "suite_cases": 3, "shard": {"index": )" + std::to_string(index) +
                           R"(, "count": 3}, "strict": false, "expect_failures": "", "merged_from": []},
  "backends": [{"name": "cpu", "identity": ")" + identity + R"(", "requested": true, "unavailable": ""}],
  "cases": [{"case": "c)" + std::to_string(index) + R"(", "layer": "l", "file": "f.toml", "line": 1, "op": "layer_norm", "dtype": "f32",
             "backend": "cpu", "repro": "r", "seconds": 0, "checks": [], "status": "PASSED"}]})";
  return report_from_json(text, "s" + std::to_string(index) + ".json");
}

}  // namespace

TEST_CASE("merge: shards whose backend identities differ keep each identity once, in shard order", "[report][merge]") {
  const std::string v4 = "normcheck 0.1.0 (row kernel x86-64-v4, f16 by F16C (AVX-512))";
  const std::string v3 = "normcheck 0.1.0 (row kernel x86-64-v3, f16 by F16C (AVX))";
  SECTION("the same identity everywhere stays one") {
    const Report m = merge_reports({{"a", shard(0, v4)}, {"b", shard(1, v4)}, {"c", shard(2, v4)}});
    REQUIRE(m.backends.size() == 1);
    CHECK(m.backends[0].identity == v4);
  }
  SECTION("two machines: both named, each once") {
    const Report m = merge_reports({{"a", shard(0, v4)}, {"b", shard(1, v3)}, {"c", shard(2, v4)}});
    REQUIRE(m.backends.size() == 1);
    CHECK(m.backends[0].identity == v4 + " | " + v3);
  }
  SECTION("an identity holding the separator itself is kept once") {
    const Report m = merge_reports({{"a", shard(0, "acme worker | v2")}, {"b", shard(1, "acme worker | v2")}, {"c", shard(2, v4)}});
    REQUIRE(m.backends.size() == 1);
    CHECK(m.backends[0].identity == "acme worker | v2 | " + v4);
  }
  SECTION("an identity that is part of another is still its own") {
    const Report m = merge_reports({{"a", shard(0, "normcheck 0.1.0 (x)")}, {"b", shard(1, "normcheck 0.1.0")}, {"c", shard(2, "")}});
    REQUIRE(m.backends.size() == 1);
    CHECK(m.backends[0].identity == "normcheck 0.1.0 (x) | normcheck 0.1.0");
  }
}
