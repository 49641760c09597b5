// batch_norm: the reference against shared/spec/worked-examples.md "BatchNorm", exactly
// (the 19-digit decimals round to the same binary64 as the correctly rounded reference).
#include <cmath>

#include <catch2/catch.hpp>

#include "cases/case.hpp"
#include "family_test_util.hpp"

using namespace normcheck;
using normcheck::test::exact;
using normcheck::test::problem;
using normcheck::test::tensor;

namespace {
Problem bn(const Shape& xs, const std::vector<double>& x, double momentum, std::vector<double> rm, std::vector<double> rv) {
  Problem p = problem(Op::batch_norm, xs, x);
  p.conv.momentum = momentum;
  const Shape c{static_cast<std::int64_t>(rm.size())};
  p.inputs["running_mean"] = tensor(c, rm);
  p.inputs["running_var"] = tensor(c, rv);
  return p;
}
}  // namespace

TEST_CASE("batch_norm: rows (1,10), (3,20), (5,30) normalize per column", "[batch_norm]") {
  const Problem p = bn({3, 2}, {1, 10, 3, 20, 5, 30}, 0.1, {0, 0}, {1, 1});
  CHECK(exact(p) == std::vector<double>{-1.224744871391589049, -1.224744871391589049, 0, 0, 1.224744871391589049,
                                        1.224744871391589049});
}

TEST_CASE("batch_norm: training on [1, 3] with momentum 1 gives [-1, 1] and the unbiased running_var 2", "[batch_norm]") {
  const Problem p = bn({2, 1}, {1, 3}, 1.0, {0}, {1});
  CHECK(exact(p) == std::vector<double>{-1, 1});
  CHECK(exact(p, "running_mean") == std::vector<double>{2});
  CHECK(exact(p, "running_var") == std::vector<double>{2});
}

TEST_CASE("batch_norm: running_variance = biased (Keras, Flax) folds the 1/m batch variance into running_var", "[batch_norm]") {
  // [1, 2, 4]: mean 7/3, sum of squares 42/9; momentum 0.25 (exact): unbiased 42/18 = 7/3,
  // running_var 0.75 + 0.25 * 7/3 = 4/3; biased 42/27 = 14/9, running_var 0.75 + 0.25 * 14/9 = 41/36.
  Problem p = bn({3, 1}, {1, 2, 4}, 0.25, {0}, {1});
  CHECK(exact(p, "running_var") == std::vector<double>{4.0 / 3});
  p.conv.running_variance = Variance::biased;
  CHECK(exact(p, "running_var") == std::vector<double>{41.0 / 36});
  CHECK(exact(p, "running_mean") == std::vector<double>{7.0 / 12});  // the mean's update does not change
  // The cpu kernel follows the key (within an ulp of 41/36).
  CHECK(normcheck::test::cpu(p, "running_var").at(0) == Approx(41.0 / 36).epsilon(1e-15));
}

TEST_CASE("batch_norm: eval on [1, 3] with those running stats gives [-1, 1] / sqrt(2)", "[batch_norm]") {
  Problem p = bn({2, 1}, {1, 3}, 1.0, {2}, {2});
  p.conv.training = false;
  CHECK(exact(p) == std::vector<double>{-0.7071067811865475244, 0.7071067811865475244});
  CHECK(exact(p, "running_var") == std::vector<double>{2});  // eval leaves the state alone
}

TEST_CASE("batch_norm: eval with track_running_stats = false uses the batch statistics", "[batch_norm]") {
  Problem p = problem(Op::batch_norm, {2, 1}, {1, 3});
  p.conv.training = false;
  p.conv.track_running_stats = false;
  CHECK(exact(p) == std::vector<double>{-1, 1});
  CHECK(reference::evaluate_exact(p).count("running_var") == 0);
}

// momentum 0.1 is the binary64 value 0.1000000000000000055511..., so running stats computed
// exactly from it differ from the decimal worked values by ~5e-17 relative: the checks
// allow that plus the final rounding, 1 ulp (momentum 0.125 below shows the update is exact).
TEST_CASE("batch_norm: running stats after [0,2,10,12]", "[batch_norm]") {
  const Problem p = bn({4, 1}, {0, 2, 10, 12}, 0.1, {0}, {1});
  CHECK(exact(p) == std::vector<double>{-1.176696810829104192, -0.7844645405527361277, 0.7844645405527361277,
                                        1.176696810829104192});
  CHECK(exact(p, "running_mean")[0] == Approx(0.6).epsilon(4e-16));
  CHECK(exact(p, "running_var")[0] == Approx(4.366666666666666667).epsilon(4e-16));
  const Problem q = bn({4, 1}, {0, 2, 10, 12}, 0.125, {0}, {1});
  CHECK(exact(q, "running_mean") == std::vector<double>{0.75});
  CHECK(exact(q, "running_var") == std::vector<double>{0.875 + 104.0 / 24});  // 0.875 + 13/3: one rounding
}

