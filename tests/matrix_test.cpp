// The coverage matrix's quick tier (part of the default suite) holds, for every op, the points
// where kernels change strategy with the problem's size (cases/matrix.hpp "scale"): a gap
// audit's faulty backends, each modelled on a published bug class (rows past a launch grid's
// y limit, a persistent kernel's state carried from group to group, a row split over blocks
// and merged without Welford's correction, dgamma/dbeta partial sums of row tiles dropped),
// passed the default suite before them. A point an op's sample rule refuses is left out of
// the matrix silently, so each is asserted here by its generated case.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>

#include <fmt/format.h>

#include "cases/matrix.hpp"
#include "spec/op.hpp"
#include "ops/registry.hpp"

using namespace normcheck;

namespace {
/// The quick tier's cases by name: get(name) is the case's problem, or null when the point
/// is not in the matrix (an op's sample rule refused it).
struct QuickPoints {
  std::vector<Case> all = coverage_matrix(Tier::quick);
  std::map<std::string, const Problem*> by_name;
  QuickPoints() {
    for (const Case& cs : all) by_name[cs.name] = &cs.problem;
  }
  const Problem* get(const std::string& name) const {
    const auto it = by_name.find(name);
    return it == by_name.end() ? nullptr : it->second;
  }
};
}  // namespace

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

// The structure points (cases/matrix.cpp "Structure", Dims::wide), the 13-group points, the
// backward of narrow data with binary32 parameters and outputs and the 32769-wide rows: a second
// gap audit's faulty backends (gamma indexed by group at 8 channels per group, channels_last
// read as channels-first from C = 16, statistics over the last dim of a 2-D normalized_shape,
// the last rows % 4 of a half-precision tensor unwritten, dx without its mean term in f16,
// dgamma rounded to bf16, f16 partial sums beyond 16385 values) passed the default suite before
// them. Each point is asserted by its case, and the structure it stands for by the problem.
TEST_CASE("coverage matrix quick: every op has the structure points, with their structure", "[matrix]") {
  const QuickPoints q;
  auto get = [&](const std::string& name) { return q.get(name); };
  std::int64_t ops_checked = 0;
  for (Op op : ops::all()) {
    if (!op.def().sample) continue;
    const std::string o(op.name());
    INFO(o);
    const std::string base = "mx_" + o + "_";
    const bool bwd = op.def().has_backward();
    for (const char* x : {"f32", "bf16", "f16"}) {
      const std::string xx = std::string(x) + "_" + x;
      CHECK(get(base + "w64_r32_" + xx + "_normal_typical_wide"));
      if (bwd) CHECK(get(base + "w64_r32_" + xx + "_normal_typical_bwd_wide"));
    }
    for (const char* x : {"bf16", "f16"}) {
      const std::string xx = std::string(x) + "_" + x;
      CHECK(get(base + "w33_r13_" + xx + "_normal_typical"));
      CHECK(get(base + "w32769_r2_" + xx + "_normal_typical"));
      if (bwd) {
        CHECK(get(base + "w33_r13_" + xx + "_normal_typical_bwd"));
        CHECK(get(base + "w33_r3_" + std::string(x) + "_f32_normal_typical_outf32_bwd"));
      }
    }
    // every view, in f32 and bf16, forward and backward (a view that leaves x in row-major
    // order is refused by the draw and would drop out silently)
    for (const char* l : {"offset", "padded", "transposed", "channels_last"})
      for (const char* x : {"f32", "bf16"})
        for (const char* b : {"", "_bwd"}) {
          if (*b && !bwd) continue;
          INFO(l << " " << x << b);
          CHECK(get(base + "w64_r32_" + x + "_" + x + "_normal_typical" + b + "_" + l + "_wide"));
        }
    // The structure itself, in the f32 forward point (and the backward one where there is one).
    for (const std::string suffix : {"_wide", "_bwd_wide"}) {
      if (suffix == "_bwd_wide" && !bwd) continue;
      const Problem* p = get(base + "w64_r32_f32_f32_normal_typical" + suffix);
      if (!p) continue;  // (failed above)
      INFO(suffix);
      if (o == "group_norm") {
        CHECK(p->conv.num_groups == 9);                        // past a tile of 4 or 8 groups
        CHECK(p->x().shape()[1] / p->conv.num_groups == 32);  // channels per group, past 16
      }
      if (o == "ada_layer_norm" || o == "ada_rms_norm") CHECK(p->x().shape()[0] == 3);  // three batches
      if (o == "instance_norm" || o == "batch_norm") CHECK(p->x().shape()[1] >= 16);
      if (o == "layer_norm" || o == "rms_norm" || o == "scale_norm" || o == "dyt" || o == "l2_normalize" || o.rfind("fused_add", 0) == 0 ||
          o.find("_quant") != std::string::npos)
        CHECK(p->conv.normalized_shape.size() == 2);
      if (o.rfind("fused_add", 0) == 0) CHECK(p->inputs.count("bias") == 1);
      if (o.find("_quant") != std::string::npos) CHECK(p->inputs.count("residual") == 1);
      if (o == "qk_norm") CHECK(p->x().shape()[0] == 2);  // two batches
    }
    // channels_last at C >= 16 (the channel ops: it is their layout)
    if (o == "group_norm" || o == "instance_norm" || o == "batch_norm") {
      bool c16 = false;
      for (const char* x : {"f32", "bf16"})
        for (const char* b : {"", "_bwd"})
          if (const Problem* p = get(base + "w64_r32_" + x + "_" + x + "_normal_typical" + b + "_channels_last_wide"))
            c16 = c16 || p->x().shape()[1] >= 16;
      CHECK(c16);
    }
    if (o == "layer_norm" || o == "rms_norm")
      if (const Problem* p = get(base + "w33_r13_bf16_bf16_normal_typical")) CHECK(p->x().size() / 33 == 13);
    ++ops_checked;
  }
  CHECK(ops_checked >= 15);
}

