#include "report/report.hpp"
#include "spec/convention.hpp"
#include "spec/sample.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include <fmt/color.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <pugixml.hpp>

namespace normcheck {

Report make_report(const std::vector<CaseResult>& results, RunInfo info) {
  Report r;
  r.version = std::move(info.version);
  r.suite = std::move(info.suite);
  r.fingerprint = std::move(info.fingerprint);
  r.expectations = std::move(info.expectations);
  r.suite_cases = info.suite_cases;
  r.shard_index = info.shard_index;
  r.shard_count = info.shard_count;
  r.strict = info.strict;
  r.backends = std::move(info.backends);
  for (const CaseResult& x : results) {
    CaseRecord c;
    c.name = x.cs->name;
    c.layer = x.cs->layer;
    c.file = x.cs->file;
    c.line = x.cs->line;
    c.op = std::string(to_string(x.cs->problem.op));
    c.dtype = std::string(dtype_name(x.cs->problem.out_dtype));
    c.backend = x.backend;
    c.note = x.cs->note;
    c.seeds = x.cs->seeds;
    c.status = x.status;
    c.reason = x.reason;
    c.metrics = x.metrics;
    c.outputs = x.output_metrics;
    c.gate = x.gate;
    c.checks = x.checks;
    c.repro = x.repro;
    c.seconds = x.seconds;
    c.dims = problem_dims(x.cs->problem);
    auto conv = convention_json(x.cs->problem.conv, x.cs->problem.op);
    if (!x.cs->preset.empty()) conv["preset"] = x.cs->preset;  // where the values started from
    c.convention = conv.dump();
    r.cases.push_back(std::move(c));
  }
  return r;
}

namespace {

std::string num(double v) {
  if (v == 0) return "0";
  return fmt::format("{:.3g}", v);
}

std::string paint(const std::string& v, bool color) {
  if (!color) return v;
  if (v == "PASS" || v == "XFAIL") return fmt::format(fmt::fg(fmt::terminal_color::green), "{}", v);
  if (v == "SKIP") return fmt::format(fmt::fg(fmt::terminal_color::yellow), "{}", v);
  return fmt::format(fmt::fg(fmt::terminal_color::red) | fmt::emphasis::bold, "{}", v);
}

/// The first failed (or errored) check of a case as one line with its numbers.
std::string first_failure(const CaseRecord& r) {
  for (const CheckResult& c : r.checks)
    if (c.status == Status::failed || c.status == Status::error) return fmt::format("{}: {}", c.name, c.detail);
  return r.reason.empty() ? std::string("failed") : r.reason;
}

}  // namespace

std::string format_coverage(const Report& rep) {
  struct Cell {
    std::int64_t runs = 0, evaluated = 0;
    std::map<std::string, std::int64_t> skips;
  };
  std::vector<std::string> backends;
  for (const BackendRecord& b : rep.backends)
    if (b.requested) backends.push_back(b.name);
  std::map<std::string, std::map<std::string, Cell>> t;  // dim -> backend -> cell
  for (const CaseRecord& c : rep.cases)
    for (const std::string& d : c.dims) {
      Cell& cell = t[d][c.backend];
      ++cell.runs;
      if (c.status == Status::skipped) ++cell.skips[c.reason.substr(0, 90)];
      else ++cell.evaluated;
    }
  std::size_t w = 9;
  for (auto& [d, m] : t) w = std::max(w, d.size());
  std::string out = fmt::format("\ncoverage (evaluated/runs per dimension value; NONE: nothing evaluated there)\n{:<{}}", "dimension", w);
  for (const auto& b : backends) out += fmt::format("  {:>14}", b.size() > 14 ? b.substr(0, 13) + "~" : b);
  out += "\n";
  std::vector<std::string> notes;
  for (auto& [d, m] : t) {
    out += fmt::format("{:<{}}", d, w);
    for (const auto& b : backends) {
      auto it = m.find(b);
      if (it == m.end() || it->second.runs == 0) {
        out += fmt::format("  {:>14}", "-");
        continue;
      }
      const Cell& c = it->second;
      out += fmt::format("  {:>14}", c.evaluated == 0 ? fmt::format("NONE 0/{}", c.runs) : fmt::format("{}/{}", c.evaluated, c.runs));
      if (c.evaluated == 0 && !c.skips.empty()) {
        auto top = std::max_element(c.skips.begin(), c.skips.end(), [](auto& a, auto& b) { return a.second < b.second; });
        notes.push_back(fmt::format("  {} on {}: all skipped, e.g. {}", d, b, top->first));
      }
    }
    out += "\n";
  }
  for (const auto& n : notes) out += n + "\n";
  return out;
}

std::string format_details(const Report& rep, bool color) {
  std::string out;
  for (const CaseRecord& r : rep.cases) {
    const bool xfail = r.status == Status::failed && !r.expected_failure.empty();
    if (xfail || (r.status != Status::failed && r.status != Status::error && r.status != Status::mistrusted)) continue;
    out += fmt::format("\n{} {} on {} ({}:{}){}\n", r.status, r.name, r.backend, r.file, r.line,
                       r.seeds.empty() ? "" : fmt::format(" seeds: {}", r.seeds));
    if (!r.note.empty()) out += fmt::format("  note: {}\n", r.note);
    if (!r.reason.empty()) out += fmt::format("  {}\n", r.reason);
    for (const CheckResult& c : r.checks)
      if (c.status != Status::passed) out += fmt::format("  {} {}: {}\n", c.status, c.name, c.detail);
    out += fmt::format("  rerun: {}\n", r.repro);
  }
  std::string expected;
  for (const CaseRecord& r : rep.cases) {
    if (r.expected_failure.empty()) continue;
    if (r.status == Status::failed)  // the failure seen beside the one listed: a different fault shows
      expected += fmt::format("XFAIL {} on {}: {}\n  observed: {}\n", r.name, r.backend, r.expected_failure, first_failure(r));
    else if (r.status == Status::passed)
      expected += fmt::format("XPASS {} on {}: passed, but {} expects it to fail ({}); rerun: {}\n", r.name, r.backend,
                              rep.expectations, r.expected_failure, r.repro);
  }
  for (const StaleExpectation& s : rep.stale)
    expected += fmt::format("STALE {} [{}] {}: no case of that name in the selected files\n", s.where, s.backend_pattern, s.case_name);
  if (!expected.empty()) out += "\n" + expected;
  std::map<std::string, int> skip_reasons, check_skip_reasons;
  for (const CaseRecord& r : rep.cases) {
    if (r.status == Status::skipped) ++skip_reasons[r.reason];
    else
      for (const CheckResult& c : r.checks)
        if (c.status == Status::skipped) ++check_skip_reasons[fmt::format("{} on {}: {}", c.name, r.backend, c.detail)];
  }
  for (auto& [why, k] : skip_reasons) out += fmt::format("\nSKIPPED {} x: {}", k, why);
  // A check skipped inside a case that ran (a worker declining a property's transformed
  // problem): the case's other checks passed, this one checked nothing (false-pass audit:
  // such skips had shown only in the JSON).
  for (auto& [why, k] : check_skip_reasons) out += fmt::format("\nSKIPPED CHECK {} x: {}", k, why);
  if (!skip_reasons.empty() || !check_skip_reasons.empty()) out += "\n";

  // Per backend: how much it actually evaluated (a backend that skips everything is visible).
  std::size_t wb = 7;
  for (const BackendRecord& b : rep.backends) wb = std::max(wb, b.name.size());
  out += fmt::format("\n{:<{}}  {:>6} {:>9} {:>7} {:>7} {:>6} {:>8} {:>10} {:>7}  {}\n", "backend", wb, "runs", "evaluated",
                     "passed", "failed", "xfail", "skipped", "mistrusted", "errors", "identity");
  for (const BackendRecord& b : rep.backends) {
    const BackendTally t = tally(rep, b.name);
    std::string id = b.identity;
    if (!b.unavailable.empty()) id = "unavailable: " + b.unavailable;
    if (!b.requested) id += id.empty() ? "(recorded in the cases)" : " (recorded in the cases)";
    out += fmt::format("{:<{}}  {:>6} {:>9} {:>7} {:>7} {:>6} {:>8} {:>10} {:>7}  {}\n", b.name, wb, t.runs, t.evaluated, t.passed,
                       t.failed, t.expected_failures, t.skipped, t.mistrusted, t.errors, id);
  }
  int n[5] = {};
  int xfail = 0, xpass = 0;
  std::set<std::string> distinct;
  for (const CaseRecord& r : rep.cases) {
    ++n[static_cast<int>(r.status)];
    xfail += r.status == Status::failed && !r.expected_failure.empty();
    xpass += r.status == Status::passed && !r.expected_failure.empty();
    distinct.insert(r.file + "\x1f" + r.name);
  }
  out += fmt::format("\nsuite: {}: {} cases{}\n", rep.suite, rep.suite_cases,
                     rep.shard_count > 1 ? fmt::format(", shard {}/{} ran {} of them", rep.shard_index, rep.shard_count, distinct.size())
                                         : "");
  if (!rep.merged_from.empty()) out += fmt::format("merged from {} shard reports\n", rep.merged_from.size());
  const int checks_skipped = skipped_checks(rep);
  out += fmt::format("{} case runs: {} passed, {} failed, {} skipped, {} mistrusted, {} errors{}{}\n", rep.cases.size(), n[0],
                     n[1] - xfail, n[2], n[3], n[4],
                     xfail || xpass ? fmt::format(" ({} expected failures, {} unexpected passes)", xfail, xpass) : "",
                     checks_skipped ? fmt::format("; {} checks skipped inside the cases that ran", checks_skipped) : "");
  const Verdict v = judge(rep);
  const std::string verdict = fmt::format("{}", v);
  const std::string word = verdict.substr(0, verdict.find(' '));
  out += fmt::format("verdict: {}{}\n", paint(word, color), verdict.substr(word.size()));
  for (const std::string& p : v.problems) out += fmt::format("  {}\n", p);
  return out;
}

std::string format_table(const Report& rep, bool color) {
  const auto rows = summarize(rep);
  std::size_t wl = 5, wb = 7, wo = 13;
  for (auto& r : rows) { wl = std::max(wl, r.layer.size()); wb = std::max(wb, r.backend.size()); wo = std::max(wo, r.op.size()); }
  std::string out = fmt::format("{:<{}}  {:<{}}  {:<{}}  {:<5} {:>5}  {:>10}  {:>10}  {:>10}  {}\n", "layer", wl, "op", wo,
                                "backend", wb, "dtype", "cases", "max abs", "max ulp", "max stab", "verdict");
  for (auto& r : rows) {
    std::string extra;
    if (r.failed) extra += fmt::format(" {} failed", r.failed);
    if (r.expected_failures) extra += fmt::format(" {} expected failures", r.expected_failures);
    if (r.errors) extra += fmt::format(" {} errors", r.errors);
    if (r.skipped) extra += fmt::format(" {} skipped", r.skipped);
    if (r.mistrusted) extra += fmt::format(" {} mistrusted", r.mistrusted);
    if (r.skipped_checks) extra += fmt::format(" {} checks skipped", r.skipped_checks);
    out += fmt::format("{:<{}}  {:<{}}  {:<{}}  {:<5} {:>5}  {:>10}  {:>10}  {:>10}  {}{}\n", r.layer, wl, r.op, wo, r.backend, wb,
                       r.dtype, r.cases, num(r.max_abs), num(r.max_ulp), num(r.max_stab), paint(r.verdict(), color), extra);
  }
  return out + format_details(rep, color);
}

namespace {

/// `s` as XML 1.0 character data: invalid UTF-8 sequences become U+FFFD, and the control
/// characters XML forbids (all below 0x20 but tab, newline, carriage return; DEL) become
/// '?', so a worker's stderr with ANSI colours cannot make the file malformed.
std::string xml_safe(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      out += (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f ? '?' : static_cast<char>(c);
      ++i;
      continue;
    }
    const int len = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c <= 0xdf ? 2 : 0;
    bool ok = len > 0 && i + static_cast<std::size_t>(len) <= s.size();
    std::uint32_t cp = len == 4 ? c & 0x07u : len == 3 ? c & 0x0fu : c & 0x1fu;
    for (int k = 1; ok && k < len; ++k) {
      const unsigned char cc = static_cast<unsigned char>(s[i + k]);
      ok = (cc & 0xc0) == 0x80;
      cp = (cp << 6) | (cc & 0x3fu);
    }
    // Overlong forms, surrogates, > U+10FFFF and U+FFFE/FFFF are not XML characters.
    ok = ok && !(len == 3 && cp < 0x800) && !(len == 4 && (cp < 0x10000 || cp > 0x10ffff)) && !(cp >= 0xd800 && cp <= 0xdfff) &&
         cp != 0xfffe && cp != 0xffff;
    if (ok) {
      out.append(s, i, static_cast<std::size_t>(len));
      i += static_cast<std::size_t>(len);
    } else {
      out += "\xef\xbf\xbd";
      ++i;
    }
  }
  return out;
}


/// Why a case that ran is not a full pass: MISTRUSTED (its data cannot tell right from
/// wrong), or checks skipped inside it; empty for a pass that checked everything.
std::string not_checked(const CaseRecord& r) {
  if (r.status == Status::mistrusted)
    for (const CheckResult& c : r.checks)
      if (c.status == Status::mistrusted) return fmt::format("MISTRUSTED {}: {}", c.name, c.detail);
  if (r.status != Status::passed) return {};
  int n = 0;
  std::string first;
  for (const CheckResult& c : r.checks)
    if (c.status == Status::skipped && n++ == 0) first = fmt::format("{}: {}", c.name, c.detail);
  return n ? fmt::format("{} of {} checks skipped (the others passed), e.g. {}", n, r.checks.size(), first) : std::string();
}

}  // namespace