TEST_CASE("batch_norm: two halves [0,2] then [10,12] give (0.1, 1.1) then (1.19, 1.19)", "[batch_norm]") {
  const Problem first = bn({2, 1}, {0, 2}, 0.1, {0}, {1});
  CHECK(exact(first) == std::vector<double>{-1, 1});
  CHECK(exact(first, "running_mean")[0] == Approx(0.1).epsilon(4e-16));
  CHECK(exact(first, "running_var")[0] == Approx(1.1).epsilon(4e-16));
  Problem both = bn({2, 2, 1}, {0, 2, 10, 12}, 0.1, {0}, {1});
  both.conv.sequence = true;
  CHECK(exact(both) == std::vector<double>{-1, 1, -1, 1});
  CHECK(exact(both, "running_mean")[0] == Approx(1.19).epsilon(4e-16));
  CHECK(exact(both, "running_var")[0] == Approx(1.19).epsilon(4e-16));
}

TEST_CASE("batch_norm: gradient accumulation does not merge statistics", "[batch_norm]") {
  const Problem whole = bn({4, 1}, {0, 2, 10, 12}, 0.1, {0}, {1});
  Problem halves = bn({2, 2, 1}, {0, 2, 10, 12}, 0.1, {0}, {1});
  halves.conv.sequence = true;
  CHECK(exact(whole) != exact(halves));
  CHECK(exact(whole, "running_mean") != exact(halves, "running_mean"));
  CHECK(exact(whole, "running_var") != exact(halves, "running_var"));
}

TEST_CASE("batch_norm: momentum none is PyTorch's cumulative moving average", "[batch_norm]") {
  Problem p = bn({2, 2, 1}, {0, 2, 10, 12}, 0.1, {0}, {1});
  p.conv.sequence = true;
  p.conv.momentum.reset();  // a = 1/1, then 1/2
  CHECK(exact(p, "running_mean") == std::vector<double>{6});
  CHECK(exact(p, "running_var") == std::vector<double>{2});
  Problem resumed = bn({4, 1}, {0, 2, 10, 12}, 0.1, {0}, {1});
  resumed.conv.momentum.reset();
  resumed.conv.num_batches_tracked = 3;  // a = 1/4
  CHECK(exact(resumed, "running_mean") == std::vector<double>{1.5});
  CHECK(exact(resumed, "running_var") == std::vector<double>{9.416666666666666667});
}

TEST_CASE("batch_norm: training on [1, C] is rejected, [1, C, L > 1] is valid", "[batch_norm][validate]") {
  const Problem one = bn({1, 2}, {1, 2}, 0.1, {0, 0}, {1, 1});
  try {
    validate(one);
    FAIL("training on [1, C] was accepted");
  } catch (const SpecError& e) {
    CHECK(e.field == "inputs.x.shape");
  }
  Problem eval = one;
  eval.conv.training = false;
  CHECK_NOTHROW(validate(eval));
  const Problem over_time = bn({1, 2, 3}, {1, 2, 3, 10, 20, 30}, 0.1, {0, 0}, {1, 1});
  CHECK_NOTHROW(validate(over_time));
  CHECK(exact(over_time, "running_var")[0] == Approx(1.0).epsilon(4e-16));
  CHECK(exact(over_time, "running_var")[1] == Approx(10.9).epsilon(4e-16));
}

TEST_CASE("batch_norm: a case file training on [1, C] fails with file, line and field", "[batch_norm][parser]") {
  const std::string f = std::string(NORMCHECK_SOURCE_DIR) + "/tests/data/batch_norm_training_1xC.toml";
  try {
    parse_case_file(f);
    FAIL("no CaseError");
  } catch (const CaseError& e) {
    CHECK(e.line == 14);
    CHECK(e.field == "case.bn_train_1xC.inputs.x.shape");
  }
}

TEST_CASE("batch_norm: running stats are required exactly when tracked", "[batch_norm][validate]") {
  Problem p = problem(Op::batch_norm, {2, 1}, {1, 3});
  try {
    validate(p);
    FAIL("missing running_mean accepted");
  } catch (const SpecError& e) {
    CHECK(e.field == "inputs.running_mean");
  }
  p.conv.track_running_stats = false;
  CHECK_NOTHROW(validate(p));
  p.inputs["running_mean"] = tensor({1}, {0});
  CHECK_THROWS_AS(validate(p), SpecError);
}

TEST_CASE("batch_norm: the cpu kernel keeps a NaN in its channel", "[batch_norm][nan]") {
  const Problem p = bn({2, 3}, {1, NAN, 0, 4, 6, 2}, 0.1, {0, 0, 0}, {1, 1, 1});
  const auto y = normcheck::test::cpu(p), rm = normcheck::test::cpu(p, "running_mean");
  CHECK(std::isnan(y[1]));
  CHECK(std::isnan(y[4]));
  CHECK(std::isnan(rm[1]));
  CHECK(y[0] == Approx(-1));
  CHECK(rm[2] == Approx(0.1));
}
