// Probes (checks/probe.hpp): the eps solver, the identification of reference and cpu, and
// the mutant zoo: every mutant's fault named, and nothing else named.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "spec/backend.hpp"
#include "cases/case.hpp"
#include "checks/eps_fit.hpp"
#include "checks/probe.hpp"
#include "ops/reference.hpp"
#include "ops/registry.hpp"
#include "spec/layout.hpp"
#include "backends/registry.hpp"

using namespace normcheck;

namespace {

/// Findings that name a convention or a kernel fault (the degenerate-row findings are
/// consequences and may accompany any fault).
const std::set<std::string> kConventionKeys = {
    "reduction_axes", "sequence_leak", "batch_leak", "centering", "eps", "eps_placement", "variance", "gain_law",
    "affine[gamma]", "affine[gamma_beta]", "affine[one_plus_w]", "gamma_broadcast", "beta_broadcast",
    "accumulation_precision", "accumulation_algorithm", "per_index"};

std::set<std::string> convention_deviations(const ProbeResult& r) {
  std::set<std::string> s;
  for (const Finding* f : r.deviations())
    if (kConventionKeys.count(f->property)) s.insert(f->property);
  return s;
}

ProbeResult probe_named(const std::string& backend, Op op, DType dt = DType::f32) {
  auto b = make_backend(backend);
  ProbeOptions o = default_probe_options(op);
  o.dtype = dt;
  return probe(*b, o);
}

const Finding& get(const ProbeResult& r, const std::string& key) {
  const Finding* f = r.find(key);
  INFO("finding " << key);
  REQUIRE(f != nullptr);
  return *f;
}

/// A backend that evaluates the exact reference under a convention of its own, whatever
/// the problem asks: a stand-in for a third-party kernel with an unusual eps convention.
class FixedConventionBackend final : public Backend {
 public:
  FixedConventionBackend(EpsPlacement pl, double eps) : pl_(pl), eps_(eps) {}
  std::string name() const override { return "fixed"; }
  std::string description() const override { return "reference with a fixed eps convention"; }
  std::optional<std::string> unsupported(const ValidProblem&, const Recorded&) const override { return std::nullopt; }
  Outputs run(const ValidProblem& p, const Recorded&) override {
    Problem q = *p;
    q.conv.eps_placement = pl_;
    q.conv.eps = eps_;
    Outputs o;
    o["y"] = reference::evaluate_exact(q).at("y").rounded();
    return o;
  }

 private:
  EpsPlacement pl_;
  double eps_;
};

/// A plain row kernel (biased, inside_sqrt, two-pass, affine per the problem) whose sums
/// and products are rounded by `rd`, and whose NaN/Inf inputs are read as 0 when
/// `swallow_nonfinite`: stand-ins for faults outside the registry's mutants (bfloat16
/// accumulation; nan_to_num before normalizing).
class RowKernelBackend final : public Backend {
 public:
  RowKernelBackend(double (*rd)(double), bool swallow_nonfinite) : rd_(rd), swallow_(swallow_nonfinite) {}
  std::string name() const override { return "row-kernel"; }
  std::string description() const override { return "test row kernel"; }
  std::optional<std::string> unsupported(const ValidProblem&, const Recorded&) const override { return std::nullopt; }
  Outputs run(const ValidProblem& vp, const Recorded&) override {
    const Problem& p = *vp;
    const RowLayout l = row_layout(p);
    const Tensor& x = p.x();
    const Tensor* g = p.input("gamma");
    const Tensor* b = p.input("beta");
    auto xat = [&](std::int64_t i) { const double v = x.get(i); return swallow_ && !std::isfinite(v) ? 0.0 : v; };
    Tensor y(p.out_dtype, x.shape());
    for (std::int64_t r = 0; r < l.rows; ++r) {
      const std::int64_t off = r * l.m;
      double s = 0, ss = 0;
      for (std::int64_t j = 0; j < l.m; ++j) s = rd_(s + rd_(xat(off + j)));
      const double mu = p.op == Op::layer_norm ? rd_(s / static_cast<double>(l.m)) : 0.0;
      for (std::int64_t j = 0; j < l.m; ++j) { const double dv = rd_(rd_(xat(off + j)) - mu); ss = rd_(ss + rd_(dv * dv)); }
      const double rstd = rd_(1 / std::sqrt(rd_(ss / static_cast<double>(l.m)) + p.conv.eps));
      for (std::int64_t j = 0; j < l.m; ++j) {
        double n = rd_(xat(off + j) - mu) * rstd;
        if (p.conv.affine == Affine::one_plus_w) n *= 1 + g->get(j);
        else if (g) n *= g->get(j);
        if (b) n += b->get(j);
        y.set(off + j, std::isnan(xat(off + j)) ? NAN : n);
      }
    }
    Outputs o;
    o["y"] = std::move(y);
    return o;
  }