std::string format_junit(const Report& rep) {
  pugi::xml_document doc;
  auto decl = doc.append_child(pugi::node_declaration);
  decl.append_attribute("version") = "1.0";
  decl.append_attribute("encoding") = "UTF-8";
  auto suites = doc.append_child("testsuites");
  suites.append_attribute("name") = "normcheck";
  auto props = suites.append_child("properties");
  auto prop = [&](const char* k, const std::string& v) {
    auto p = props.append_child("property");
    p.append_attribute("name") = k;
    p.append_attribute("value") = xml_safe(v).c_str();
  };
  prop("normcheck.version", rep.version);
  prop("suite", rep.suite);
  prop("shard", fmt::format("{}/{}", rep.shard_index, rep.shard_count));
  for (const BackendRecord& b : rep.backends) prop(("backend." + b.name).c_str(), b.identity);
  const Verdict v = judge(rep);
  prop("exit_code", std::to_string(v.exit_code));
  for (const std::string& p : v.problems) prop("problem", p);
  std::map<std::string, pugi::xml_node> by_layer;
  std::map<std::string, std::array<int, 4>> counts;  // tests, failures, errors, skipped
  for (const CaseRecord& r : rep.cases) {
    auto [it, fresh] = by_layer.emplace(r.layer, pugi::xml_node());
    if (fresh) {
      it->second = suites.append_child("testsuite");
      it->second.append_attribute("name") = xml_safe(r.layer).c_str();
    }
    auto tc = it->second.append_child("testcase");
    tc.append_attribute("classname") = xml_safe(r.layer + "." + r.backend).c_str();
    tc.append_attribute("name") = xml_safe(r.name + " [" + r.backend + "]").c_str();
    tc.append_attribute("file") = xml_safe(r.file).c_str();
    tc.append_attribute("line") = r.line;
    tc.append_attribute("time") = r.seconds;
    auto& cnt = counts[r.layer];
    ++cnt[0];
    std::string text;
    if (!r.note.empty()) text += "note: " + r.note + "\n";
    for (const CheckResult& k : r.checks) text += fmt::format("{} {}: {}\n", to_string(k.status), k.name, k.detail);
    text += "rerun: " + r.repro + "\n";
    if (r.status == Status::failed && r.expected_failure.empty()) {
      ++cnt[1];
      auto f = tc.append_child("failure");
      f.append_attribute("message") = xml_safe(first_failure(r)).c_str();
      f.append_attribute("type") = "FAILED";
      f.text().set(xml_safe(text).c_str());
    } else if (r.status == Status::error) {
      ++cnt[2];
      auto f = tc.append_child("error");
      f.append_attribute("message") = xml_safe(r.reason).c_str();
      f.text().set(xml_safe(r.reason + "\n" + text).c_str());
    } else if (r.status == Status::skipped) {
      ++cnt[3];
      tc.append_child("skipped").append_attribute("message") = xml_safe(r.reason).c_str();
    } else if (r.status == Status::failed) {  // an expected failure: reported, not failing
      ++cnt[3];
      tc.append_child("skipped").append_attribute("message") =
          xml_safe(fmt::format("expected failure ({}): {}; {}", rep.expectations, r.expected_failure, first_failure(r))).c_str();
    } else if (const std::string why = not_checked(r); !why.empty()) {
      // MISTRUSTED, or a check skipped inside the case: not a pass a CI should show green.
      ++cnt[3];
      tc.append_child("skipped").append_attribute("message") = xml_safe(why).c_str();
      tc.append_child("system-out").text().set(xml_safe(text).c_str());
    } else {
      tc.append_child("system-out").text().set(xml_safe(text).c_str());
    }
  }
  // The run's verdict as a test case of its own: a run that fails for a reason no case
  // carries (a backend that evaluated nothing, an unexpected pass or a stale entry under
  // --strict, a skipped check under --strict) is red in any JUnit reader, not only in the
  // exit_code property (false-pass audit).
  {
    auto suite = suites.append_child("testsuite");
    suite.append_attribute("name") = "normcheck";
    suite.append_attribute("tests") = 1;
    suite.append_attribute("failures") = v.exit_code == 1 ? 1 : 0;
    suite.append_attribute("errors") = v.exit_code == 3 ? 1 : 0;
    suite.append_attribute("skipped") = 0;
    auto tc = suite.append_child("testcase");
    tc.append_attribute("classname") = "normcheck";
    tc.append_attribute("name") = "verdict";
    std::string why;
    for (const std::string& p : v.problems) why += (why.empty() ? "" : "; ") + p;
    const std::string verdict = fmt::format("{}", v);
    if (v.exit_code != 0) {
      auto f = tc.append_child(v.exit_code == 3 ? "error" : "failure");
      f.append_attribute("message") = xml_safe(fmt::format("{}: {}", verdict, why)).c_str();
      f.text().set(xml_safe(why).c_str());
    } else {
      tc.append_child("system-out").text().set(xml_safe(verdict).c_str());
    }
  }
  for (auto& [layer, node] : by_layer) {
    auto& c = counts[layer];
    node.append_attribute("tests") = c[0];
    node.append_attribute("failures") = c[1];
    node.append_attribute("errors") = c[2];
    node.append_attribute("skipped") = c[3];
  }
  std::ostringstream os;
  doc.save(os, "  ");
  return os.str();
}

}  // namespace normcheck
