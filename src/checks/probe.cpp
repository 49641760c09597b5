// Probe driver, convention card and reports (probe.hpp).
#include "checks/probe.hpp"

#include <algorithm>
#include <set>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "checks/probe_detail.hpp"
#include "ops/presets.hpp"
#include "ops/registry.hpp"
#include "spec/convention.hpp"

namespace normcheck {

std::string_view to_string(Certainty c) noexcept {
  switch (c) {
    case Certainty::certain: return "certain";
    case Certainty::likely: return "likely";
    case Certainty::undetermined: return "undetermined";
  }
  return "?";
}

ProbeOptions default_probe_options(Op op) {
  ProbeOptions o;
  o.op = op;
  o.nominal = default_convention(op);  // the op's own defaults (l2_normalize: clamp_norm)
  o.nominal.eps = 1e-5;
  o.nominal.variance = Variance::biased;
  o.nominal.acc_dtype = DType::f32;
  if (op == Op::layer_norm || op == Op::rms_norm) o.nominal.affine = op == Op::layer_norm ? Affine::gamma_beta : Affine::gamma;
  else if (op == Op::group_norm || op == Op::instance_norm || op == Op::batch_norm) o.nominal.affine = Affine::gamma_beta;
  return o;
}

namespace {
bool row_op(Op op) { return op == Op::layer_norm || op == Op::rms_norm; }
}  // namespace

const Finding* ProbeResult::find(const std::string& property) const {
  for (const auto& f : findings)
    if (f.property == property) return &f;
  return nullptr;
}

bool ProbeResult::determined(const std::string& property) const {
  const Finding* f = find(property);
  return f && f->certainty != Certainty::undetermined;
}

bool ProbeResult::eps_fits(double eps) const {
  return std::isfinite(eps_hi) && ((eps >= eps_lo && eps <= eps_hi) || std::fabs(eps - inferred.eps) <= 1e-4 * eps);
}

std::vector<const Finding*> ProbeResult::deviations() const {
  std::vector<const Finding*> v;
  for (const auto& f : findings)
    if (f.deviates) v.push_back(&f);
  return v;
}

namespace {
/// Probe functions by op: the one table other families extend.
using ProbeFn = ProbeResult (*)(Backend&, const ProbeOptions&);
ProbeFn probe_for(Op op) {
  if (row_op(op)) return &detail::probe_row_norm;
  return &detail::probe_family;  // every other op; it names the ops it has no probes for
}

std::string certainty_of(const ProbeResult& r, const char* key) {
  const Finding* f = r.find(key);
  if (!f) return "not probed: nominal value";
  return f->certainty == Certainty::undetermined ? "undetermined: nominal value" : std::string(to_string(f->certainty));
}
}  // namespace

ProbeResult probe(Backend& backend, const ProbeOptions& o) {
  if (o.d < 16 || o.d % 2) throw std::invalid_argument(fmt::format("probe: d must be even and >= 16, got {}", o.d));
  ProbeResult r = probe_for(o.op)(backend, o);
  detail::probe_layouts(backend, o, r);
  return r;
}

namespace {
/// The card of an op other than the row norms: every key of its convention (write_convention),
/// each with the certainty of the finding of that name.
std::string generic_card(const ProbeResult& r) {
  const ProbeOptions& o = r.options;
  std::string s = fmt::format("# normcheck probe: backend {}, op {}, dtype {}\n", r.backend, to_string(o.op), dtype_name(o.dtype));
  for (const auto& n : r.card_notes) s += "# " + n + "\n";
  s += "[case.convention]\n";
  for (const auto& [key, v] : write_convention(r.inferred, o.op)) {
    const std::string k(key);
    if (k == "direction" || k == "normalized_shape" || k == "axes") continue;  // the case's shapes, not the backend's
    s += fmt::format("{:<34}# {}\n", fmt::format("{} = {}", k, convention_value_text(v)), certainty_of(r, k.c_str()));
  }
  return s;
}
}  // namespace

std::string convention_card(const ProbeResult& r) {
  if (!row_op(r.options.op)) return generic_card(r);
  const Convention& c = r.inferred;
  const ProbeOptions& o = r.options;
  std::string s;
  s += fmt::format("# normcheck probe: backend {}, op {}, dtype {}\n", r.backend, to_string(o.op), dtype_name(o.dtype));
  s += fmt::format("# nominal convention sent: eps = {}, {}, {}, affine {}\n", o.nominal.eps,
                   to_string(o.nominal.eps_placement), to_string(o.nominal.variance), to_string(o.nominal.affine));
  for (const auto& n : r.card_notes) s += "# " + n + "\n";
  s += "[case.convention]\n";
  const std::string shape = fmt::format("[{}]", fmt::join(c.normalized_shape, ", "));
  s += fmt::format("{:<34}# {}\n", fmt::format("eps = {}", c.eps == 0 ? std::string("0.0") : fmt::format("{}", c.eps)),
                   certainty_of(r, "eps"));
  s += fmt::format("{:<34}# {}\n", fmt::format("eps_placement = \"{}\"", to_string(c.eps_placement)),
                   certainty_of(r, "eps_placement"));
  s += fmt::format("{:<34}# {}\n", fmt::format("variance = \"{}\"", to_string(c.variance)), certainty_of(r, "variance"));
  s += fmt::format("{:<34}# {}\n", fmt::format("affine = \"{}\"", to_string(c.affine)),
                   o.nominal.affine == Affine::none ? "nominal: the probe sent no affine parameters here"
                                                    : certainty_of(r, fmt::format("affine[{}]", to_string(o.nominal.affine)).c_str()));
  s += fmt::format("{:<34}# {} (probe x [2, 3, {}])\n", fmt::format("normalized_shape = {}", shape),
                   certainty_of(r, "reduction_axes"), o.d);
  s += fmt::format("{:<34}# {}\n", fmt::format("acc_dtype = \"{}\"", dtype_name(c.acc_dtype)),
                   certainty_of(r, "accumulation_precision"));
  if (r.find("rounding_order"))  // probed (f16, bf16): the order is part of the card
    s += fmt::format("{:<34}# {}\n", fmt::format("normalized_dtype = \"{}\"", c.normalized_dtype ? dtype_name(*c.normalized_dtype) : "none"),
                     certainty_of(r, "rounding_order"));
  return s;
}

namespace {
/// The presets of an op other than the row norms, compared on the keys whose finding of the
/// same name is determined (eps: its fitted interval).
std::vector<PresetMatch> generic_matches(const ProbeResult& r) {
  std::vector<PresetMatch> out;
  const auto inferred = write_convention(r.inferred, r.options.op);
  for (const Preset& p : presets()) {
    if (!p.unexpressible.empty() || p.op != r.options.op) continue;
    Convention pc = default_convention(p.op);
    apply_preset(p, r.options.dtype, pc);
    PresetMatch m{std::string(p.name), {}};
    const auto pv = write_convention(pc, p.op);
    for (std::size_t i = 0; i < pv.size(); ++i) {
      const std::string key(pv[i].first);
      if (key == "eps") {
        if (std::isfinite(r.eps_hi) && !r.eps_fits(pc.eps)) m.differences.push_back(fmt::format("eps {:g} (found {:g})", pc.eps, r.inferred.eps));
        continue;
      }
      if (!r.determined(key)) continue;
      const std::string want = convention_value_text(pv[i].second), got = convention_value_text(inferred[i].second);
      if (want != got) m.differences.push_back(fmt::format("{} {} (found {})", key, want, got));
    }
    out.push_back(std::move(m));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const PresetMatch& a, const PresetMatch& b) { return a.differences.size() < b.differences.size(); });
  return out;
}
}  // namespace

