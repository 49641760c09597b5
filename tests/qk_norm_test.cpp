// qk_norm: the reference against shared/spec/worked-examples.md "Formulas" (QK-norm), exactly.
#include <cmath>

#include <catch2/catch.hpp>

#include "family_test_util.hpp"
#include "ops/registry.hpp"

using namespace normcheck;
using normcheck::test::exact;
using normcheck::test::problem;
using normcheck::test::tensor;

namespace {
Problem qk(const Shape& qs, const std::vector<double>& q, const Shape& ks, const std::vector<double>& k, DType t = DType::f64) {
  Problem p = problem(Op::qk_norm, qs, q, t);
  p.inputs["k"] = tensor(ks, k, t);
  return p;
}
}  // namespace

TEST_CASE("qk_norm: scores are invariant to a common scale of q or k ([2,1] vs [6,3])", "[qk_norm]") {
  const Problem a = qk({1, 1, 1, 2}, {2, 1}, {1, 1, 1, 2}, {2, 1});
  const Problem b = qk({1, 1, 1, 2}, {6, 3}, {1, 1, 1, 2}, {2, 1});
  const Problem c = qk({1, 1, 1, 2}, {2, 1}, {1, 1, 1, 2}, {6, 3});
  CHECK(exact(a) == std::vector<double>{1.414213562373095049});
  CHECK(exact(a, "q_hat") == std::vector<double>{1.264911064067351733, 0.6324555320336758664});
  CHECK(exact(b) == exact(a));
  CHECK(exact(c) == exact(a));
  CHECK(exact(b, "q_hat") == exact(a, "q_hat"));
  CHECK(exact(qk({1, 1, 1, 2}, {2, 1}, {1, 1, 1, 2}, {1, 2})) == std::vector<double>{1.131370849898476039});
}

TEST_CASE("qk_norm: |s| <= sqrt(d_k) with unit gains, 11.3137084989847604 at d_k = 128", "[qk_norm]") {
  const auto q = generate_normal(128, 0, 1, 5);
  CHECK(exact(qk({1, 1, 1, 128}, q, {1, 1, 1, 128}, q)) == std::vector<double>{11.31370849898476039});
  // Random heads: every score within the bound.
  const Problem r = qk({2, 2, 8, 128}, generate_normal(4096, 0.5, 3, 6), {2, 2, 8, 128}, generate_normal(4096, -1, 0.1, 7));
  for (double s : exact(r)) CHECK(std::fabs(s) <= 11.31370849898476039);
}

TEST_CASE("qk_norm: the l2 form is g times the cosine", "[qk_norm]") {
  Problem p = qk({1, 1, 1, 2}, {3, 4}, {1, 1, 2, 2}, {4, 3, 30, 40});
  p.conv = default_convention(Op::l2_normalize);
  p.conv.qk_form = QkForm::l2;
  p.inputs["g"] = tensor({1}, {10});
  CHECK(exact(p) == std::vector<double>{9.6, 10});
  CHECK(exact(p, "k_hat") == std::vector<double>{0.8, 0.6, 0.6, 0.8});
}

TEST_CASE("qk_norm: statistics per head, not across heads", "[qk_norm]") {
  // Head 1 is head 0 times 100: per-head q^ are equal; across heads they would not be.
  std::vector<double> q{2, 1, 1, 3};
  q.insert(q.end(), {200, 100, 100, 300});
  const Problem p = qk({1, 2, 2, 2}, q, {1, 2, 1, 2}, {1, 1, 1, 1});
  const auto qh = exact(p, "q_hat");
  CHECK(std::vector<double>(qh.begin(), qh.begin() + 4) == std::vector<double>(qh.begin() + 4, qh.end()));
}
