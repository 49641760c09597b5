// Hostile input never crashes the gate (issue 18 section 5): JSON nested 300,000 deep,
// reports whose fields have the wrong types, worker replies that break the protocol. Each
// such input here crashed (stack overflow), hit undefined behaviour or escaped as another
// exception type before; the fuzzing harnesses in tests/fuzz/ search for more and their
// corpus keeps what they found. Also case text parsed from memory, the harnesses' entry.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "backends/worker_protocol.hpp"
#include "cases/case.hpp"
#include "core/json_bounded.hpp"
#include "core/tensor_file.hpp"
#include "report/model.hpp"
#include "report/report.hpp"

using namespace normcheck;
namespace fs = std::filesystem;

namespace {

std::string deep(std::size_t n) { return std::string(n, '[') + std::string(n, ']'); }

/// A schema-2 report (report/model.hpp to_json) of one case entry, with `extra` JSON
/// members appended to that entry.
std::string report_with(const std::string& status, const std::string& extra, const std::string& checks = "[]") {
  return R"({"normcheck": {"version": "0", "schema": 2},
  "run": {"suite": "s", "fingerprint": "f", "suite_cases": 1, "shard": {"index": 0, "count": 1}, "strict": false,
          "expect_failures": "", "merged_from": []},
  "backends": [{"name": "cpu", "identity": "", "requested": true, "unavailable": ""}],
  "cases": [{"case": "a", "layer": "l", "file": "f.toml", "line": 1, "op": "layer_norm", "dtype": "f32", "backend": "cpu",
             "repro": "r", "seconds": 0, "checks": )" + checks + R"(, "status": ")" + status + "\"" + (extra.empty() ? "" : ", " + extra) + "}]}";
}

/// The message of the std::runtime_error that reading, merging and formatting `text` throws.
std::string merge_error(const std::string& text) {
  try {
    const Report r = report_from_json(text, "r.json");
    (void)format_table(merge_reports({{"r.json", r}}), false);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  FAIL("no std::runtime_error for " << text.substr(0, 200));
  return "";
}

}  // namespace

TEST_CASE("json: nesting deeper than the limit is refused before parsing", "[hostile][json]") {
  CHECK(parse_json_bounded(deep(kMaxJsonDepth), "t").is_array());
  CHECK_THROWS_AS(parse_json_bounded(deep(kMaxJsonDepth + 1), "t"), JsonError);
  CHECK_THROWS_WITH(parse_json_bounded(deep(300000), "t"), Catch::Contains("t: not valid JSON: nested deeper than 512 levels"));
  // Brackets inside strings, escaped quotes included, do not count.
  CHECK(parse_json_bounded("[\"" + std::string(1000, '[') + "\\\"\"]", "t").size() == 1);
  // A number beyond binary64 (nlohmann: out_of_range, not parse_error) is a JsonError too.
  CHECK_THROWS_AS(parse_json_bounded("[1e999]", "t"), JsonError);
  try {
    parse_json_bounded("{\n\"a\": tru}", "t");
  } catch (const JsonError& e) {
    CHECK(e.byte >= 7);
  }
}

TEST_CASE("merge: a report nested 300,000 deep is an error, not a stack overflow", "[hostile][merge]") {
  // The copy of the case entry (cases.push_back) recursed once per level: SIGSEGV before.
  CHECK_THAT(merge_error(report_with("PASSED", "\"x\": " + deep(300000))), Catch::Contains("r.json: not valid JSON: nested deeper"));
  CHECK_THAT(merge_error(std::string(300000, '[')), Catch::Contains("r.json"));
}

TEST_CASE("merge: every field the merge and the table read is type-checked", "[hostile][merge]") {
  // The old reader read checks[i]["status"] of a const json: undefined behaviour for an
  // entry without it (nlohmann asserts), type_error for a number. Each field is typed now.
  CHECK_THAT(merge_error(report_with("FAILED", "", "[{}]")), Catch::Contains("r.json: cases[0].checks[0].name: missing"));
  CHECK_THAT(merge_error(report_with("FAILED", "", "[1]")), Catch::Contains("cases[0].checks[0]: expected an object"));
  CHECK_THAT(merge_error(report_with("FAILED", "", R"([{"name": "x", "status": 1, "detail": ""}])")),
             Catch::Contains("cases[0].checks[0].status: expected a string"));
  CHECK_THAT(merge_error(report_with("FAILED", R"("reason": 1)")), Catch::Contains("r.json: cases[0].reason: expected a string"));
  CHECK_THAT(merge_error(report_with("ERROR", R"("note": [])")), Catch::Contains("cases[0].note: expected a string"));
  CHECK_THAT(merge_error(report_with("PASSED", R"("metrics": {"abs": 1})")), Catch::Contains("cases[0].metrics"));
  CHECK_THAT(merge_error(report_with("BOGUS", "")), Catch::Contains("unknown status 'BOGUS'"));
  CHECK_THAT(merge_error(R"({"cases": [{"case": 1}]})"), Catch::Contains("r.json: normcheck: missing"));
  CHECK_THAT(merge_error("[1e999]"), Catch::Contains("r.json: not valid JSON"));
}

TEST_CASE("worker replies: protocol breaks are errors, never crashes", "[hostile][worker]") {
  // rep.dump() of a 300,000-deep reply to the wrong id recursed once per level before.
  CHECK_THROWS_WITH(detail::parse_worker_line("{\"id\": 2, \"x\": " + deep(300000) + "}"),
                    Catch::Contains("a reply line that is not JSON"));
  CHECK_THROWS_WITH(detail::parse_worker_line("this is not json"), Catch::Contains("a reply line that is not JSON: 'this is not json'"));
  using K = detail::WorkerReply::Kind;
  auto kind = [](const std::string& line) { return detail::interpret_worker_reply(detail::parse_worker_line(line), 7).kind; };
  CHECK(kind("[]") == K::wrong_id);
  CHECK(kind(R"({"id": 8})") == K::wrong_id);
  CHECK(kind(R"({"id": "7"})") == K::wrong_id);
  CHECK(kind(R"({"id": 7, "skip": "not implemented"})") == K::skip);
  // a skip without a reason (empty, blank, not a string) is the worker's error (README: a skip says why)
  CHECK(kind(R"({"id": 7, "skip": {"why": 1}})") == K::error);
  CHECK(kind(R"({"id": 7, "skip": ""})") == K::error);
  CHECK(kind(R"({"id": 7, "skip": " \n"})") == K::error);
  CHECK(kind(R"({"id": 7, "skip": null})") == K::error);
  CHECK(kind(R"({"id": 7, "error": 3})") == K::error);
  CHECK(kind(R"({"id": 7})") == K::unusable);
  CHECK(kind(R"({"id": 7, "outputs": []})") == K::unusable);
  CHECK(kind(R"({"id": 7, "outputs": {"y": 1}})") == K::unusable);
  CHECK(kind(R"({"id": 7, "outputs": {"y": {"path": 1}}})") == K::unusable);
  CHECK(kind(R"({"id": 7, "outputs": {"y": {"path": "x.npy", "dtype": "f99"}}})") == K::unusable);
  CHECK(kind(R"({"id": 7, "outputs": {"y": {"path": "/nonexistent/x.npy"}}})") == K::unusable);
  CHECK(kind(R"({"id": 7, "outputs": {"y": {"path": "/"}}})") == K::unusable);

  const fs::path dir = fs::temp_directory_path() / ("normcheck_hostile_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string p = (dir / "y.npy").string();
  write_npy(p, Tensor::from_doubles(DType::bf16, {2}, {1.5, -2}), NpyBf16::as_f32);
  const auto r = detail::interpret_worker_reply(detail::parse_worker_line(R"({"id": 7, "outputs": {"y": {"path": ")" + p +
                                                                           R"(", "dtype": "bf16"}}})"),
                                                7);
  REQUIRE(r.kind == K::outputs);
  CHECK(r.outputs.at("y").dtype() == DType::bf16);
  CHECK(r.outputs.at("y").to_doubles() == std::vector<double>{1.5, -2});
  CHECK(r.paths == std::vector<std::string>{p});
  std::ofstream(p, std::ios::binary) << std::string("\x93NUMPY\x01\x00\x00\x00", 10);  // header length 0
  const auto bad = detail::interpret_worker_reply(detail::parse_worker_line(R"({"id": 7, "outputs": {"y": {"path": ")" + p + "\"}}}"), 7);
  CHECK(bad.kind == K::unusable);
  CHECK_THAT(bad.message, Catch::Contains(p + ": header:"));
  fs::remove_all(dir);
}

TEST_CASE("parser: case text from memory parses like the file, within an element bound", "[hostile][parser]") {
  const std::string text = R"(
[[case]]
name = "a"
op = "layer_norm"
dtype = "f32"
inputs.x = { shape = [4, 8], generator = "normal", seed = 1 }
)";
  const auto cs = parse_case_text(text, "mem.toml");
  REQUIRE(cs.size() == 1);
  CHECK(cs[0].problem.x().shape() == Shape{4, 8});
  CHECK(cs[0].file == "mem.toml");
  try {
    parse_case_text(text, "mem.toml", 16);
    FAIL("no CaseError");
  } catch (const CaseError& e) {
    CHECK(e.field == "case.a.inputs.x.shape");
    CHECK(e.line == 6);
  }
  CHECK_THROWS_AS(parse_case_text("[[case]\n", "mem.toml"), CaseError);
}