std::vector<PresetMatch> match_presets(const ProbeResult& r) {
  if (!row_op(r.options.op)) return generic_matches(r);
  const std::string affine_key = fmt::format("affine[{}]", to_string(r.options.nominal.affine));
  std::vector<PresetMatch> out;
  for (const Preset& p : presets()) {
    if (!p.unexpressible.empty() || (p.op != r.options.op && p.op != r.inferred_op)) continue;
    Convention pc = default_convention(p.op);
    apply_preset(p, r.options.dtype, pc);
    PresetMatch m{std::string(p.name), {}};
    if (r.determined("centering") && centers(p.op) != centers(r.inferred_op))
      m.differences.push_back(centers(p.op) ? "centering (it subtracts the row mean, the backend does not)"
                                            : "centering (it does not subtract the row mean, the backend does)");
    if (std::isfinite(r.eps_hi) && !r.eps_fits(pc.eps))
      m.differences.push_back(fmt::format("eps {:g} (found {:g})", pc.eps, r.inferred.eps));
    const bool eps_zero = std::isfinite(r.eps_lo) && r.eps_lo == 0;
    if (r.determined("eps_placement") && !eps_zero && pc.eps_placement != r.inferred.eps_placement)
      m.differences.push_back(fmt::format("eps_placement {} (found {})", to_string(pc.eps_placement),
                                          to_string(r.inferred.eps_placement)));
    if (centers(p.op) && centers(r.inferred_op) && r.determined("variance") && pc.variance != r.inferred.variance)
      m.differences.push_back(fmt::format("variance {} (found {})", to_string(pc.variance), to_string(r.inferred.variance)));
    if (r.determined(affine_key) && pc.affine != r.inferred.affine)
      m.differences.push_back(fmt::format("affine {} (found {})", to_string(pc.affine), to_string(r.inferred.affine)));
    if (r.rounding_order_known && pc.normalized_dtype != r.rounding_order) {
      auto order = [](const std::optional<DType>& d) {
        return d ? fmt::format("normalized value rounded to {} first", dtype_name(*d)) : std::string("one rounding");
      };
      m.differences.push_back(fmt::format("rounding order: {} (found {})", order(pc.normalized_dtype), order(r.rounding_order)));
    }
    out.push_back(std::move(m));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const PresetMatch& a, const PresetMatch& b) { return a.differences.size() < b.differences.size(); });
  return out;
}

