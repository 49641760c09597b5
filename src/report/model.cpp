#include "report/model.hpp"

#include "core/json_bounded.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

namespace normcheck {

using nlohmann::json;

// ---- tallies and the verdict ------------------------------------------------------------

namespace {

bool evaluated(Status s) { return s == Status::passed || s == Status::failed || s == Status::mistrusted; }

}  // namespace

BackendTally tally(const Report& r, const std::string& backend) {
  BackendTally t;
  for (const CaseRecord& c : r.cases) {
    if (c.backend != backend) continue;
    ++t.runs;
    t.evaluated += evaluated(c.status);
    switch (c.status) {
      case Status::passed: ++t.passed; break;
      case Status::failed: ++(c.expected_failure.empty() ? t.failed : t.expected_failures); break;
      case Status::skipped: ++t.skipped; break;
      case Status::mistrusted: ++t.mistrusted; break;
      case Status::error: ++t.errors; break;
    }
    if (c.status == Status::passed && !c.expected_failure.empty()) ++t.unexpected_passes;
    if (c.status != Status::skipped)
      for (const CheckResult& k : c.checks) t.skipped_checks += k.status == Status::skipped;
  }
  return t;
}

int skipped_checks(const Report& r) {
  int n = 0;
  for (const CaseRecord& c : r.cases)
    if (c.status != Status::skipped)
      for (const CheckResult& k : c.checks) n += k.status == Status::skipped;
  return n;
}

Verdict judge(const Report& r) {
  Verdict v;
  if (r.incomplete) {
    v.exit_code = 3;
    v.problems.push_back("the run did not finish (killed, interrupted or crashed): this report is the placeholder written "
                         "when it started");
    return v;
  }
  bool error = false, failed = false;
  for (const BackendRecord& b : r.backends) {
    const BackendTally t = tally(r, b.name);
    if (t.errors) {
      error = true;
      v.problems.push_back(fmt::format("{}: {} case runs ended in ERROR", b.name, t.errors));
    }
    if (t.failed) {
      failed = true;
      v.problems.push_back(fmt::format("{}: {} case runs failed", b.name, t.failed));
    }
    if (!b.requested) continue;
    if (!b.unavailable.empty()) {
      error = true;
      v.problems.push_back(fmt::format("{}: evaluated nothing: {}", b.name, b.unavailable));
      continue;
    }
    // A backend that evaluated nothing checked nothing: never a pass. That includes an empty
    // shard: a test runner exporting GTEST_SHARD_INDEX/GTEST_TOTAL_SHARDS around a
    // one-case run (--case X) would otherwise pass a shard that ran none of it.
    if (t.evaluated == 0 && t.errors == 0) {
      failed = true;
      v.problems.push_back(t.runs ? fmt::format("{}: evaluated none of its {} cases (all skipped)", b.name, t.runs)
                           : r.cases.empty() && r.shard_count > 1
                               ? fmt::format("{}: shard {}/{} holds none of the {} selected cases: nothing was checked (use "
                                             "fewer shards than cases)",
                                             b.name, r.shard_index, r.shard_count, r.suite_cases)
                               : fmt::format("{}: no selected case applies to it", b.name));
    }
    // --strict fails on anything not checked: a skipped case or check, and a MISTRUSTED one
    // (its data could not tell a right answer from a wrong one; false-pass audit: --strict
    // had passed them).
    if (r.strict && (t.skipped || t.skipped_checks || t.mistrusted)) {
      failed = true;
      v.problems.push_back(fmt::format("{}: --strict: {} cases and {} checks skipped, {} cases mistrusted", b.name, t.skipped,
                                       t.skipped_checks, t.mistrusted));
    }
    if (r.strict && t.unexpected_passes) {
      failed = true;
      v.problems.push_back(fmt::format("{}: --strict: {} expected failures passed (update {})", b.name, t.unexpected_passes,
                                       r.expectations));
    }
  }
  if (r.strict && !r.stale.empty()) {
    failed = true;
    v.problems.push_back(fmt::format("--strict: {} stale entries in {}", r.stale.size(), r.expectations));
  }
  v.exit_code = error ? 3 : failed ? 1 : 0;
  return v;
}

std::string LayerRow::verdict() const {
  if (errors) return "ERROR";
  if (failed) return "FAIL";
  if (expected_failures) return "XFAIL";
  if (passed + mistrusted == 0) return "SKIP";
  return "PASS";
}

std::vector<LayerRow> summarize(const Report& rep) {
  std::vector<LayerRow> rows;
  std::map<std::string, std::size_t> index;
  for (const CaseRecord& r : rep.cases) {
    const std::string key = r.layer + "\x1f" + r.backend + "\x1f" + r.dtype;
    auto [it, fresh] = index.emplace(key, rows.size());
    if (fresh) rows.push_back({r.layer, r.op, r.backend, r.dtype});
    LayerRow& row = rows[it->second];
    ++row.cases;
    switch (r.status) {
      case Status::passed: ++row.passed; break;
      case Status::failed: ++(r.expected_failure.empty() ? row.failed : row.expected_failures); break;
      case Status::skipped: ++row.skipped; break;
      case Status::mistrusted: ++row.mistrusted; break;
      case Status::error: ++row.errors; break;
    }
    if (r.status != Status::skipped)
      for (const CheckResult& k : r.checks) row.skipped_checks += k.status == Status::skipped;
    if (r.metrics) {
      auto mx = [](double& a, double b) { if (b > a || std::isnan(b)) a = b; };
      mx(row.max_abs, r.metrics->abs.value);
      mx(row.max_ulp, r.metrics->ulp.value);
      mx(row.max_stab, r.metrics->stab.value);
    }
  }
  std::stable_sort(rows.begin(), rows.end(), [](const LayerRow& a, const LayerRow& b) { return a.layer < b.layer; });
  return rows;
}

// ---- JSON out ---------------------------------------------------------------------------

namespace {

/// JSON has no NaN or infinity: those become the strings "nan", "inf", "-inf".
json number_json(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

json worst_json(const Worst& w) {
  return {{"value", number_json(w.value)}, {"index", w.index}, {"coords", w.coords}, {"got", number_json(w.got)},
          {"exact", std::isnan(w.exact) ? std::string("nan") : fmt::format("{:.21Lg}", w.exact)},
          {"output", w.output.empty() ? "y" : w.output}};
}

json metrics_json(const MetricSet& m) {
  return {{"abs", worst_json(m.abs)}, {"rel", worst_json(m.rel)}, {"ulp", worst_json(m.ulp)}, {"stab", worst_json(m.stab)},
          {"nmse", number_json(m.nmse)}, {"count", m.count}, {"nan_mismatches", m.nan_mismatches}};
}

json tally_json(const BackendTally& t) {
  return {{"runs", t.runs}, {"evaluated", t.evaluated}, {"passed", t.passed}, {"failed", t.failed},
          {"expected_failures", t.expected_failures}, {"unexpected_passes", t.unexpected_passes}, {"skipped", t.skipped},
          {"skipped_checks", t.skipped_checks}, {"mistrusted", t.mistrusted}, {"errors", t.errors}};
}

}  // namespace

std::string to_json(const Report& r) {
  json j;
  j["normcheck"] = {{"version", r.version}, {"schema", r.schema}};
  j["run"] = {{"suite", r.suite}, {"fingerprint", r.fingerprint}, {"suite_cases", r.suite_cases},
              {"shard", {{"index", r.shard_index}, {"count", r.shard_count}}}, {"strict", r.strict},
              {"expect_failures", r.expectations}, {"merged_from", r.merged_from}};
  if (r.incomplete) j["run"]["incomplete"] = true;
  j["backends"] = json::array();
  for (const BackendRecord& b : r.backends) {
    json e = {{"name", b.name}, {"identity", b.identity}, {"requested", b.requested}, {"unavailable", b.unavailable}};
    e["counts"] = tally_json(tally(r, b.name));
    j["backends"].push_back(std::move(e));
  }
  const Verdict v = judge(r);
  int n[5] = {};
  int xfail = 0, xpass = 0;
  for (const CaseRecord& c : r.cases) {
    ++n[static_cast<int>(c.status)];
    xfail += c.status == Status::failed && !c.expected_failure.empty();
    xpass += c.status == Status::passed && !c.expected_failure.empty();
  }
  j["summary"] = {{"checks", r.cases.size()}, {"passed", n[0]}, {"failed", n[1] - xfail}, {"expected_failures", xfail},
                  {"unexpected_passes", xpass}, {"skipped", n[2]}, {"skipped_checks", skipped_checks(r)},
                  {"mistrusted", n[3]}, {"errors", n[4]},
                  {"exit_code", v.exit_code}, {"problems", v.problems}};
  j["layers"] = json::array();
  for (const LayerRow& l : summarize(r))
    j["layers"].push_back({{"layer", l.layer}, {"op", l.op}, {"backend", l.backend}, {"dtype", l.dtype}, {"cases", l.cases},
                           {"passed", l.passed}, {"failed", l.failed}, {"expected_failures", l.expected_failures},
                           {"skipped", l.skipped}, {"skipped_checks", l.skipped_checks}, {"mistrusted", l.mistrusted},
                           {"errors", l.errors},
                           {"max_abs", number_json(l.max_abs)}, {"max_ulp", number_json(l.max_ulp)},
                           {"max_stab", number_json(l.max_stab)}, {"verdict", l.verdict()}});
  j["cases"] = json::array();
  for (const CaseRecord& c : r.cases) {
    json e = {{"case", c.name}, {"layer", c.layer}, {"file", c.file}, {"line", c.line}, {"op", c.op}, {"dtype", c.dtype},
              {"backend", c.backend}, {"status", to_string(c.status)}, {"repro", c.repro}, {"seconds", c.seconds}};
    if (!c.note.empty()) e["note"] = c.note;
    if (!c.reason.empty()) e["reason"] = c.reason;
    if (!c.seeds.empty()) e["seeds"] = c.seeds;
    if (!c.expected_failure.empty()) e["expected_failure"] = c.expected_failure;
    if (!c.dims.empty()) e["dims"] = c.dims;
    if (!c.convention.empty()) e["convention"] = json::parse(c.convention);
    if (c.metrics) e["metrics"] = metrics_json(*c.metrics);
    if (c.gate) e["gate"] = {{"metric", to_string(c.gate->metric)}, {"max", c.gate->max}, {"source", c.gate->source}};
    if (c.outputs.size() > 1) {
      e["outputs"] = json::array();
      for (const auto& [name, m] : c.outputs) {
        json o = metrics_json(m);
        o["name"] = name;
        e["outputs"].push_back(std::move(o));
      }
    }
    e["checks"] = json::array();
    for (const CheckResult& k : c.checks) e["checks"].push_back({{"name", k.name}, {"status", to_string(k.status)}, {"detail", k.detail}});
    j["cases"].push_back(std::move(e));
  }
  j["stale_expectations"] = json::array();
  for (const StaleExpectation& s : r.stale)
    j["stale_expectations"].push_back({{"backend", s.backend_pattern}, {"case", s.case_name}, {"where", s.where}});
  // Every string in a report comes from somewhere else (case files, workers): never let
  // an invalid UTF-8 byte make the report unwritable.
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

// ---- JSON in ----------------------------------------------------------------------------

namespace {

/// Typed access to a parsed report; every error names the field's path.
struct Reader {
  const std::string& what;

  [[noreturn]] void fail(const std::string& path, const std::string& msg) const {
    throw std::runtime_error(fmt::format("{}: {}: {}", what, path, msg));
  }
  const json& get(const json& o, const char* key, const std::string& path) const {
    if (!o.is_object()) fail(path, "expected an object");
    auto it = o.find(key);
    if (it == o.end()) fail(path + "." + key, "missing");
    return *it;
  }
  std::string str(const json& o, const char* key, const std::string& path) const {
    const json& v = get(o, key, path);
    if (!v.is_string()) fail(path + "." + key, "expected a string");
    return v.get<std::string>();
  }
  std::string opt_str(const json& o, const char* key, const std::string& path) const {
    return o.contains(key) ? str(o, key, path) : std::string();
  }
  std::int64_t integer(const json& o, const char* key, const std::string& path) const {
    const json& v = get(o, key, path);
    if (!v.is_number_integer()) fail(path + "." + key, "expected an integer");
    return v.get<std::int64_t>();
  }
  bool boolean(const json& o, const char* key, const std::string& path) const {
    const json& v = get(o, key, path);
    if (!v.is_boolean()) fail(path + "." + key, "expected true or false");
    return v.get<bool>();
  }
  /// A number as number_json writes it (a number, or "nan" / "inf" / "-inf").
  double number(const json& o, const char* key, const std::string& path) const {
    const json& v = get(o, key, path);
    if (v.is_number()) return v.get<double>();
    if (v.is_string()) {
      const std::string s = v.get<std::string>();
      if (s == "nan") return NAN;
      if (s == "inf") return HUGE_VAL;
      if (s == "-inf") return -HUGE_VAL;
    }
    fail(path + "." + key, "expected a number (or \"nan\", \"inf\", \"-inf\")");
  }
  const json& array(const json& o, const char* key, const std::string& path) const {
    const json& v = get(o, key, path);
    if (!v.is_array()) fail(path + "." + key, "expected an array");
    return v;
  }
  Worst worst(const json& o, const std::string& path) const {
    Worst w;
    w.value = number(o, "value", path);
    w.index = integer(o, "index", path);
    for (const json& c : array(o, "coords", path)) {
      if (!c.is_number_integer()) fail(path + ".coords", "expected integers");
      w.coords.push_back(c.get<std::int64_t>());
    }
    w.got = number(o, "got", path);
    const std::string e = str(o, "exact", path);
    char* end = nullptr;
    w.exact = std::strtold(e.c_str(), &end);
    if (e.empty() || *end != '\0') fail(path + ".exact", fmt::format("'{}' is not a decimal number", e));
    w.output = str(o, "output", path);
    if (w.output == "y") w.output.clear();
    return w;
  }
  MetricSet metrics(const json& o, const std::string& path) const {
    MetricSet m;
    m.abs = worst(get(o, "abs", path), path + ".abs");
    m.rel = worst(get(o, "rel", path), path + ".rel");
    m.ulp = worst(get(o, "ulp", path), path + ".ulp");
    m.stab = worst(get(o, "stab", path), path + ".stab");
    m.nmse = number(o, "nmse", path);
    m.count = integer(o, "count", path);
    m.nan_mismatches = integer(o, "nan_mismatches", path);
    return m;
  }
  Status status(const json& o, const char* key, const std::string& path) const {
    const std::string s = str(o, key, path);
    for (Status st : {Status::passed, Status::failed, Status::skipped, Status::mistrusted, Status::error})
      if (to_string(st) == s) return st;
    fail(path + "." + key, fmt::format("unknown status '{}'", s));
  }
};

}  // namespace

Report report_from_json(std::string_view text, const std::string& what) {
  const json j = parse_json_bounded(text, what);  // JsonError (a std::runtime_error) names `what`
  const Reader rd{what};
  if (!j.is_object()) rd.fail("(top)", "expected a JSON object (a normcheck report)");
  if (!j.contains("normcheck")) rd.fail("normcheck", "missing: not a normcheck report, or one older than schema 2");
  Report r;
  const json& hdr = rd.get(j, "normcheck", "");
  r.version = rd.str(hdr, "version", "normcheck");
  r.schema = static_cast<int>(rd.integer(hdr, "schema", "normcheck"));
  if (r.schema != kReportSchema)
    rd.fail("normcheck.schema", fmt::format("schema {} (this normcheck reads schema {})", r.schema, kReportSchema));
  const json& run = rd.get(j, "run", "");
  r.suite = rd.str(run, "suite", "run");
  r.fingerprint = rd.str(run, "fingerprint", "run");
  r.suite_cases = rd.integer(run, "suite_cases", "run");
  const json& shard = rd.get(run, "shard", "run");
  r.shard_index = static_cast<int>(rd.integer(shard, "index", "run.shard"));
  r.shard_count = static_cast<int>(rd.integer(shard, "count", "run.shard"));
  if (r.shard_count < 1 || r.shard_index < 0 || r.shard_index >= r.shard_count)
    rd.fail("run.shard", fmt::format("{}/{} is not a shard K/N with 0 <= K < N", r.shard_index, r.shard_count));
  r.strict = rd.boolean(run, "strict", "run");
  r.expectations = rd.str(run, "expect_failures", "run");
  if (run.contains("incomplete")) r.incomplete = rd.boolean(run, "incomplete", "run");
  for (const json& m : rd.array(run, "merged_from", "run")) {
    if (!m.is_string()) rd.fail("run.merged_from", "expected strings");
    r.merged_from.push_back(m.get<std::string>());
  }
  std::set<std::string> names;
  const json& bs = rd.array(j, "backends", "");
  for (std::size_t i = 0; i < bs.size(); ++i) {
    const std::string p = fmt::format("backends[{}]", i);
    BackendRecord b;
    b.name = rd.str(bs[i], "name", p);
    b.identity = rd.str(bs[i], "identity", p);
    b.requested = rd.boolean(bs[i], "requested", p);
    b.unavailable = rd.str(bs[i], "unavailable", p);
    if (!names.insert(b.name).second) rd.fail(p + ".name", fmt::format("backend '{}' listed twice", b.name));
    r.backends.push_back(std::move(b));
  }
  const json& cs = rd.array(j, "cases", "");
  for (std::size_t i = 0; i < cs.size(); ++i) {
    const std::string p = fmt::format("cases[{}]", i);
    const json& e = cs[i];
    CaseRecord c;
    c.name = rd.str(e, "case", p);
    c.layer = rd.str(e, "layer", p);
    c.file = rd.str(e, "file", p);
    c.line = static_cast<int>(rd.integer(e, "line", p));
    c.op = rd.str(e, "op", p);
    c.dtype = rd.str(e, "dtype", p);
    c.backend = rd.str(e, "backend", p);
    if (!names.count(c.backend)) rd.fail(p + ".backend", fmt::format("'{}' is not in \"backends\"", c.backend));
    c.status = rd.status(e, "status", p);
    c.repro = rd.str(e, "repro", p);
    c.seconds = rd.number(e, "seconds", p);
    c.note = rd.opt_str(e, "note", p);
    c.reason = rd.opt_str(e, "reason", p);
    c.seeds = rd.opt_str(e, "seeds", p);
    c.expected_failure = rd.opt_str(e, "expected_failure", p);
    if (e.contains("dims")) {
      const json& ds = rd.array(e, "dims", p);
      for (std::size_t k = 0; k < ds.size(); ++k) {
        if (!ds[k].is_string()) rd.fail(fmt::format("{}.dims[{}]", p, k), "expected a string");
        c.dims.push_back(ds[k].get<std::string>());
      }
    }
    if (e.contains("convention")) {
      if (!e["convention"].is_object()) rd.fail(p + ".convention", "expected an object");
      c.convention = e["convention"].dump();
    }
    if (e.contains("metrics")) c.metrics = rd.metrics(e["metrics"], p + ".metrics");
    if (e.contains("gate")) {
      const json& g = e["gate"];
      Gate gate;
      const std::string m = rd.str(g, "metric", p + ".gate");
      auto metric = parse_metric(m);
      if (!metric) rd.fail(p + ".gate.metric", fmt::format("unknown metric '{}'", m));
      gate.metric = *metric;
      gate.max = rd.number(g, "max", p + ".gate");
      gate.source = rd.str(g, "source", p + ".gate");
      c.gate = gate;
    }
    if (e.contains("outputs")) {
      const json& os = rd.array(e, "outputs", p);
      for (std::size_t k = 0; k < os.size(); ++k) {
        const std::string op = fmt::format("{}.outputs[{}]", p, k);
        c.outputs.emplace_back(rd.str(os[k], "name", op), rd.metrics(os[k], op));
      }
    } else if (c.metrics) {
      c.outputs.emplace_back(c.metrics->abs.output.empty() ? "y" : c.metrics->abs.output, *c.metrics);
    }
    const json& ks = rd.array(e, "checks", p);
    for (std::size_t k = 0; k < ks.size(); ++k) {
      const std::string kp = fmt::format("{}.checks[{}]", p, k);
      c.checks.push_back({rd.str(ks[k], "name", kp), rd.status(ks[k], "status", kp), rd.str(ks[k], "detail", kp)});
    }
    r.cases.push_back(std::move(c));
  }
  if (j.contains("stale_expectations")) {
    const json& ss = rd.array(j, "stale_expectations", "");
    for (std::size_t i = 0; i < ss.size(); ++i) {
      const std::string p = fmt::format("stale_expectations[{}]", i);
      r.stale.push_back({rd.str(ss[i], "backend", p), rd.str(ss[i], "case", p), rd.str(ss[i], "where", p)});
    }
  }
  return r;
}

// ---- merge ------------------------------------------------------------------------------

Report merge_reports(const std::vector<std::pair<std::string, Report>>& shards) {
  if (shards.empty()) throw std::runtime_error("merge: no reports");
  const auto& [first_path, first] = shards.front();
  std::map<int, std::string> seen;
  for (const auto& [path, r] : shards)
    if (r.incomplete)
      throw std::runtime_error(fmt::format("{}: the report of a run that did not finish (the placeholder written when it "
                                           "started): rerun that shard", path));
  for (const auto& [path, r] : shards) {
    if (r.fingerprint != first.fingerprint)
      throw std::runtime_error(fmt::format("{} and {} come from different suites or backend lists (fingerprints {} and {})",
                                           first_path, path, first.fingerprint, r.fingerprint));
    if (r.shard_count != first.shard_count)
      throw std::runtime_error(fmt::format("{} is shard {}/{} but {} is shard {}/{}", first_path, first.shard_index,
                                           first.shard_count, path, r.shard_index, r.shard_count));
    if (r.strict != first.strict || r.expectations != first.expectations)
      throw std::runtime_error(fmt::format("{} and {} ran with different --strict/--expect-failures settings", first_path, path));
    if (!r.merged_from.empty())
      throw std::runtime_error(fmt::format("{} is itself a merged report: merge the shard reports", path));
    auto [it, fresh] = seen.emplace(r.shard_index, path);
    if (!fresh)
      throw std::runtime_error(fmt::format("shard {}/{} given twice: {} and {}", r.shard_index, r.shard_count, it->second, path));
  }
  std::vector<std::string> missing;
  for (int k = 0; k < first.shard_count; ++k)
    if (!seen.count(k)) missing.push_back(fmt::format("{}/{}", k, first.shard_count));
  if (!missing.empty())
    throw std::runtime_error(fmt::format("missing shards: {} (every shard 0..{} of the run is needed)", fmt::join(missing, ", "),
                                         first.shard_count - 1));
  Report m;
  m.version = first.version;
  m.suite = first.suite;
  m.fingerprint = first.fingerprint;
  m.suite_cases = first.suite_cases;
  m.shard_index = 0;
  m.shard_count = 1;
  m.strict = first.strict;
  m.expectations = first.expectations;
  std::set<std::pair<std::string, std::string>> stale_seen;
  // Each backend's distinct non-empty identities in shard order: shards run on other machines
  // may differ (the cpu backend's instruction-set tier); the merged record names each once.
  std::map<std::string, std::vector<std::string>> identities;
  for (int k = 0; k < first.shard_count; ++k) {  // in shard order
    const std::string& path = seen.at(k);
    const Report& r = std::find_if(shards.begin(), shards.end(), [&](const auto& s) { return s.first == path; })->second;
    m.merged_from.push_back(path);
    for (const BackendRecord& b : r.backends) {
      std::vector<std::string>& ids = identities[b.name];
      if (!b.identity.empty() && std::find(ids.begin(), ids.end(), b.identity) == ids.end()) ids.push_back(b.identity);
      auto it = std::find_if(m.backends.begin(), m.backends.end(), [&](const BackendRecord& x) { return x.name == b.name; });
      if (it == m.backends.end()) {
        m.backends.push_back(b);
      } else {
        it->requested = it->requested || b.requested;
        if (it->unavailable.empty()) it->unavailable = b.unavailable;
      }
    }
    m.cases.insert(m.cases.end(), r.cases.begin(), r.cases.end());
    for (const StaleExpectation& s : r.stale)
      if (stale_seen.insert({s.backend_pattern, s.case_name}).second) m.stale.push_back(s);
  }
  for (BackendRecord& b : m.backends) b.identity = fmt::format("{}", fmt::join(identities[b.name], " | "));
  std::set<std::pair<std::string, std::string>> runs;
  for (const CaseRecord& c : m.cases) {
    if (!runs.insert({c.file + "\x1f" + c.name, c.backend}).second)
      throw std::runtime_error(fmt::format("case {} ({}) on {} appears in two shards", c.name, c.file, c.backend));
  }
  return m;
}

}  // namespace normcheck