 private:
  double (*rd_)(double);
  bool swallow_;
};

double round_bf16(double v) { return round_to(DType::bf16, v); }
double round_none(double v) { return v; }

}  // namespace

TEST_CASE("probe: bfloat16 accumulation is told from binary16 by its range", "[probe]") {
  for (Op op : {Op::layer_norm, Op::rms_norm}) {
    RowKernelBackend b(&round_bf16, false);
    const ProbeResult r = probe(b, default_probe_options(op));
    INFO(format_probe_summary({r}));
    CHECK(r.inferred.acc_dtype == DType::bf16);
    CHECK(get(r, "accumulation_precision").deviates);
    CHECK(convention_deviations(r) == std::set<std::string>{"accumulation_precision"});
  }
}

TEST_CASE("probe: a kernel that reads NaN/Inf as 0 is caught by the poisoned-row probes", "[probe][degenerate]") {
  RowKernelBackend b(&round_none, true);
  const ProbeResult r = probe(b, default_probe_options(Op::layer_norm));
  INFO(format_probe_summary({r}));
  CHECK(convention_deviations(r).empty());
  for (const char* k : {"nan_input", "inf_input"}) {
    CHECK(get(r, k).deviates);
    CHECK_THAT(get(r, k).value, Catch::Contains("swallowed"));
  }
  CHECK_FALSE(get(r, "constant_row").deviates);
}

TEST_CASE("eps_fit: every placement and estimator is recovered from exact gains", "[probe][eps_fit]") {
  const std::int64_t m = 64;
  for (EpsPlacement pl : {EpsPlacement::inside_sqrt, EpsPlacement::outside_sqrt, EpsPlacement::clamp_var,
                          EpsPlacement::clamp_norm}) {
    for (Variance var : {Variance::biased, Variance::unbiased}) {
      for (double eps : {1e-5, 1e-6, 3e-4}) {
        const double c = var == Variance::biased ? 1.0 : 64.0 / 63.0;
        std::vector<GainSample> s;
        for (int k = -28; k <= 4; ++k) {
          const double v = std::pow(10.0, k / 2.0);
          s.push_back({v, model_gain(pl, c, eps, v)});
        }
        const auto fits = fit_eps_models(s, m, 1e-9);
        INFO(to_string(pl) << " " << to_string(var) << " eps " << eps);
        // clamp_var(eps) and clamp_norm(sqrt(eps)) are one function: either may come first.
        const bool clamp = pl == EpsPlacement::clamp_var || pl == EpsPlacement::clamp_norm;
        const std::size_t i = fits[0].placement == pl ? 0 : 1;
        CHECK(fits[i].placement == pl);
        CHECK(fits[i].variance == var);
        CHECK(fits[i].eps == Approx(eps).epsilon(1e-6));
        CHECK(fits[i].residual < 1e-9);
        CHECK(std::strtod(fits[i].eps_text.c_str(), nullptr) == Approx(eps).epsilon(1e-9));
        if (clamp) {
          const EpsFit& twin = fits[1 - i];
          CHECK(twin.placement == (pl == EpsPlacement::clamp_var ? EpsPlacement::clamp_norm : EpsPlacement::clamp_var));
          CHECK(twin.eps == Approx(pl == EpsPlacement::clamp_var ? std::sqrt(eps) : eps * eps).epsilon(1e-6));
          CHECK(fits[2].residual > 1e-4);  // every other model is far off
        } else {
          CHECK(i == 0);
          CHECK(fits[1].residual > 1e-4);
        }
      }
    }
  }
}