std::vector<std::string> unmatched_properties(const ProbeResult& r) {
  std::vector<std::string> v;
  if (!row_op(r.options.op)) {  // the keys some preset of the op sets that no finding determined
    std::set<std::string> keys;
    for (const Preset& p : presets()) {
      if (p.op != r.options.op || !p.unexpressible.empty()) continue;
      Convention pc = default_convention(p.op);
      apply_preset(p, r.options.dtype, pc);
      for (const auto& [k, val] : write_convention(pc, p.op)) keys.insert(std::string(k));
    }
    for (const auto& k : keys) {
      if (k == "direction" || k == "normalized_shape" || k == "axes" || k == "acc_dtype") continue;
      if (k == "eps" ? !std::isfinite(r.eps_hi) : !r.determined(k)) v.push_back(k);
    }
    return v;
  }
  if (!r.determined("centering")) v.push_back("centering");
  if (!std::isfinite(r.eps_hi)) v.push_back("eps");
  if (!r.determined("eps_placement")) v.push_back("eps_placement");
  if (centers(r.inferred_op) && !r.determined("variance")) v.push_back("variance");
  if (!r.determined(fmt::format("affine[{}]", to_string(r.options.nominal.affine)))) v.push_back("affine");
  if (!r.rounding_order_known)
    v.push_back(r.find("rounding_order") ? "rounding order" : fmt::format("rounding order (probed in f16/bf16 only, not {})",
                                                                         dtype_name(r.options.dtype)));
  return v;
}

