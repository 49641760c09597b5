// compare-eps (checks/compare_eps.hpp) and its SVG plot (report/svg_plot.hpp).
#include <catch2/catch.hpp>

#include <cmath>

#include <pugixml.hpp>

#include "checks/compare_eps.hpp"
#include "core/svg_plot.hpp"

using namespace normcheck;

namespace {
const ComparePoint& at(const CompareEpsResult& r, double mean, double var) {
  for (const auto& p : r.points)
    if (p.mean == mean && std::fabs(std::log10(p.var / var)) < 1e-9) return p;
  FAIL("no point at mean " << mean << " var " << var);
  return r.points.front();
}
std::vector<LabeledConvention> three() {
  return {parse_convention_spec("eps=1e-5,placement=inside_sqrt"), parse_convention_spec("eps=1e-6,placement=inside_sqrt"),
          parse_convention_spec("eps=1e-5,placement=outside_sqrt")};
}
}  // namespace

TEST_CASE("compare-eps: worked example, var 1e-12 and eps 1e-5", "[compare_eps]") {
  // shared/spec/worked-examples.md "Epsilon placement": inside gain 316.2277502,
  // outside gain 90909.09, 287x larger.
  CompareEpsOptions o;
  o.dtype = DType::f64;
  o.means = {0};
  const auto r = compare_eps(three(), o);
  const ComparePoint& p = at(r, 0, 1e-12);
  CHECK(static_cast<double>(p.gain[0]) == Approx(316.2277502054508182).epsilon(1e-12));
  CHECK(static_cast<double>(p.gain[2]) == Approx(90909.0909090909).epsilon(1e-12));
  CHECK(static_cast<double>(p.gain[2] / p.gain[0]) == Approx(287.48).epsilon(1e-4));
  CHECK(static_cast<double>(p.gain[1]) == Approx(1 / std::sqrt(1e-12 + 1e-6)).epsilon(1e-12));
}

TEST_CASE("compare-eps: conventions differ near zero variance and agree far above eps", "[compare_eps]") {
  CompareEpsOptions o;  // f32, means 0 1 100 1e4
  const auto r = compare_eps(three(), o);
  REQUIRE(r.points.size() == 4 * 73);
  const ComparePoint& small = at(r, 0, 1e-12);
  CHECK(small.diff_ulp[0] == 0);
  CHECK(small.diff_ulp[1] > 1e6);
  CHECK(small.diff_ulp[2] > 1e9);
  const ComparePoint& big = at(r, 0, 1e4);
  CHECK(big.diff_ulp[1] < 1);  // eps 1e-5 vs 1e-6 at var 1e4: relative 4.5e-10, below f32's ULP
  CHECK(big.diff_ulp[2] > 1);  // outside_sqrt still differs by ~eps/sqrt(v) = 1e-7 relative
  // f32 cannot hold a variance of 1e-12 around a mean of 1e4: flagged, not compared.
  CHECK_FALSE(at(r, 1e4, 1e-12).representable);
  CHECK(at(r, 1e4, 1).representable);
  const std::string t = format_compare_eps_table(r);
  CHECK_THAT(t, Catch::Contains("316.2277502"));
  CHECK_THAT(t, Catch::Contains("90909.09"));
  CHECK_THAT(t, Catch::Contains("#2 vs #1, mean 0: variance in [1e-14,"));
  // The relative difference beside the ULPs: at var 1e-12, eps 1e-5 vs 1e-6 the gains are
  // 1/sqrt(1e-5 + 1e-12) and 1/sqrt(1e-6 + 1e-12): y#2/y#1 - 1 = sqrt(10) - 1 (to 1e-6).
  CHECK(small.diff_rel[0] == 0);
  CHECK(small.diff_rel[1] == Approx(std::sqrt(10.0) - 1).epsilon(1e-5));
  CHECK(big.diff_rel[1] == Approx(0.5 * (1e-5 - 1e-6) / 1e4).epsilon(1e-3));
  CHECK_THAT(t, Catch::Contains("rel #2-#1"));
  // The rows f32 cannot represent at mean 1e4 are said once (one line of ranges), not per row.
  const std::string gap = "not representable in f32 at mean 10000: variance [1e-14, ";
  REQUIRE(t.find(gap) != std::string::npos);
  CHECK(t.find(gap, t.find(gap) + 1) == std::string::npos);
  std::size_t lines = 0;
  for (std::size_t i = t.find("not representable"); i != std::string::npos; i = t.find("not representable", i + 1)) ++lines;
  CHECK(lines == 3);  // means 1, 100 and 1e4; at mean 0 f32 holds every variance of the sweep
}