TEST_CASE("eps_fit: worked example gains (var 1e-12, eps 1e-5)", "[probe][eps_fit]") {
  // shared/spec/worked-examples.md "Epsilon placement".
  CHECK(model_gain(EpsPlacement::inside_sqrt, 1, 1e-5, 1e-12) == Approx(316.2277502054508182).epsilon(1e-14));
  CHECK(model_gain(EpsPlacement::outside_sqrt, 1, 1e-5, 1e-12) == Approx(1 / 1.1e-5).epsilon(1e-14));
  CHECK(model_gain(EpsPlacement::inside_sqrt, 1, 0, 0) == HUGE_VAL);
}

TEST_CASE("eps_fit: eps = 0 fits as zero, shortest decimal in an interval", "[probe][eps_fit]") {
  std::vector<GainSample> s;
  for (int k = -28; k <= 4; ++k) s.push_back({std::pow(10.0, k / 2.0), 1 / std::sqrt(std::pow(10.0, k / 2.0))});
  const auto fits = fit_eps_models(s, 64, 1e-9);
  CHECK(fits[0].variance == Variance::biased);
  CHECK((fits[0].eps == 0 || fits[0].eps_lo == 0));
  CHECK(fits[0].eps_hi < 1e-18);
  CHECK(shortest_decimal_in(1.0000003e-5, 0.99999e-5, 1.00001e-5) == "1e-05");
  CHECK(shortest_decimal_in(3.14159e-4, 3.1415e-4, 3.1417e-4) == "0.00031416");  // 3.142e-4 lies outside
  CHECK_THROWS_AS(fit_eps_models({{1, 1}, {2, 0.7}}, 64, 1e-9), std::invalid_argument);
}

TEST_CASE("probe: reference and cpu are identified as their true convention", "[probe][layer_norm][rms_norm]") {
  for (Op op : {Op::layer_norm, Op::rms_norm}) {
    for (const char* name : {"reference", "cpu"}) {
      const ProbeResult r = probe_named(name, op);
      INFO(name << " " << to_string(op));
      CHECK(r.deviations().empty());
      CHECK(r.inferred.eps == 1e-5);
      CHECK(r.inferred.eps_placement == EpsPlacement::inside_sqrt);
      CHECK(r.inferred.variance == Variance::biased);
      CHECK(r.inferred.normalized_shape == Shape{64});
      CHECK(r.inferred.affine == (op == Op::layer_norm ? Affine::gamma_beta : Affine::gamma));
      CHECK(r.inferred_op == op);
      // The reference is exact; the cpu kernels accumulate in binary32 (kernels/cpu/*.cpp).
      CHECK(r.inferred.acc_dtype == (std::string(name) == "cpu" ? DType::f32 : DType::f64));
      CHECK(get(r, "accumulation_precision").certainty == Certainty::certain);
      for (const char* k : {"eps", "eps_placement", "variance", "reduction_axes", "centering", "gamma_broadcast",
                            "affine[one_plus_w]", "per_index"})
        CHECK(get(r, k).certainty == Certainty::certain);
      if (op == Op::layer_norm) CHECK(get(r, "accumulation_algorithm").value == "two-pass or Welford (stable)");
      CHECK(get(r, "nan_input").value == "row all NaN; other rows unaffected");
      CHECK(get(r, "constant_row").value == (op == Op::layer_norm ? "all zero" : "finite, as the reference"));
    }
  }
}

