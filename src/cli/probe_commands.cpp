#include "cli/probe_commands.hpp"

#include <cmath>
#include <cstdio>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <map>
#include <set>

#include <toml++/toml.h>

#include "spec/backend.hpp"
#include "cases/toml_fields.hpp"
#include "spec/convention.hpp"
#include "ops/common/mutants.hpp"
#include "checks/compare_eps.hpp"
#include "checks/probe.hpp"
#include "report/report.hpp"
#include "core/svg_plot.hpp"
#include "ops/presets.hpp"
#include "ops/registry.hpp"
#include "backends/registry.hpp"
#include "cli/backend_options.hpp"

namespace normcheck::cli {

struct ProbeCommands {
  CLI::App* probe = nullptr;
  CLI::App* compare = nullptr;
  CLI::App* presets = nullptr;
  // presets
  std::string presets_op, presets_format = "table";
  // probe
  std::string backend, op, dtype = "f32", format = "table", affine, placement, variance, expect;
  double eps = 1e-5;
  std::int64_t d = 64;
  std::uint64_t seed = 1;
  bool all_mutants = false;
  BackendOptions limits;  ///< --timeout, --backend-memory, --backend-cpu
  // compare-eps
  std::vector<std::string> convs;
  std::string c_op = "layer_norm", c_dtype = "f32", plot;
  std::vector<double> means;
  std::int64_t c_d = 64;
};

std::shared_ptr<ProbeCommands> add_probe_commands(CLI::App& app) {
  auto c = std::make_shared<ProbeCommands>();
  auto* p = app.add_subcommand("probe", "infer a backend's convention by black-box experiments (axes, affine, eps, "
                                        "variance, accumulation, tails, degenerate rows)");
  p->add_option("--backend,-b", c->backend, "backend to probe (reference, cpu, mutant:<fault>, plugin:PATH, cmd:COMMAND, ...)");
  p->add_option("--op", c->op, "the op to probe: any op (default layer_norm; with --all-mutants layer_norm and rms_norm)");
  p->add_option("--dtype", c->dtype, "dtype of x and y (f32 | f64 | f16 | bf16)");
  p->add_option("--format", c->format, "table | json");
  p->add_option("--eps", c->eps, "nominal eps sent to the backend (default 1e-5)");
  p->add_option("--placement", c->placement, "nominal eps_placement sent (default inside_sqrt)");
  p->add_option("--variance", c->variance, "nominal variance estimator sent (default biased)");
  p->add_option("--affine", c->affine, "affine convention of the card (default gamma_beta for layer_norm, gamma otherwise)");
  p->add_option("--d", c->d, "hidden size of the experiments (even, >= 16; default 64)");
  p->add_option("--seed", c->seed, "seed of the random rows (default 1)");
  p->add_flag("--all-mutants", c->all_mutants, "probe reference, cpu and every mutant; print one verdict line each");
  p->add_option("--expect", c->expect, "a convention card (TOML [case.convention], as probe prints it): send its convention "
                                       "and exit 1 unless the backend shows exactly it (a CI gate)");
  add_backend_options(p, c->limits);
  c->probe = p;
  auto* q = app.add_subcommand("compare-eps", "compare eps conventions over a sweep of the row variance and mean "
                                              "(exact reference)");
  q->add_option("--conv", c->convs,
                "a convention: eps=1e-5,placement=inside_sqrt[,variance=biased], or a preset (normcheck presets) with optional "
                "overrides: pytorch.LayerNorm[,eps=1e-6] (repeat, >= 2; none: the common presets of --op)");
  q->add_option("--op", c->c_op, "layer_norm | rms_norm (default layer_norm, or the op of the presets given)");
  q->add_option("--dtype", c->c_dtype, "dtype whose ULPs measure the difference (default f32)");
  q->add_option("--d", c->c_d, "row length (even; default 64)");
  q->add_option("--means", c->means, "row means to sweep (default 0 1 100 10000)")->delimiter(',');
  q->add_option("--plot", c->plot, "write an SVG plot (difference vs variance, log axes) to this file, atomically");
  c->compare = q;
  auto* ps = app.add_subcommand("presets", "list the framework conventions a case file, compare-eps --conv and probe name "
                                           "(\"pytorch.LayerNorm\"), each with its source");
  ps->add_option("--op", c->presets_op, "only the presets of this op");
  ps->add_option("--format", c->presets_format, "table | json")->check(CLI::IsMember({"table", "json"}));
  c->presets = ps;
  return c;
}

namespace {
constexpr int kOk = 0, kBad = 2, kBackend = 3;

int bad(const std::string& msg) {
  fmt::print(stderr, "normcheck: {}\n", msg);
  return kBad;
}

std::optional<DType> dtype_arg(const std::string& s) { return parse_dtype(s); }

/// The convention a card states: the [case.convention] (or [convention]) table of a TOML
/// file with the keys a probe card has. Fields it leaves out keep their defaults.
struct ExpectedCard {
  Convention conv;
  std::set<std::string> given;  ///< keys the card states
};

ExpectedCard read_card(const std::string& path, Op op) {
  detail::TomlCtx c{path};
  toml::table root;
  try {
    root = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    throw CaseError(path, static_cast<int>(e.source().begin.line), "toml", std::string(e.description()));
  }
  const toml::node* n = root.at_path("case.convention").node();
  std::string where = "case.convention";
  if (!n) n = root.get("convention"), where = "convention";
  if (!n || !n->as_table()) c.fail(1, "case.convention", "no [case.convention] table (paste the card probe prints)");
  const toml::table& t = *n->as_table();
  // The keys a probe card has; read by the one convention reader (spec/convention.hpp).
  detail::check_keys(c, t, where, {"eps", "eps_placement", "variance", "affine", "normalized_shape", "acc_dtype", "normalized_dtype"});
  ExpectedCard card;
  card.conv = default_probe_options(op).nominal;
  read_convention(detail::TomlSource(c, detail::items_of(t), n, where), op, card.conv);
  for (auto& [k, v] : t) card.given.insert(std::string(k.str()));
  if (!(card.conv.eps <= 1)) c.fail(t.get("eps"), where + ".eps", "must be in [0, 1] (the probe's sweep)");
  if (card.given.count("normalized_shape")) {
    const Shape& ns = card.conv.normalized_shape;
    if (ns.size() != 1) c.fail(t.get("normalized_shape"), where + ".normalized_shape", "expected [d]: the probe checks one normalized dim");
    if (ns[0] < 16 || ns[0] % 2 || ns[0] > 65536)
      c.fail(t.get("normalized_shape"), where + ".normalized_shape", "d must be even, >= 16 and <= 65536");
  }
  return card;
}

int run_probe(const ProbeCommands& c) {
  if (c.format != "table" && c.format != "json") return bad(fmt::format("probe --format: unknown '{}' (table | json)", c.format));
  const auto dt = dtype_arg(c.dtype);
  if (!dt || is_quantized(*dt)) return bad(fmt::format("probe --dtype: unknown dtype '{}' (f64 | f32 | f16 | bf16)", c.dtype));
  std::vector<Op> ops;
  if (!c.op.empty()) {
    auto op = parse_op(c.op);
    if (!op) return bad(fmt::format("probe --op: unknown op '{}' ({})", c.op, choices_op()));
    ops.push_back(*op);
  } else {
    ops = c.all_mutants ? std::vector<Op>{Op::layer_norm, Op::rms_norm} : std::vector<Op>{Op::layer_norm};
  }
  if (c.d < 16 || c.d % 2 || c.d > 65536) return bad(fmt::format("probe --d: must be even, >= 16 and <= 65536, got {}", c.d));
  // The eps sweep spans variances 1e-14..1e2: an eps above 1 leaves no variance range where
  // eps does not dominate, and the fits (and the findings) would be meaningless.
  if (!(c.eps >= 0) || !(c.eps <= 1)) return bad(fmt::format("probe --eps: must be in [0, 1], got {}", c.eps));
  std::optional<ExpectedCard> card;
  if (!c.expect.empty()) {
    if (c.all_mutants || ops.size() != 1) return bad("probe --expect: probe one backend and one op");
    if (ops.front() != Op::layer_norm && ops.front() != Op::rms_norm)
      return bad(fmt::format("probe --expect: cards of layer_norm and rms_norm only (the probe of {} prints its card, not a gate yet)",
                             to_string(ops.front())));
    if (!c.placement.empty() || !c.variance.empty() || !c.affine.empty())
      return bad("probe --expect: the card gives the convention; drop --placement/--variance/--affine");
    card = read_card(c.expect, ops.front());
    // The probe rounds its outputs to --dtype; a card's normalized_dtype of another dtype
    // would be a third rounding the probe's experiments cannot separate.
    if (card->conv.normalized_dtype && *card->conv.normalized_dtype != *dt)
      return bad(fmt::format("probe --expect {}: the card's normalized_dtype ({}) is not the probe's --dtype ({}): probe with "
                             "--dtype {}", c.expect, dtype_name(*card->conv.normalized_dtype), dtype_name(*dt),
                             dtype_name(*card->conv.normalized_dtype)));
  }
  std::vector<std::string> names;
  if (c.all_mutants) {
    if (!c.backend.empty()) return bad("probe: give either --backend or --all-mutants, not both");
    names = default_backends();
    for (auto& m : mutant_names()) names.push_back("mutant:" + m);
  } else {
    if (c.backend.empty()) return bad("probe: --backend NAME is required (or --all-mutants)");
    names.push_back(c.backend);
  }
  std::vector<ProbeResult> results;
  for (Op op : ops) {
    ProbeOptions o = default_probe_options(op);
    o.dtype = *dt;
    o.d = c.d;
    o.seed = c.seed;
    o.nominal.eps = c.eps;
    if (!c.placement.empty()) {
      auto v = parse_eps_placement(c.placement);
      if (!v) return bad(fmt::format("probe --placement: unknown '{}' ({})", c.placement, choices_eps_placement()));
      o.nominal.eps_placement = *v;
    }
    if (!c.variance.empty()) {
      auto v = parse_variance(c.variance);
      if (!v) return bad(fmt::format("probe --variance: unknown '{}' ({})", c.variance, choices_variance()));
      o.nominal.variance = *v;
    }
    if (!c.affine.empty()) {
      auto v = parse_affine(c.affine);
      if (!v) return bad(fmt::format("probe --affine: unknown '{}' ({})", c.affine, choices_affine()));
      o.nominal.affine = *v;
    }
    if (card) {  // the card is the nominal convention: a deviation is a difference from it
      o.nominal.eps = card->conv.eps;
      o.nominal.eps_placement = card->conv.eps_placement;
      o.nominal.variance = card->conv.variance;
      o.nominal.affine = card->conv.affine;
      o.nominal.acc_dtype = card->conv.acc_dtype;
      o.nominal.normalized_dtype = card->conv.normalized_dtype;
      if (card->given.count("normalized_shape")) o.d = card->conv.normalized_shape.front();
    }
    for (const auto& n : names) {
      std::unique_ptr<Backend> b;
      try {
        b = make_named_backend(n, c.limits);
      } catch (const BackendError& e) {  // the backend exists but could not start: exit 3, as in run
        fmt::print(stderr, "normcheck: probe --backend {}: {}\n", n, e.what());
        return kBackend;
      } catch (const std::exception& e) {
        return bad(fmt::format("probe --backend {}: {}", n, e.what()));
      }
      if (c.all_mutants && n.rfind("mutant:", 0) == 0) {  // only this op's forward mutants (its OpDef's) are probed
        Problem fwd;
        fwd.op = op;
        fwd.conv = o.nominal;
        fwd.conv.normalized_shape = Shape{o.d};
        fwd.out_dtype = o.dtype;
        fwd.inputs["x"] = Tensor::from_doubles(o.dtype, Shape{2, o.d}, std::vector<double>(static_cast<std::size_t>(2 * o.d), 1.0));
        bool own = false;
        for (const MutantDef& m : op.def().mutants) own = own || (m.name == n.substr(7) && m.supports(fwd));
        if (!own) continue;
      }
      if (auto why = b->unavailable()) {
        fmt::print(stderr, "normcheck: backend {} unavailable: {}\n", n, *why);
        return kBackend;
      }
      try {
        results.push_back(probe(*b, o));
      } catch (const BackendError& e) {
        fmt::print(stderr, "normcheck: probe of {} on {}: {}\n", n, to_string(op), e.what());
        return kBackend;
      }
    }
  }
  if (c.all_mutants || results.size() > 1)
    fmt::print("{}", c.format == "json" ? format_probe_summary_json(results) : format_probe_summary(results));
  else
    fmt::print("{}", c.format == "json" ? format_probe_json(results[0]) : format_probe_table(results[0]));
  if (card) {
    // A gate: every finding must agree with the card, and each property the card states
    // must be determined (a probe that cannot tell is not a confirmation).
    static const std::map<std::string, std::string> kCardKey{{"eps", "eps"}, {"eps_placement", "eps_placement"},
                                                             {"variance", "variance"}, {"accumulation_precision", "acc_dtype"},
                                                             {"rounding_order", "normalized_dtype"}};
    std::vector<std::string> problems;
    for (const Finding& f : results[0].findings)
      if (f.deviates) problems.push_back(fmt::format("{} is {} (card: {})", f.property, f.value, f.expected));
    // Every key the card states needs a determined finding: undetermined, or not probed at all
    // (the rounding order in f32), is not a confirmation.
    for (const auto& [property, key] : kCardKey) {
      if (!card->given.count(key)) continue;
      const Finding* f = results[0].find(property);
      if (!f) problems.push_back(fmt::format("{} was not probed (card: {} given; {})", property, key,
                                             property == "rounding_order" ? "the rounding order is probed in f16 and bf16 only"
                                                                          : "no experiment for it"));
      else if (f->certainty == Certainty::undetermined && !f->deviates)
        problems.push_back(fmt::format("{} could not be determined (card: {})", f->property, f->expected));
    }
    if (problems.empty()) {
      fmt::print(stderr, "probe --expect {}: {} matches the card\n", c.expect, results[0].backend);
      return kOk;
    }
    fmt::print(stderr, "probe --expect {}: {} differs from the card:\n", c.expect, results[0].backend);
    for (const auto& p : problems) fmt::print(stderr, "  {}\n", p);
    return 1;
  }
  return kOk;
}

int run_compare(const ProbeCommands& c) {
  CompareEpsOptions o;
  std::string op_name = c.c_op;
  if (c.compare->count("--op") == 0 && !c.convs.empty()) {  // the presets' op, when they all share one
    std::set<std::string> preset_ops;
    bool all_presets = true;
    for (const auto& s : c.convs) {
      const Preset* p = find_preset(s.substr(0, s.find(',')));
      if (p) preset_ops.insert(std::string(to_string(p->op)));
      else all_presets = false;
    }
    if (all_presets && preset_ops.size() == 1) op_name = *preset_ops.begin();
  }
  auto op = parse_op(op_name);
  if (!op || (*op != Op::layer_norm && *op != Op::rms_norm))
    return bad(fmt::format("compare-eps --op: '{}' not supported (layer_norm | rms_norm)", op_name));
  o.op = *op;
  const auto dt = dtype_arg(c.c_dtype);
  if (!dt || is_quantized(*dt)) return bad(fmt::format("compare-eps --dtype: unknown dtype '{}' (f64 | f32 | f16 | bf16)", c.c_dtype));
  o.dtype = *dt;
  if (c.c_d < 2 || c.c_d % 2 || c.c_d > 65536) return bad(fmt::format("compare-eps --d: must be even, >= 2 and <= 65536, got {}", c.c_d));
  o.d = c.c_d;
  // Rows mean +- s (s up to 1e2, the sweep's largest std) must be finite in the dtype (the
  // reference itself is exact): a default mean that is not is left out, said once; a --means
  // value that is not is an error. (An earlier bound, max / 1e3, refused the defaults for f16.)
  const double mean_max = format_info(o.dtype).max_finite - 1e2;
  if (!c.means.empty()) {
    o.means = c.means;
    for (double m : o.means)
      if (!std::isfinite(m) || std::fabs(m) > mean_max)
        return bad(fmt::format("compare-eps --means: {} is not finite or too large for {} (at most {:g})", m, dtype_name(o.dtype),
                               mean_max));
  } else {
    std::vector<double> kept, dropped;
    for (double m : o.means) (std::fabs(m) <= mean_max ? kept : dropped).push_back(m);
    if (!dropped.empty())
      fmt::print("compare-eps: default means {} left out: rows of that mean +- 1e2 overflow {} (--means to choose)\n",
                 fmt::join(dropped, ", "), dtype_name(o.dtype));
    o.means = kept;
  }
  std::vector<LabeledConvention> convs;
  const std::vector<std::string> specs = c.convs.empty() ? default_compare_presets(o.op) : c.convs;
  if (c.convs.empty())
    fmt::print("compare-eps: no --conv given: comparing the common {} presets ({})\n", to_string(o.op), fmt::join(specs, ", "));
  for (const auto& s : specs) {
    try {
      convs.push_back(parse_convention_spec(s, o.op, o.dtype));
    } catch (const std::invalid_argument& e) {
      return bad(fmt::format("compare-eps --conv: {}", e.what()));
    }
  }
  if (convs.size() < 2) return bad("compare-eps: give at least two --conv");
  const CompareEpsResult r = compare_eps(convs, o);
  fmt::print("{}", format_compare_eps_table(r));
  if (!c.plot.empty()) {
    try {
      write_atomically(c.plot, compare_eps_svg(r));
    } catch (const std::exception& e) {
      return bad(fmt::format("compare-eps --plot: {}", e.what()));
    }
    fmt::print("\nplot written to {}\n", c.plot);
  }
  return kOk;
}
int run_presets(const ProbeCommands& c) {
  std::optional<Op> only;
  if (c.presets->count("--op") && c.presets_op.empty()) return bad(fmt::format("presets --op: empty ({})", choices_op()));
  if (!c.presets_op.empty()) {
    only = parse_op(c.presets_op);
    if (!only) return bad(fmt::format("presets --op: unknown op '{}' ({})", c.presets_op, choices_op()));
  }
  nlohmann::json all = nlohmann::json::array();
  std::string table;
  std::size_t n = 0;
  for (const Preset& p : presets()) {
    if (only && p.op != *only) continue;
    ++n;
    const std::string fields = preset_fields(p, DType::f32);
    if (c.presets_format == "json") {
      all.push_back({{"name", p.name}, {"op", to_string(p.op)}, {"fields", p.fields}, {"fields_f32", fields},
                     {"accumulation", p.accumulation}, {"rounding", p.rounding}, {"source", p.source}, {"verified", p.verified},
                     {"unexpressible", p.unexpressible}, {"notes", p.notes}});
      continue;
    }
    table += fmt::format("{:<28} {:<14} {}\n", p.name, to_string(p.op), p.fields);
    table += fmt::format("    accumulation: {}\n    rounding:     {}\n    source:       {} ({})\n", p.accumulation, p.rounding,
                         p.source, p.verified);
    if (!p.notes.empty()) table += fmt::format("    note:         {}\n", p.notes);
    if (!p.unexpressible.empty()) table += fmt::format("    NOT USABLE:   {}\n", p.unexpressible);
    table += "\n";
  }
  if (c.presets_format == "json") {
    fmt::print("{}\n", all.dump(2));
    return kOk;
  }
  fmt::print("{} presets{} (use: convention = \"NAME\" in a case file, compare-eps --conv NAME; eps=finfo_opmath is the "
             "machine epsilon of the compute dtype: 2^-23 for f16/bf16/f32 data, 2^-52 for f64)\n\n{}",
             n, only ? fmt::format(" of {}", to_string(*only)) : "", table);
  return kOk;
}

}  // namespace

std::optional<int> run_probe_commands(const ProbeCommands& c) {
  if (c.probe && c.probe->parsed()) return run_probe(c);
  if (c.compare && c.compare->parsed()) return run_compare(c);
  if (c.presets && c.presets->parsed()) return run_presets(c);
  return std::nullopt;
}

}  // namespace normcheck::cli