TEST_CASE("compare-eps: rms_norm depends on the mean, layer_norm does not", "[compare_eps]") {
  CompareEpsOptions o;
  o.dtype = DType::f64;
  o.means = {0, 1};
  o.op = Op::rms_norm;
  const auto r = compare_eps(three(), o);
  // RMS: the mean square is mean^2 + var. At mean 0 the gains are 1/sqrt(eps): a factor
  // sqrt(10) apart; at mean 1 only by ~(1e-5 - 1e-6)/2 relative.
  const ComparePoint& m0 = at(r, 0, 1e-12);
  const ComparePoint& m1 = at(r, 1, 1e-12);
  CHECK(static_cast<double>(m0.gain[1] / m0.gain[0]) == Approx(std::sqrt(10.0)).epsilon(1e-6));
  CHECK(static_cast<double>(m1.gain[1] / m1.gain[0] - 1) == Approx(4.5e-6).epsilon(1e-3));
  CHECK(m0.diff_ulp[1] > 1e3 * m1.diff_ulp[1]);
  o.op = Op::layer_norm;
  const auto l = compare_eps(three(), o);
  CHECK(static_cast<double>(at(l, 1, 1e-4).gain[0]) == Approx(static_cast<double>(at(l, 0, 1e-4).gain[0])).epsilon(1e-9));
}

TEST_CASE("compare-eps: convention specs are parsed strictly", "[compare_eps]") {
  const auto c = parse_convention_spec("placement=clamp_var,eps=2e-7,variance=unbiased");
  CHECK(c.conv.eps == 2e-7);
  CHECK(c.conv.eps_placement == EpsPlacement::clamp_var);
  CHECK(c.conv.variance == Variance::unbiased);
  CHECK(parse_convention_spec("eps=0,eps_placement=clamp_norm").conv.eps_placement == EpsPlacement::clamp_norm);
  CHECK_THROWS_AS(parse_convention_spec("placement=inside_sqrt"), std::invalid_argument);  // no eps
  CHECK_THROWS_AS(parse_convention_spec("eps=-1"), std::invalid_argument);
  CHECK_THROWS_AS(parse_convention_spec("eps=1e-5,placement=inside"), std::invalid_argument);
  CHECK_THROWS_AS(parse_convention_spec("eps=1e-5,gamma=1"), std::invalid_argument);
  CHECK_THROWS_AS(parse_convention_spec("eps"), std::invalid_argument);
  CHECK_THROWS_AS(compare_eps({parse_convention_spec("eps=1e-5")}, CompareEpsOptions{}), std::invalid_argument);
}

TEST_CASE("compare-eps: the SVG plot is well-formed with one line per convention and mean", "[compare_eps][svg]") {
  CompareEpsOptions o;
  o.means = {0, 1e4};
  const auto r = compare_eps(three(), o);
  const std::string svg = compare_eps_svg(r);
  pugi::xml_document doc;
  REQUIRE(doc.load_string(svg.c_str()));
  auto root = doc.child("svg");
  REQUIRE(root);
  CHECK(std::string(root.attribute("xmlns").value()) == "http://www.w3.org/2000/svg");
  int lines = 0;
  for (auto n : root.children("polyline")) {
    ++lines;
    CHECK(std::string(n.attribute("points").value()).size() > 10);
  }
  CHECK(lines == 2 * 2);  // (#2, #3) x (mean 0, mean 1e4)
  CHECK(svg.find("1 ULP") != std::string::npos);
  CHECK(svg.find("#3 = eps=1e-5,placement=outside_sqrt") != std::string::npos);
}

TEST_CASE("svg_plot: escapes text and clamps zero values to the floor", "[svg]") {
  LogLogPlot p;
  p.title = "a < b & c";
  p.series.push_back({"s", "#000", "", {{1e-3, 0.0}, {1.0, 5.0}, {10.0, 50.0}}});
  const std::string svg = render_loglog_svg(p);
  pugi::xml_document doc;
  REQUIRE(doc.load_string(svg.c_str()));
  CHECK(svg.find("a &lt; b &amp; c") != std::string::npos);
  CHECK(std::string(doc.child("svg").child("polyline").attribute("points").value()).find("nan") == std::string::npos);
}