TEST_CASE("probe: the mutant zoo, each fault named and nothing else", "[probe][mutant]") {
  struct Expect {
    const char* mutant;
    std::vector<Op> ops;
    std::set<std::string> deviating;  // exactly these convention findings deviate
    const char* key;                  // and this one's value contains `text`
    const char* text;
  };
  const std::vector<Op> both = {Op::layer_norm, Op::rms_norm};
  const std::vector<Expect> zoo = {
      {"eps_outside_sqrt", both, {"eps_placement"}, "eps_placement", "outside_sqrt"},
      {"eps_missing", both, {"eps"}, "eps", "0 (no eps"},
      {"wrong_eps", both, {"eps"}, "eps", "1e-06"},
      {"unbiased_variance", both, {"variance"}, "variance", "unbiased"},
      {"no_sqrt", both, {"gain_law"}, "gain_law", "no sqrt"},
      {"one_pass_variance", {Op::layer_norm}, {"accumulation_algorithm"}, "accumulation_algorithm", "one-pass"},
      {"f16_accumulation", both, {"accumulation_precision"}, "accumulation_precision", "f16"},
      {"rms_subtracts_mean", {Op::rms_norm}, {"centering"}, "centering", "subtracts the row mean"},
      {"ln_no_centering", {Op::layer_norm}, {"centering"}, "centering", "does not subtract"},
      {"stats_over_sequence", both, {"reduction_axes", "sequence_leak"}, "sequence_leak", "leak across the sequence"},
      {"gamma_wrong_axis", both, {"gamma_broadcast"}, "gamma_broadcast", "per row"},
      {"w_not_one_plus_w", both, {"affine[one_plus_w]"}, "affine[one_plus_w]", "gamma (w applied as a plain gamma"},
      {"tail_unnormalized", both, {"per_index"}, "per_index", "last m mod 8 elements"},
      // A statistic that reads the next row is a leak across rows, and the probe says so.
      {"group_reads_next", both, {"reduction_axes", "batch_leak"}, "batch_leak", "leak across the batch"},
      // Kernel faults that are not a convention (launch layout, widths the probe's d = 64
      // rows do not reach, dtypes of its f32 probe rows): the probe infers the nominal
      // convention and must not name a false deviation; the case files and the coverage
      // matrix kill them (mutant_test.cpp, normcheck zoo).
      {"partial_warp_dropped", both, {}, nullptr, nullptr},
      {"padded_lanes_counted", both, {}, nullptr, nullptr},
      {"rows_grid_limit", both, {}, nullptr, nullptr},
      {"params_rounded_bf16", both, {}, nullptr, nullptr},
      {"eps_rounded_to_dtype", both, {}, nullptr, nullptr},
      {"normalized_rounded_to_out", both, {}, nullptr, nullptr},
      // Readers of views: the probe's problems are contiguous, so they read them right.
      {"view_offset_ignored", both, {}, nullptr, nullptr},
      {"view_strides_ignored", both, {}, nullptr, nullptr},
  };
  // Every row-norm mutant in the registry is covered (a new one must be added here).
  std::set<std::string> covered;
  for (auto& z : zoo) covered.insert(z.mutant);
  for (auto& m : mutant_names()) {
    auto b = make_backend("mutant:" + m);
    Problem p;
    p.op = Op::layer_norm;
    p.conv.normalized_shape = {4};
    p.inputs["x"] = Tensor(DType::f32, {4});
    if (!b->unsupported(validate(p), {})) CHECK(covered.count(m) == 1);
  }

  for (const auto& z : zoo) {
    for (Op op : z.ops) {
      const ProbeResult r = probe_named(std::string("mutant:") + z.mutant, op);
      INFO(z.mutant << " on " << to_string(op) << "\n" << format_probe_summary({r}));
      CHECK(convention_deviations(r) == z.deviating);
      if (!z.key) continue;
      const Finding& f = get(r, z.key);
      CHECK(f.deviates);
      CHECK(f.certainty != Certainty::undetermined);
      CHECK_THAT(f.value, Catch::Contains(z.text));
    }
  }
}