// The many-groups points (matrix.hpp): a fourth gap audit's faulty backends (statistics of
// row i % 1024 in bf16/f16, a row tail left out of the statistics past 1024 rows, eval
// running stats of channel c % 1024, group_norm's statistics wrapping past 1024 groups of
// several channels, dx of a row tail wrong past 1024 rows, a backward group's last partial
// chunk of 1024 dropped, f16 views read with dense strides, f64 views from offset 0) passed
// both tiers before them. Each point exists for every op, with the structure it stands for.
TEST_CASE("coverage matrix quick: every op has the many-groups points, with their structure", "[matrix]") {
  const QuickPoints q;
  auto get = [&](const std::string& name) { return q.get(name); };
  std::int64_t ops_checked = 0;
  for (Op op : ops::all()) {
    if (!op.def().sample) continue;
    const std::string o(op.name());
    INFO(o);
    const std::string base = "mx_" + o + "_";
    const bool bwd = op.def().has_backward();
    std::vector<std::string> names = {"w6_r1031_f32_f32_normal_typical", "w13_r1031_f32_f32_normal_typical",
                                      "w6_r1031_bf16_bf16_normal_typical", "w6_r1031_f16_f16_normal_typical",
                                      "w1_r1031_f32_f32_normal_typical", "w12_r1031_f32_f32_normal_typical_wide",
                                      "w12_r1031_bf16_bf16_normal_typical_wide"};
    if (bwd) {
      names.push_back("w12_r1031_f32_f32_normal_typical_bwd");
      names.push_back("w12_r1031_f32_f32_normal_typical_bwd_wide");
      for (const char* x : {"f32", "bf16"}) names.push_back("w1500_r2_" + std::string(x) + "_" + x + "_normal_typical_bwd");
    }
    for (const std::string& n : names) {
      INFO(n);
      const Problem* p = get(base + n);
      REQUIRE(p);
      const ReductionLayout l = group_layout(*p);
      // 1031 groups (w1500: two groups of 1500 values; dyt's groups are its normalized_shape;
      // l2_normalize and scale_norm draw axes = [0] at times, which turns the groups and
      // their values around)
      const std::size_t groups = l.base.size(), values = l.member.size();
      const bool turned = (o == "l2_normalize" || o == "scale_norm") && p->conv.axes == std::vector<std::int64_t>{0};
      if (n.find("w1500") != std::string::npos) CHECK((turned ? groups : values) >= 1500);
      else if (o != "dyt") CHECK((turned ? values : groups) >= 1024);
    }
    if (const Problem* p = get(base + "w1_r1031_f32_f32_normal_typical"); p && o == "batch_norm") {
      CHECK(!p->conv.training);
      CHECK(p->x().shape()[1] > 1024);  // channels
    }
    if (const Problem* p = get(base + "w12_r1031_f32_f32_normal_typical_wide"); p && o == "group_norm")
      CHECK(p->x().shape()[1] / p->conv.num_groups > 1);  // several channels per group
    // (channels_last at 3 groups is row-major for most draws, which the draw refuses: the
    // wide points above hold it in f32 and bf16)
    for (const char* l : {"offset", "padded", "transposed"})
      for (const char* x : {"f16", "f64"}) {
        INFO(l << " " << x);
        CHECK(get(base + "w33_r3_" + x + "_" + x + "_normal_typical_" + l));
      }
    ++ops_checked;
  }
  CHECK(ops_checked >= 15);
}

