#include "report/report.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <unistd.h>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/color.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <pugixml.hpp>

namespace normcheck {

std::string LayerRow::verdict() const {
  if (errors) return "ERROR";
  if (failed) return "FAIL";
  if (passed + mistrusted == 0) return "SKIP";
  return "PASS";
}

std::vector<LayerRow> summarize(const std::vector<CaseResult>& results) {
  std::vector<LayerRow> rows;
  std::map<std::string, std::size_t> index;
  for (const auto& r : results) {
    const std::string dt(dtype_name(r.cs->problem.out_dtype));
    const std::string key = r.cs->layer + "\x1f" + r.backend + "\x1f" + dt;
    auto [it, fresh] = index.emplace(key, rows.size());
    if (fresh) rows.push_back({r.cs->layer, std::string(to_string(r.cs->problem.op)), r.backend, dt});
    LayerRow& row = rows[it->second];
    ++row.cases;
    switch (r.status) {
      case Status::passed: ++row.passed; break;
      case Status::failed: ++row.failed; break;
      case Status::skipped: ++row.skipped; break;
      case Status::mistrusted: ++row.mistrusted; break;
      case Status::error: ++row.errors; break;
    }
    if (r.metrics) {
      auto mx = [](double& a, double b) { if (b > a || std::isnan(b)) a = b; };
      mx(row.max_abs, r.metrics->abs.value);
      mx(row.max_ulp, r.metrics->ulp.value);
      mx(row.max_stab, r.metrics->stab.value);
    }
  }
  // Keep a layer's backends together.
  std::stable_sort(rows.begin(), rows.end(), [](const LayerRow& a, const LayerRow& b) { return a.layer < b.layer; });
  return rows;
}

namespace {
std::string num(double v) {
  if (v == 0) return "0";
  return fmt::format("{:.3g}", v);
}
}  // namespace

std::string format_table(const std::vector<CaseResult>& results, bool color) {
  const auto rows = summarize(results);
  std::size_t wl = 5, wb = 7, wo = 13;
  for (auto& r : rows) { wl = std::max(wl, r.layer.size()); wb = std::max(wb, r.backend.size()); wo = std::max(wo, r.op.size()); }
  std::string out = fmt::format("{:<{}}  {:<{}}  {:<{}}  {:<5} {:>5}  {:>10}  {:>10}  {:>10}  {}\n", "layer", wl, "op", wo,
                                "backend", wb, "dtype", "cases", "max abs", "max ulp", "max stab", "verdict");
  auto paint = [&](const std::string& v) {
    if (!color) return v;
    if (v == "PASS") return fmt::format(fmt::fg(fmt::terminal_color::green), "{}", v);
    if (v == "SKIP") return fmt::format(fmt::fg(fmt::terminal_color::yellow), "{}", v);
    return fmt::format(fmt::fg(fmt::terminal_color::red) | fmt::emphasis::bold, "{}", v);
  };
  for (auto& r : rows) {
    std::string v = paint(r.verdict());
    std::string extra;
    if (r.failed) extra += fmt::format(" {} failed", r.failed);
    if (r.errors) extra += fmt::format(" {} errors", r.errors);
    if (r.skipped) extra += fmt::format(" {} skipped", r.skipped);
    if (r.mistrusted) extra += fmt::format(" {} mistrusted", r.mistrusted);
    out += fmt::format("{:<{}}  {:<{}}  {:<{}}  {:<5} {:>5}  {:>10}  {:>10}  {:>10}  {}{}\n", r.layer, wl, r.op, wo, r.backend, wb,
                       r.dtype, r.cases, num(r.max_abs), num(r.max_ulp), num(r.max_stab), v, extra);
  }
  int n[5] = {};
  for (auto& r : results) ++n[static_cast<int>(r.status)];
  std::string fails;
  for (auto& r : results) {
    if (r.status != Status::failed && r.status != Status::error && r.status != Status::mistrusted) continue;
    fails += fmt::format("\n{} {} on {} ({}:{}){}\n", to_string(r.status), r.cs->name, r.backend, r.cs->file, r.cs->line,
                         r.cs->seeds.empty() ? "" : fmt::format(" seeds: {}", r.cs->seeds));
    if (!r.reason.empty()) fails += fmt::format("  {}\n", r.reason);
    for (auto& c : r.checks)
      if (c.status != Status::passed) fails += fmt::format("  {} {}: {}\n", to_string(c.status), c.name, c.detail);
    fails += fmt::format("  rerun: {}\n", r.repro);
  }
  out += fails;
  std::map<std::string, int> skip_reasons;
  for (auto& r : results) if (r.status == Status::skipped) ++skip_reasons[r.reason];
  for (auto& [why, k] : skip_reasons) out += fmt::format("\nSKIPPED {} x: {}", k, why);
  if (!skip_reasons.empty()) out += "\n";
  // One result per case and backend; its status is the worst of its checks.
  out += fmt::format("\n{} case runs: {} passed, {} failed, {} skipped, {} mistrusted, {} errors\n", results.size(),
                     n[0], n[1], n[2], n[3], n[4]);
  return out;
}

namespace {
/// JSON has no NaN or infinity: those become the strings "nan", "inf", "-inf".
nlohmann::json number_json(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}
nlohmann::json worst_json(const Worst& w) {
  return {{"value", number_json(w.value)}, {"coords", w.coords}, {"got", number_json(w.got)},
          {"exact", std::isnan(w.exact) ? std::string("nan") : fmt::format("{:.21Lg}", w.exact)},
          {"output", w.output.empty() ? "y" : w.output}};
}
}  // namespace

std::string format_json(const std::vector<CaseResult>& results) {
  nlohmann::json j;
  int n[5] = {};
  for (auto& r : results) ++n[static_cast<int>(r.status)];
  j["summary"] = {{"checks", results.size()}, {"passed", n[0]}, {"failed", n[1]}, {"skipped", n[2]},
                  {"mistrusted", n[3]}, {"errors", n[4]}, {"exit_code", exit_code(results)}};
  j["layers"] = nlohmann::json::array();
  for (auto& r : summarize(results))
    j["layers"].push_back({{"layer", r.layer}, {"op", r.op}, {"backend", r.backend}, {"dtype", r.dtype}, {"cases", r.cases},
                           {"passed", r.passed}, {"failed", r.failed}, {"skipped", r.skipped}, {"mistrusted", r.mistrusted},
                           {"errors", r.errors}, {"max_abs", number_json(r.max_abs)}, {"max_ulp", number_json(r.max_ulp)},
                           {"max_stab", number_json(r.max_stab)}, {"verdict", r.verdict()}});
  j["cases"] = nlohmann::json::array();
  for (auto& r : results) {
    nlohmann::json c = {{"case", r.cs->name}, {"layer", r.cs->layer}, {"file", r.cs->file}, {"line", r.cs->line},
                        {"op", to_string(r.cs->problem.op)}, {"dtype", dtype_name(r.cs->problem.out_dtype)},
                        {"backend", r.backend}, {"status", to_string(r.status)}, {"repro", r.repro}};
    if (!r.reason.empty()) c["reason"] = r.reason;
    if (!r.cs->seeds.empty()) c["seeds"] = r.cs->seeds;
    if (r.metrics) {
      c["metrics"] = {{"abs", worst_json(r.metrics->abs)}, {"rel", worst_json(r.metrics->rel)},
                      {"ulp", worst_json(r.metrics->ulp)}, {"stab", worst_json(r.metrics->stab)},
                      {"nmse", number_json(r.metrics->nmse)}};
      c["gate"] = {{"metric", to_string(r.cs->gate.metric)}, {"max", r.cs->gate.max}, {"source", r.cs->gate.source}};
      if (r.output_metrics.size() > 1) {  // ops with several outputs: each one's error too
        c["outputs"] = nlohmann::json::object();
        for (auto& [name, m] : r.output_metrics)
          c["outputs"][name] = {{"abs", worst_json(m.abs)}, {"rel", worst_json(m.rel)}, {"ulp", worst_json(m.ulp)},
                                {"stab", worst_json(m.stab)}, {"nmse", number_json(m.nmse)}};
      }
    }
    c["checks"] = nlohmann::json::array();
    for (auto& k : r.checks) c["checks"].push_back({{"name", k.name}, {"status", to_string(k.status)}, {"detail", k.detail}});
    j["cases"].push_back(std::move(c));
  }
  return j.dump(2) + "\n";
}

std::string format_junit(const std::vector<CaseResult>& results) {
  pugi::xml_document doc;
  auto decl = doc.append_child(pugi::node_declaration);
  decl.append_attribute("version") = "1.0";
  decl.append_attribute("encoding") = "UTF-8";
  auto suites = doc.append_child("testsuites");
  suites.append_attribute("name") = "normcheck";
  std::map<std::string, pugi::xml_node> by_layer;
  std::map<std::string, std::array<int, 4>> counts;  // tests, failures, errors, skipped
  for (auto& r : results) {
    auto [it, fresh] = by_layer.emplace(r.cs->layer, pugi::xml_node());
    if (fresh) {
      it->second = suites.append_child("testsuite");
      it->second.append_attribute("name") = r.cs->layer.c_str();
    }
    auto tc = it->second.append_child("testcase");
    tc.append_attribute("classname") = (r.cs->layer + "." + r.backend).c_str();
    tc.append_attribute("name") = (r.cs->name + " [" + r.backend + "]").c_str();
    tc.append_attribute("file") = r.cs->file.c_str();
    tc.append_attribute("line") = r.cs->line;
    tc.append_attribute("time") = r.seconds;
    auto& cnt = counts[r.cs->layer];
    ++cnt[0];
    std::string text;
    for (auto& k : r.checks) text += fmt::format("{} {}: {}\n", to_string(k.status), k.name, k.detail);
    text += "rerun: " + r.repro + "\n";
    if (r.status == Status::failed) {
      ++cnt[1];
      auto f = tc.append_child("failure");
      f.append_attribute("message") = "check failed";
      f.text().set(text.c_str());
    } else if (r.status == Status::error) {
      ++cnt[2];
      auto f = tc.append_child("error");
      f.append_attribute("message") = r.reason.c_str();
      f.text().set((r.reason + "\n" + text).c_str());
    } else if (r.status == Status::skipped) {
      ++cnt[3];
      tc.append_child("skipped").append_attribute("message") = r.reason.c_str();
    } else {
      tc.append_child("system-out").text().set(text.c_str());
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

void write_atomically(const std::string& path, const std::string& text) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  fs::path tmp = target;
  tmp += fmt::format(".tmp.{}", static_cast<long>(::getpid()));
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw std::runtime_error(fmt::format("{}: cannot write: {}", tmp.string(), std::strerror(errno)));
    f << text;
    f.flush();
    if (!f) {
      const std::string why = std::strerror(errno);
      std::error_code ec;
      fs::remove(tmp, ec);
      throw std::runtime_error(fmt::format("{}: write failed: {}", tmp.string(), why));
    }
  }
  std::error_code ec;
  fs::rename(tmp, target, ec);
  if (ec) {
    const std::string why = ec.message();
    fs::remove(tmp, ec);
    throw std::runtime_error(fmt::format("{}: cannot replace: {}", path, why));
  }
}

}  // namespace normcheck