TEST_CASE("probe: the inferred convention of mutants reproduces their fault", "[probe][mutant]") {
  CHECK(probe_named("mutant:eps_outside_sqrt", Op::layer_norm).inferred.eps_placement == EpsPlacement::outside_sqrt);
  CHECK(probe_named("mutant:wrong_eps", Op::rms_norm).inferred.eps == 1e-6);
  CHECK(probe_named("mutant:eps_missing", Op::layer_norm).inferred.eps == 0);
  CHECK(probe_named("mutant:unbiased_variance", Op::layer_norm).inferred.variance == Variance::unbiased);
  CHECK(probe_named("mutant:ln_no_centering", Op::layer_norm).inferred_op == Op::rms_norm);
  CHECK(probe_named("mutant:rms_subtracts_mean", Op::rms_norm).inferred_op == Op::layer_norm);
  CHECK(probe_named("mutant:stats_over_sequence", Op::layer_norm).inferred.normalized_shape == Shape{3, 64});
  CHECK(probe_named("mutant:f16_accumulation", Op::layer_norm).inferred.acc_dtype == DType::f16);
  ProbeOptions o = default_probe_options(Op::rms_norm);
  o.nominal.affine = Affine::one_plus_w;
  auto b = make_backend("mutant:w_not_one_plus_w");
  CHECK(probe(*b, o).inferred.affine == Affine::gamma);
}

TEST_CASE("probe: an unlisted eps convention is solved, not guessed", "[probe][eps_fit]") {
  // eps 3e-4 with clamp_norm and 2.5e-7 with clamp_var: neither the nominal eps nor a usual one.
  {
    FixedConventionBackend b(EpsPlacement::clamp_norm, 3e-4);
    const ProbeResult r = probe(b, default_probe_options(Op::layer_norm));
    // clamp_norm(3e-4) is clamp_var(9e-8): the probe names both and picks one for the card.
    if (r.inferred.eps_placement == EpsPlacement::clamp_norm) CHECK(r.inferred.eps == Approx(3e-4).epsilon(1e-6));
    else CHECK(r.inferred.eps == Approx(9e-8).epsilon(1e-6));
    CHECK_THAT(get(r, "eps_placement").value, Catch::Contains("clamp_norm") && Catch::Contains("clamp_var"));
    CHECK(get(r, "eps_placement").certainty == Certainty::certain);
    CHECK(convention_deviations(r) == std::set<std::string>{"eps", "eps_placement"});
  }
  {
    // Asked clamp_norm with eps 1e-5 and doing exactly that: the twin clamp_var(1e-10) must
    // not be reported as a deviation.
    FixedConventionBackend b(EpsPlacement::clamp_norm, 1e-5);
    ProbeOptions o = default_probe_options(Op::rms_norm);
    o.nominal.eps_placement = EpsPlacement::clamp_norm;
    const ProbeResult r = probe(b, o);
    CHECK(r.inferred.eps_placement == EpsPlacement::clamp_norm);
    CHECK(r.inferred.eps == 1e-5);
    CHECK(convention_deviations(r).empty());
  }
  {
    FixedConventionBackend b(EpsPlacement::outside_sqrt, 2.5e-7);
    const ProbeResult r = probe(b, default_probe_options(Op::rms_norm));
    CHECK(r.inferred.eps_placement == EpsPlacement::outside_sqrt);
    CHECK(r.inferred.eps == Approx(2.5e-7).epsilon(1e-6));
  }
}