std::string format_preset_matches(const std::vector<PresetMatch>& ms, const std::vector<std::string>& not_compared) {
  std::vector<std::string> match;
  std::string differs;
  for (const auto& m : ms) {
    if (m.differences.empty()) {
      match.push_back(m.name);
      continue;
    }
    differs += fmt::format("{}{} in {}\n", differs.empty() ? "  differs from: " : "                ", m.name,
                           fmt::join(m.differences, ", "));
  }
  std::string s = "framework presets (normcheck presets), compared on what the probe determined:\n";
  s += match.empty() ? std::string("  matches:      none\n") : fmt::format("  matches:      {}\n", fmt::join(match, ", "));
  s += differs;
  if (!not_compared.empty()) s += fmt::format("  not compared: {} (not determined: a match says nothing about these)\n", fmt::join(not_compared, ", "));
  return s;
}

std::string format_probe_table(const ProbeResult& r) {
  std::string s = fmt::format("normcheck probe: backend {}, op {}, dtype {}, d = {}, seed {}\n", r.backend,
                              to_string(r.options.op), dtype_name(r.options.dtype), r.options.d, r.options.seed);
  s += fmt::format("nominal convention sent: eps = {}, {}, {} variance, affine {}\n\n", r.options.nominal.eps,
                   to_string(r.options.nominal.eps_placement), to_string(r.options.nominal.variance),
                   to_string(r.options.nominal.affine));
  s += fmt::format("     {:<24} {:<12} {}\n", "property", "verdict", "value");
  const Evidence* prev = nullptr;
  for (const auto& f : r.findings) {
    const char* mark = f.deviates ? "!! " : f.certainty == Certainty::undetermined ? "?  " : "ok ";
    s += fmt::format("  {}{:<24} {:<12} {}\n", mark, f.property, to_string(f.certainty), f.value);
    if (f.deviates) s += fmt::format("{:<42}expected: {}\n", "", f.expected);
    const bool same = prev && prev->inputs == f.evidence.inputs && prev->outputs == f.evidence.outputs &&
                      prev->fit == f.evidence.fit;
    prev = &f.evidence;
    if (same) continue;  // the same experiment: its evidence is printed once, above
    if (!f.evidence.inputs.empty()) s += fmt::format("{:<8}inputs: {}\n", "", f.evidence.inputs);
    if (!f.evidence.outputs.empty()) s += fmt::format("{:<8}seen:   {}\n", "", f.evidence.outputs);
    if (!f.evidence.fit.empty()) s += fmt::format("{:<8}fit:    {}\n", "", f.evidence.fit);
  }
  const auto dev = r.deviations();
  s += fmt::format("\n{} deviation{} from the nominal convention\n\n", dev.size(), dev.size() == 1 ? "" : "s");
  s += format_preset_matches(match_presets(r), unmatched_properties(r));
  if (r.eps_fits(r.options.nominal.eps))
    s += fmt::format("  (the eps found is the eps sent, {:g}: a backend that takes eps from its caller shows whatever it is "
                     "sent; --eps sends another)\n", r.options.nominal.eps);
  s += "\nconvention card (paste into a case file):\n\n";
  s += convention_card(r);
  return s;
}

namespace {
nlohmann::ordered_json convention_json(const Convention& c) {
  nlohmann::ordered_json j;
  j["eps"] = c.eps;
  j["eps_placement"] = std::string(to_string(c.eps_placement));
  j["variance"] = std::string(to_string(c.variance));
  j["affine"] = std::string(to_string(c.affine));
  j["normalized_shape"] = c.normalized_shape;
  j["acc_dtype"] = std::string(dtype_name(c.acc_dtype));
  j["normalized_dtype"] = c.normalized_dtype ? nlohmann::ordered_json(std::string(dtype_name(*c.normalized_dtype))) : nlohmann::ordered_json();
  return j;
}
nlohmann::ordered_json num_or_null(double v) { return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(); }
}  // namespace

