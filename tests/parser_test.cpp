// Case-file parser: accepted schema and errors that name file:line and field.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "backends/registry.hpp"
#include "cases/case.hpp"
#include "checks/runner.hpp"

using namespace normcheck;

namespace {
std::string write_tmp(const std::string& name, const std::string& text) {
  // One folder per process: ctest -j runs the test cases of this file in parallel processes.
  const auto dir = std::filesystem::temp_directory_path() / ("normcheck_parser_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = (dir / name).string();
  std::ofstream(path) << text;
  return path;
}

/// Parses text and returns the CaseError (fails the test if none is thrown).
CaseError error_of(const std::string& text) {
  const std::string path = write_tmp("bad.toml", text);
  try {
    parse_case_file(path);
  } catch (const CaseError& e) {
    return e;
  }
  FAIL("no CaseError for:\n" << text);
  return CaseError("", 0, "", "");
}
}  // namespace

TEST_CASE("parser: a literal case with defaults, nested values and properties", "[parser]") {
  const auto path = write_tmp("ok.toml", R"(
[defaults]
layer = "demo"
op = "layer_norm"
dtype = "f16"

[[case]]
name = "a"
convention = { eps = 1e-5, affine = "gamma" }
inputs.x = { values = [[1, 2, 3], [4, 5, 6]] }
inputs.gamma = { values = [1, 2, 3], dtype = "f32" }
expect.invariant_under = [{ shift = 10.0 }]

[[case]]
name = "b"
base = "a"
transform = { scale = 2.0 }
)");
  const auto cases = parse_case_file(path);
  REQUIRE(cases.size() == 2);
  const Problem& p = cases[0].problem;
  CHECK(cases[0].layer == "demo");
  CHECK(p.x().shape() == Shape{2, 3});
  CHECK(p.x().dtype() == DType::f16);
  CHECK(p.input("gamma")->dtype() == DType::f32);
  CHECK(p.conv.normalized_shape == Shape{3});
  CHECK(p.conv.acc_dtype == DType::f32);
  CHECK(cases[0].properties.size() == 1);
  CHECK(cases[1].problem.x().get(5) == 12.0);
  CHECK(cases[1].layer == "demo");
  CHECK(cases[0].line == 7);
}

TEST_CASE("parser: generators are deterministic and seeds are reported", "[parser]") {
  const auto path = write_tmp("gen.toml", R"(
[[case]]
name = "g"
op = "rms_norm"
dtype = "f32"
inputs.x = { generator = "normal", mean = 1.0, std = 2.0, seed = 9, shape = [2, 5] }
)");
  const auto a = parse_case_file(path), b = parse_case_file(path);
  CHECK(a[0].problem.x().to_doubles() == b[0].problem.x().to_doubles());
  CHECK(a[0].seeds.find("seed=9") != std::string::npos);
}

TEST_CASE("parser: errors name file, line and field", "[parser][errors]") {
  SECTION("unknown key") {
    const auto e = error_of("[[case]]\nname = \"a\"\nop = \"layer_norm\"\ndtype = \"f32\"\ninputs.x = { values = [1, 2] }\nepsilon = 1e-5\n");
    CHECK(e.line == 6);
    CHECK(e.field == "case.epsilon");
  }
  SECTION("negative eps") {
    const auto e = error_of("[[case]]\nname = \"a\"\nop = \"layer_norm\"\ndtype = \"f32\"\ninputs.x = { values = [1, 2] }\nconvention.eps = -1e-5\n");
    CHECK(e.line == 6);
    CHECK(e.field == "case.a.convention.eps");
  }
  SECTION("shape and value count mismatch") {
    const auto e = error_of("[[case]]\nname = \"a\"\nop = \"layer_norm\"\ndtype = \"f32\"\ninputs.x = { shape = [2, 2], values = [1, 2, 3] }\n");
    CHECK(e.line == 5);
    CHECK(e.field == "case.a.inputs.x.values");
  }
  SECTION("wrong type") {
    const auto e = error_of("[[case]]\nname = \"a\"\nop = \"layer_norm\"\ndtype = 32\ninputs.x = { values = [1, 2] }\n");
    CHECK(e.line == 4);
    CHECK(e.field == "case.a.dtype");
  }
  SECTION("unknown op and dtype") {
    CHECK(error_of("[[case]]\nname = \"a\"\nop = \"layernorm\"\ndtype = \"f32\"\ninputs.x = { values = [1] }\n").field == "case.a.op");
    CHECK(error_of("[[case]]\nname = \"a\"\nop = \"layer_norm\"\ndtype = \"fp8\"\ninputs.x = { values = [1] }\n").field == "case.a.dtype");
  }
  SECTION("normalized_shape that is not the trailing dims of x") {
    const auto e = error_of("[[case]]\nname = \"a\"\nop = \"layer_norm\"\ndtype = \"f32\"\ninputs.x = { values = [[1, 2, 3]] }\n"
                            "convention.normalized_shape = [2]\n");
    CHECK(e.line == 6);
    CHECK(e.field == "case.a.convention.normalized_shape");
  }
  SECTION("gamma of the wrong size") {
    const auto e = error_of("[[case]]\nname = \"a\"\nop = \"layer_norm\"\ndtype = \"f32\"\nconvention.affine = \"gamma\"\n"
                            "inputs.x = { values = [1, 2, 3] }\ninputs.gamma = { values = [1, 2] }\n");
    CHECK(e.line == 7);
    CHECK(e.field == "case.a.inputs.gamma.shape");
  }
  SECTION("missing gamma for affine gamma") {
    const auto e = error_of("[[case]]\nname = \"a\"\nop = \"rms_norm\"\ndtype = \"f32\"\nconvention.affine = \"gamma\"\ninputs.x = { values = [1, 2, 3] }\n");
    CHECK(e.field == "case.a.inputs.gamma");
  }
  SECTION("expected values of the wrong count") {
    const auto e = error_of("[[case]]\nname = \"a\"\nop = \"rms_norm\"\ndtype = \"f32\"\ninputs.x = { values = [1, 2, 3] }\nexpect.values = [1, 2]\n");
    CHECK(e.line == 6);
    CHECK(e.field == "case.a.expect.values");
  }
  SECTION("duplicate name and unknown base") {
    CHECK(error_of("[[case]]\nname = \"a\"\nop = \"rms_norm\"\ndtype = \"f32\"\ninputs.x = { values = [1] }\n"
                   "[[case]]\nname = \"a\"\nop = \"rms_norm\"\ndtype = \"f32\"\ninputs.x = { values = [1] }\n").line == 7);
    CHECK(error_of("[[case]]\nname = \"b\"\nbase = \"nope\"\n").field == "case.b.base");
  }
  SECTION("TOML syntax error") {
    const auto e = error_of("[[case]]\nname = \"a\nop = 1\n");
    CHECK(e.line == 2);
    CHECK(e.field == "toml");
  }
  SECTION("the message reads file:line: field: message") {
    const auto e = error_of("[[case]]\nname = \"a\"\nop = \"layer_norm\"\ndtype = \"f32\"\ninputs.x = { values = [1, 2] }\nconvention.eps = -1.0\n");
    CHECK(std::string(e.what()).find("bad.toml:6: case.a.convention.eps: eps must be finite and >= 0") != std::string::npos);
  }
}

TEST_CASE("parser: sizes, shapes and names that would crash or mislead are errors", "[parser][errors]") {
  const std::string head = "[[case]]\nname = \"a\"\nop = \"layer_norm\"\ndtype = \"f32\"\n";
  SECTION("empty shape") {
    const auto e = error_of(head + "inputs.x = { shape = [], values = [1] }\n");
    CHECK(e.line == 5);
    CHECK(e.field == "case.a.inputs.x.shape");
  }
  SECTION("no values") { CHECK(std::string(error_of(head + "inputs.x = { values = [] }\n").what()).find("no values") != std::string::npos); }
  SECTION("more than 2^28 elements, and a product that overflows int64") {
    CHECK(error_of(head + "inputs.x = { shape = [100000000000], generator = \"normal\", seed = 1 }\n").field == "case.a.inputs.x.shape");
    CHECK(error_of(head + "inputs.x = { shape = [4294967296, 4294967296], values = [1] }\n").field == "case.a.inputs.x.shape");
  }
  SECTION("nested values of another shape than the declared one") {
    CHECK(error_of(head + "inputs.x = { shape = [2, 2], values = [[1, 2, 3, 4]] }\n").field == "case.a.inputs.x.values");
  }
  SECTION("gamma of the right size but the wrong shape") {
    const auto e = error_of(head + "convention = { affine = \"gamma\", normalized_shape = [4] }\ninputs.x = { values = [[1, 2, 3, 4]] }\n"
                                   "inputs.gamma = { values = [[1, 2], [3, 4]] }\n");
    CHECK(e.field == "case.a.inputs.gamma.shape");
  }
  SECTION("a generator key that the generator ignores, and non-finite parameters") {
    CHECK(error_of(head + "inputs.x = { values = [1, 2, 3], mean = 4.0 }\n").field == "case.a.inputs.x.mean");
    CHECK(error_of(head + "inputs.x = { generator = \"constant\", value = 1.0, seed = 3, shape = [3] }\n").field == "case.a.inputs.x.seed");
    CHECK(error_of(head + "inputs.x = { generator = \"uniform\", low = nan, seed = 3, shape = [3] }\n").field == "case.a.inputs.x.low");
  }
  SECTION("case names that would escape a dump folder or break a shell line") {
    CHECK(error_of("[[case]]\nname = \"../../escape\"\nop = \"layer_norm\"\ndtype = \"f32\"\ninputs.x = { values = [1, 2] }\n").field == "case.name");
    CHECK(error_of("[[case]]\nname = \"a;touch\"\nop = \"layer_norm\"\ndtype = \"f32\"\ninputs.x = { values = [1, 2] }\n").field == "case.name");
  }
  SECTION("a recorded source named like a backend spec, without y, or of the wrong dtype") {
    // (one named after a built-in backend, e.g. recorded.cpu, is refused when the run resolves
    // its backends: tests/cli/gate_test.sh)
    CHECK(error_of(head + "inputs.x = { values = [1, 3] }\n[case.recorded.\"cmd:x\"]\ny = { values = [9, 9] }\n").field == "case.a.recorded.cmd:x");
    CHECK(error_of(head + "inputs.x = { values = [1, 3] }\n[case.recorded.foo]\n").field == "case.a.recorded.foo");
    CHECK(error_of(head + "inputs.x = { values = [1, 3] }\nrecorded.foo.y = { values = [-1, 1], dtype = \"f16\" }\n").field == "case.a.recorded.foo.y");
  }
}

TEST_CASE("parser: a transform the rounding absorbs is refused in case files and MISTRUSTED when made otherwise", "[parser][property]") {
  // shift 1e-30 on f32 [1, 2, 3, 4] rounds back to x: y(Tx) = y(x) whatever the backend does
  // (it was reported PASSED with difference 0).
  const std::string head = "[[case]]\nname = \"a\"\nop = \"layer_norm\"\ndtype = \"f32\"\ninputs.x = { values = [1, 2, 3, 4] }\n";
  CHECK(error_of(head + "expect.invariant_under = [{ shift = 1e-30 }]\n").field == "case.a.expect.invariant_under");
  CHECK(error_of(head + "expect.changes_under = [{ shift = 1e-30, at = [0] }]\n").field == "case.a.expect.changes_under");
  CHECK(error_of(head + "[[case]]\nname = \"b\"\nbase = \"a\"\ntransform = { shift = 1e-30 }\n").field == "case.b.transform");
  // One element that moves is enough: x = [1, 2^-30] moves under shift 2^-40 at its second.
  const auto ok = parse_case_file(write_tmp("moves.toml", "[[case]]\nname = \"a\"\nop = \"layer_norm\"\ndtype = \"f32\"\n"
                                                           "inputs.x = { values = [1, 9.313225746154785e-10] }\n"
                                                           "expect.invariant_under = [{ shift = 9.094947017729282e-13 }]\n"));
  REQUIRE(ok.size() == 1);
  // A property made through the API (no parser) with an absorbed shift: MISTRUSTED.
  auto cs = parse_case_file(write_tmp("api.toml", head + "expect.invariant_under = [{ shift = 1.0 }]\n"));
  REQUIRE(cs.size() == 1);
  REQUIRE(cs[0].properties.size() == 1);
  cs[0].properties[0].transform.shift = 1e-30;
  REQUIRE(!cs[0].properties[0].transform.moves(cs[0].problem));
  std::vector<std::unique_ptr<Backend>> be;
  be.push_back(make_backend("cpu"));
  const auto r = run_cases(cs, be, {});
  REQUIRE(r.size() == 1);
  bool seen = false;
  for (const auto& c : r[0].checks)
    if (c.name.starts_with("invariant_under")) {
      seen = true;
      CHECK(c.status == Status::mistrusted);
    }
  CHECK(seen);
  CHECK(r[0].status == Status::mistrusted);
}

TEST_CASE("parser: every bundled case file parses", "[parser][bundled]") {
  const auto files = find_case_files({std::string(NORMCHECK_SOURCE_DIR) + "/cases"});
  REQUIRE(files.size() >= 8);
  for (const auto& f : files) {
    INFO(f);
    CHECK_NOTHROW(parse_case_file(f));
  }
}