TEST_CASE("probe: the convention card is valid case-file syntax", "[probe][parser]") {
  for (const char* name : {"reference", "mutant:stats_over_sequence", "mutant:wrong_eps", "mutant:ln_no_centering",
                           "mutant:unbiased_variance"}) {
    const ProbeResult r = probe_named(name, Op::layer_norm);
    const std::string card = convention_card(r);
    INFO(card);
    const auto path = std::filesystem::temp_directory_path() / fmt::format("normcheck_card_{}.toml", ::getpid());
    {
      std::ofstream f(path);
      f << "[[case]]\nname = \"probed\"\n"
        << fmt::format("op = \"{}\"\ndtype = \"f32\"\n", to_string(r.inferred_op))
        << "inputs.x = { shape = [2, 3, 64], generator = \"normal\", seed = 1 }\n"
        << "inputs.gamma = { shape = " << shape_str(r.inferred.normalized_shape) << ", generator = \"constant\", value = 1 }\n"
        << "inputs.beta = { shape = " << shape_str(r.inferred.normalized_shape) << ", generator = \"constant\", value = 0 }\n"
        << card;
    }
    const auto cases = parse_case_file(path.string());
    std::filesystem::remove(path);
    REQUIRE(cases.size() == 1);
    const Convention& c = cases[0].problem.conv;
    CHECK(c.eps == r.inferred.eps);
    CHECK(c.eps_placement == r.inferred.eps_placement);
    CHECK(c.variance == r.inferred.variance);
    CHECK(c.affine == r.inferred.affine);
    CHECK(c.normalized_shape == r.inferred.normalized_shape);
    CHECK(c.acc_dtype == r.inferred.acc_dtype);
  }
}

TEST_CASE("probe: JSON report carries findings with evidence and the card", "[probe][report]") {
  const ProbeResult r = probe_named("mutant:eps_outside_sqrt", Op::layer_norm);
  const auto j = nlohmann::json::parse(format_probe_json(r));
  CHECK(j["backend"] == "mutant:eps_outside_sqrt");
  CHECK(j["convention"]["eps_placement"] == "outside_sqrt");
  CHECK(j["card"].get<std::string>().find("[case.convention]") != std::string::npos);
  bool found = false;
  for (const auto& f : j["findings"]) {
    CHECK(f.contains("evidence"));
    if (f["property"] == "eps_placement") {
      found = true;
      CHECK(f["deviates"] == true);
      CHECK(f["certainty"] == "certain");
      CHECK(f["evidence"]["fit"].get<std::string>().find("outside_sqrt/biased") != std::string::npos);
    }
  }
  CHECK(found);
  const auto s = nlohmann::json::parse(format_probe_summary_json({r}));
  REQUIRE(s.size() == 1);
  CHECK(s[0]["deviations"][0]["property"] == "eps_placement");
}

TEST_CASE("probe: bad options are rejected", "[probe]") {
  auto b = make_backend("reference");
  ProbeOptions o = default_probe_options(Op::layer_norm);
  o.d = 15;
  CHECK_THROWS_AS(probe(*b, o), std::invalid_argument);
}

// ---- the probes of every other op (checks/probe_family.cpp) and the layout probe ----------

TEST_CASE("probe: reference and cpu conform on every op, views included", "[probe][families]") {
  for (Op op : ops::all()) {
    if (op == Op::layer_norm || op == Op::rms_norm) continue;  // above
    for (const char* name : {"reference", "cpu"}) {
      INFO(name << " on " << op.name());
      const ProbeResult r = probe_named(name, op);
      for (const Finding* f : r.deviations()) UNSCOPED_INFO(f->property << " = " << f->value << " (" << f->evidence.fit << ")");
      CHECK(r.deviations().empty());
      std::size_t determined = 0;
      for (const auto& f : r.findings) determined += f.certainty != Certainty::undetermined;
      CHECK(determined >= 3);  // op findings and the four layouts: nothing silently undetermined
      for (const char* l : {"layout[offset]", "layout[padded]", "layout[transposed]"}) CHECK(get(r, l).value == "reads the view");
    }
  }
}

