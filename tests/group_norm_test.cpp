// group_norm and instance_norm: the reference against hand-computed groups, exactly.
#include <catch2/catch.hpp>

#include "cases/case.hpp"
#include "family_test_util.hpp"

using namespace normcheck;
using normcheck::test::exact;
using normcheck::test::problem;
using normcheck::test::tensor;

namespace {
const std::vector<double> kLn1234{-1.341640786499873818, -0.4472135954999579393, 0.4472135954999579393, 1.341640786499873818};
const std::vector<double> kLn123{-1.224744871391589049, 0, 1.224744871391589049};
std::vector<double> cat(std::vector<double> a, const std::vector<double>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}
}  // namespace

TEST_CASE("group_norm: G = 2 normalizes each pair of contiguous channels", "[group_norm]") {
  Problem p = problem(Op::group_norm, {1, 4, 2}, {1, 2, 3, 4, 11, 13, 11, 13});
  p.conv.num_groups = 2;
  CHECK(exact(p) == cat(kLn1234, {-1, 1, -1, 1}));
}

TEST_CASE("group_norm: G = 1 normalizes the whole example over C and the spatial axes", "[group_norm]") {
  Problem p = problem(Op::group_norm, {2, 2, 2}, {1, 2, 3, 4, 0, 2, 10, 12});
  p.conv.num_groups = 1;
  CHECK(exact(p) == cat(kLn1234, {-1.176696810829104192, -0.7844645405527361277, 0.7844645405527361277, 1.176696810829104192}));
}

TEST_CASE("group_norm: G = C equals instance_norm", "[group_norm][instance_norm]") {
  const auto x = generate_normal(3 * 6 * 10, 1.0, 2.0, 7);
  Problem gn = problem(Op::group_norm, {3, 6, 10}, x, DType::f32);
  gn.conv.num_groups = 6;
  gn.conv.eps = 1e-5;
  Problem in = gn;
  in.op = Op::instance_norm;
  in.conv.num_groups = 0;
  CHECK(exact(gn) == exact(in));
  CHECK(normcheck::test::cpu(gn) == normcheck::test::cpu(in));
  Problem small = problem(Op::instance_norm, {1, 2, 3}, {1, 2, 3, 10, 20, 30});
  CHECK(exact(small) == cat(kLn123, kLn123));
}

TEST_CASE("group_norm: gamma and beta apply per channel, not per group", "[group_norm]") {
  Problem p = problem(Op::group_norm, {1, 4, 2}, {1, 2, 3, 4, 11, 13, 13, 11});
  p.conv.num_groups = 2;
  p.conv.affine = Affine::gamma_beta;
  p.inputs["gamma"] = tensor({4}, {1, 1.0625, 1.125, 1.1875});
  p.inputs["beta"] = tensor({4}, {0.5, -0.5, 0.25, 0});
  CHECK(exact(p) == std::vector<double>{-0.8416407864998738178, 0.05278640450004206072, -0.02483555478129468951,
                                        0.9254933356561159315, -0.875, 1.375, 1.1875, -1.1875});
}

TEST_CASE("group_norm: G must divide C", "[group_norm][validate]") {
  Problem p = problem(Op::group_norm, {1, 4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  p.conv.num_groups = 3;
  try {
    validate(p);
    FAIL("G = 3 accepted for C = 4");
  } catch (const SpecError& e) {
    CHECK(e.field == "convention.num_groups");
  }
  const std::string f = std::string(NORMCHECK_SOURCE_DIR) + "/tests/data/group_norm_bad_groups.toml";
  try {
    parse_case_file(f);
    FAIL("no CaseError");
  } catch (const CaseError& e) {
    CHECK(e.line == 10);
    CHECK(e.field == "case.gn_3_groups_of_4_channels.convention.num_groups");
  }
}

TEST_CASE("instance_norm: spatial size 1 normalizes to 0, leaving beta", "[instance_norm][degenerate]") {
  Problem p = problem(Op::instance_norm, {2, 2, 1}, {1, -2, 300, 4});
  p.conv.eps = 1e-5;
  p.conv.affine = Affine::gamma_beta;
  p.inputs["gamma"] = tensor({2}, {2, 3});
  p.inputs["beta"] = tensor({2}, {0.5, -0.5});
  CHECK(exact(p) == std::vector<double>{0.5, -0.5, 0.5, -0.5});
  CHECK(normcheck::test::cpu(p) == std::vector<double>{0.5, -0.5, 0.5, -0.5});
}

TEST_CASE("group_norm: a constant group gives zeros, not NaN", "[group_norm][degenerate]") {
  Problem p = problem(Op::group_norm, {1, 4, 2}, {5, 5, 5, 5, 1, 3, 1, 3}, DType::f32);
  p.conv.num_groups = 2;
  p.conv.eps = 1e-5;
  const auto y = normcheck::test::cpu(p);
  CHECK(std::vector<double>(y.begin(), y.begin() + 4) == std::vector<double>{0, 0, 0, 0});
}