// The placement points (matrix.hpp): a third gap audit's faulty backends (clamp_var and
// clamp_norm swapped in rms_norm_quant; a backward that takes the inside_sqrt form for every
// placement in batch_norm, group_norm and scale_norm) and the cpu kernels' NaN for constant
// rows of |x| ~ 2^116 under outside_sqrt (1/D overflowed binary32) passed the default suite
// before them. Each point exists for every op, in each direction it has, and its problem has
// the placement named and, for constant_huge, rows of one value at the top of the range.
TEST_CASE("coverage matrix quick: every op has every eps placement where eps decides", "[matrix]") {
  const QuickPoints q;
  std::int64_t ops_checked = 0, points = 0;
  for (Op op : ops::all()) {
    if (!op.def().sample) continue;
    const std::string o(op.name());
    INFO(o);
    for (const char* pl : {"inside_sqrt", "outside_sqrt", "clamp_var", "clamp_norm"})
      for (const char* dir : {"", "_bwd"}) {
        if (*dir && !op.def().has_backward()) continue;
        for (const char* re : {"constant_typical", "constant_dominant", "tiny_comparable", "constant_huge_typical", "normal_comparable"}) {
          const std::string name = "mx_" + o + "_w9_r2_f32_f32_" + re + dir + "_" + pl;
          INFO(name);
          const Problem* pp = q.get(name);
          REQUIRE(pp);
          const Problem& p = *pp;
          CHECK(to_string(p.conv.eps_placement) == pl);
          CHECK((p.conv.direction == Direction::backward) == (*dir != '\0'));
          if (std::string(re) == "constant_huge_typical") {
            CHECK(std::abs(p.x().get(0)) >= 0x1p100);  // 2^117 N(0, 1): |N| below 2^-17 has odds 1e-5
          }
          ++points;
        }
      }
    ++ops_checked;
  }
  CHECK(ops_checked >= 15);
  CHECK(points >= 15 * 4 * 5);
}