TEST_CASE("probe: each family mutant's fault is named by the probe of its op", "[probe][families][mutant]") {
  struct Z {
    const char* mutant;
    Op op;
    const char* key;
    const char* value;  // a prefix of the finding's value
  };
  const Z zoo[] = {
      {"gn_interleaved_groups", Op::group_norm, "num_groups", "3 groups of interleaved channels"},
      {"bn_biased_running_var", Op::batch_norm, "running_variance", "biased"},
      {"bn_eval_batch_stats", Op::batch_norm, "eval", "batch statistics"},
      {"bn_stats_over_batch_only", Op::batch_norm, "training", "per (channel, position) over the batch only"},
      {"l2_eps_added", Op::l2_normalize, "eps_placement", "outside_sqrt"},
      {"l2_eps_added", Op::scale_norm, "eps_placement", "outside_sqrt"},
      {"ada_broadcast_over_batch", Op::ada_layer_norm, "modulation", "(1 + scale) n + shift, rows chosen by token index"},
      {"ada_broadcast_over_batch", Op::ada_rms_norm, "modulation", "(1 + scale) n + shift, rows chosen by token index"},
      {"qk_norm_across_heads", Op::qk_norm, "qk_statistic", "RMS across heads"},
      {"view_offset_ignored", Op::group_norm, "layout[offset]", "storage offset ignored"},
      {"view_offset_ignored", Op::batch_norm, "layout[transposed]", "storage offset ignored"},
      {"view_strides_ignored", Op::layer_norm, "layout[padded]", "strides ignored"},
      {"view_strides_ignored", Op::instance_norm, "layout[transposed]", "strides ignored"},
  };
  for (const Z& z : zoo) {
    INFO("mutant:" << z.mutant << " on " << z.op.name());
    const ProbeResult r = probe_named(std::string("mutant:") + z.mutant, z.op);
    const Finding& f = get(r, z.key);
    INFO(f.value << " (" << f.evidence.fit << ")");
    CHECK(f.deviates);
    CHECK(f.certainty != Certainty::undetermined);
    CHECK(f.value.rfind(z.value, 0) == 0);
  }
}

TEST_CASE("probe: the batch_norm probe solves the momentum the backend applies and names its preset", "[probe][families]") {
  const ProbeResult r = probe_named("cpu", Op::batch_norm);
  CHECK(get(r, "momentum").value == "0.1 (new = 0.9 old + 0.1 batch: as sent)");
  const auto m = match_presets(r);
  REQUIRE(!m.empty());
  CHECK(m.front().name == "pytorch.BatchNorm2d");
  CHECK(m.front().differences.empty());
  // The card is valid case-file syntax for the op.
  const std::string card = convention_card(r);
  const std::string file = "[[case]]\nname = \"c\"\nop = \"batch_norm\"\ndtype = \"f32\"\ninputs.x = { values = [[1, 2], [3, 5]] }\n"
                           "inputs.running_mean = { values = [0, 0] }\ninputs.running_var = { values = [1, 1] }\n"
                           "inputs.gamma = { values = [1, 1] }\ninputs.beta = { values = [0, 0] }\n" +
                           card.substr(card.find("[case.convention]"));
  INFO(file);
  const auto cs = parse_case_text(file, "card.toml");
  REQUIRE(cs.size() == 1);
  CHECK(cs[0].problem.conv.momentum == 0.1);
}

TEST_CASE("probe: a backend handed dense tensors only says so for views", "[probe][families]") {
  const ProbeResult r = probe_named("onednn", Op::layer_norm);
  const Finding* f = r.find("layout");
  if (make_backend("onednn")->unavailable()) return;  // no oneDNN here: nothing probed
  REQUIRE(f != nullptr);
  CHECK(f->certainty == Certainty::undetermined);
  CHECK(f->value.rfind("dense tensors only", 0) == 0);
}