std::string format_probe_json(const ProbeResult& r) {
  nlohmann::ordered_json j;
  j["backend"] = r.backend;
  j["op"] = std::string(to_string(r.options.op));
  j["dtype"] = std::string(dtype_name(r.options.dtype));
  j["d"] = r.options.d;
  j["seed"] = r.options.seed;
  j["nominal"] = row_op(r.options.op) ? convention_json(r.options.nominal) : nlohmann::ordered_json::parse(normcheck::convention_json(r.options.nominal, r.options.op).dump());
  j["behaves_as_op"] = std::string(to_string(r.inferred_op));
  for (const auto& f : r.findings) {
    nlohmann::ordered_json fj;
    fj["property"] = f.property;
    fj["value"] = f.value;
    fj["expected"] = f.expected;
    fj["certainty"] = std::string(to_string(f.certainty));
    fj["deviates"] = f.deviates;
    fj["evidence"] = {{"inputs", f.evidence.inputs}, {"outputs", f.evidence.outputs}, {"fit", f.evidence.fit},
                      {"residual", num_or_null(f.evidence.residual)}};
    j["findings"].push_back(fj);
  }
  j["convention"] = row_op(r.options.op) ? convention_json(r.inferred) : nlohmann::ordered_json::parse(normcheck::convention_json(r.inferred, r.options.op).dump());
  nlohmann::ordered_json pj;
  pj["matches"] = nlohmann::ordered_json::array();
  pj["differs"] = nlohmann::ordered_json::array();
  for (const auto& m : match_presets(r)) {
    if (m.differences.empty()) pj["matches"].push_back(m.name);
    else pj["differs"].push_back({{"name", m.name}, {"differences", m.differences}});
  }
  pj["not_compared"] = unmatched_properties(r);
  // The eps found is the eps sent: a backend taking eps from its caller shows whatever it is sent.
  pj["eps_is_the_eps_sent"] = r.eps_fits(r.options.nominal.eps);
  j["presets"] = pj;
  j["card"] = convention_card(r);
  return j.dump(2) + "\n";
}

namespace {
std::string summary_line(const ProbeResult& r) {
  const auto dev = r.deviations();
  if (dev.empty()) {
    const Finding* a = r.find("accumulation_precision");
    const Finding* al = r.find("accumulation_algorithm");
    return fmt::format("conforms: eps {} {}, {}, {}, axes [d], acc {}{}", r.inferred.eps,
                       to_string(r.inferred.eps_placement), to_string(r.inferred.variance),
                       centers(r.inferred_op) ? "centered" : "not centered", a ? a->value : "?",
                       al ? ", " + al->value : "");
  }
  std::string s;
  for (const Finding* f : dev) s += fmt::format("{}{} = {} ({})", s.empty() ? "" : "; ", f->property, f->value, to_string(f->certainty));
  return s;
}
}  // namespace

std::string format_probe_summary(const std::vector<ProbeResult>& results) {
  std::string s = fmt::format("{:<28} {:<11} {}\n", "backend", "op", "verdict (deviations from the nominal convention)");
  for (const auto& r : results) s += fmt::format("{:<28} {:<11} {}\n", r.backend, to_string(r.options.op), summary_line(r));
  return s;
}

std::string format_probe_summary_json(const std::vector<ProbeResult>& results) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (const auto& r : results) {
    nlohmann::ordered_json j;
    j["backend"] = r.backend;
    j["op"] = std::string(to_string(r.options.op));
    j["verdict"] = summary_line(r);
    for (const Finding* f : r.deviations())
      j["deviations"].push_back({{"property", f->property}, {"value", f->value}, {"expected", f->expected},
                                 {"certainty", std::string(to_string(f->certainty))}});
    if (!j.contains("deviations")) j["deviations"] = nlohmann::ordered_json::array();
    j["convention"] = convention_json(r.inferred);
    a.push_back(j);
  }
  return a.dump(2) + "\n";
}

}  // namespace normcheck