// The sixth audit's points (matrix.cpp and the ops' sample rules): faulty backends each
// modelled on a published bug passed the default suite without them: a grid of at most 65535
// rows in one kernel only (rows of 4 or more values, bf16, the backward launch, dgamma over
// the first 65535 rows), an element count in 16 bits, f16/f64 views read as dense in
// backward, tanh(|alpha| x), momentum past 0.5 flipped, 0 read as none, group_norm statistics
// from a tile of 16 channels or group g read as g % 4, instance_norm channel c read as c % 32,
// f16 weights cast to bf16 data, qk_norm ignoring variance = unbiased or folding sqrt(g), an ada
// batch index read mod 2, and (x w) r in f32 on subnormal rows with a gamma. Each point exists
// for every op, and the draws hold what they stand for.
TEST_CASE("coverage matrix quick: the sixth audit's points and draws", "[matrix]") {
  const QuickPoints q;
  std::int64_t ops_checked = 0;
  bool dyt_negative = false, qk_unbiased = false, qk_negative_g = false, bn_09 = false, bn_0 = false;
  for (const Case& cs : q.all) {
    const Problem& p = cs.problem;
    if (p.op.name() == "dyt" && p.input("alpha") && p.input("alpha")->get(0) < 0) dyt_negative = true;
    if (p.op == Op::qk_norm && p.conv.variance == Variance::unbiased) qk_unbiased = true;
    if (p.op == Op::qk_norm && p.input("g") && p.input("g")->get(0) < 0) qk_negative_g = true;
    if (p.op == Op::batch_norm && p.conv.training && p.conv.track_running_stats && p.conv.momentum == 0.9) bn_09 = true;
    if (p.op == Op::batch_norm && p.conv.training && p.conv.track_running_stats && p.conv.momentum == 0.0) bn_0 = true;
  }
  CHECK(dyt_negative);
  CHECK(qk_unbiased);
  CHECK(qk_negative_g);
  CHECK(bn_09);
  CHECK(bn_0);
  for (Op op : ops::all()) {
    if (!op.def().sample) continue;
    const std::string o(op.name());
    INFO(o);
    const std::string base = "mx_" + o + "_";
    const bool bwd = op.def().has_backward();
    std::vector<std::string> names = {"w65537_r1_f32_f32_normal_typical", "w12_r2_bf16_f16_normal_typical",
                                      "w64_r2_f16_bf16_normal_typical"};
    if (!op.def().elementwise) names.push_back("w5_r65537_bf16_bf16_normal_typical");
    if (op == Op::layer_norm || op == Op::rms_norm) {
      names.push_back("w2_r70001_f32_f32_normal_typical_bwd_params");
      const Problem* p = q.get(base + "w2_r70001_f32_f32_normal_typical_bwd_params");
      CHECK((p && p->input("gamma")));  // dgamma summed over every row
    }
    for (const char* l : {"offset", "padded", "transposed"})
      for (const char* x : {"f16", "f64"})
        if (bwd) names.push_back(fmt::format("w33_r3_{}_{}_normal_typical_bwd_{}", x, x, l));
    for (const std::string& n : names) {
      INFO(n);
      CHECK(q.get(base + n));
    }
    // every regime with the op's parameters present
    for (Regime r : all_regimes())
      for (const char* x : {"f32", "bf16"}) {
        const std::string n = fmt::format("{}w33_r2_{}_{}_{}_typical_params", base, x, x, to_string(r));
        INFO(n);
        const Problem* p = q.get(n);
        REQUIRE(p);
        // (l2_normalize and scale_norm have no affine, the ada norms their scale and shift
        // always; qk_norm's l2 form has its g)
        if (o != "l2_normalize" && o != "scale_norm" && o.rfind("ada_", 0) != 0 && (o != "qk_norm" || p->conv.qk_form != QkForm::l2))
          CHECK(p->conv.affine != Affine::none);
      }
    if (const Problem* p = q.get(base + "w12_r1031_f32_f32_normal_typical_wide")) {
      if (o == "group_norm") CHECK(p->conv.num_groups == 9);
      if (o == "instance_norm") CHECK(p->x().shape()[1] == 40);
    }
    ++ops_checked;
  }
  CHECK(ops_checked >= 15);
}
