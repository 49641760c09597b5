#include "report/merge.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "core/json_bounded.hpp"

namespace normcheck {

namespace {

/// A metric value as format_json writes it: a number, or "nan" / "inf" / "-inf".
double metric_value(const nlohmann::json& v) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    const auto s = v.get<std::string>();
    if (s == "inf") return HUGE_VAL;
    if (s == "-inf") return -HUGE_VAL;
    return NAN;
  }
  return 0;
}

nlohmann::json number_json(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

}  // namespace

nlohmann::json merge_reports(const std::vector<std::string>& paths) {
  std::vector<std::pair<std::string, std::string>> texts;
  for (const auto& path : paths) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) throw std::runtime_error(fmt::format("{}: not a readable file", path));
    std::ifstream f(path, std::ios::binary);
    if (!f) throw std::runtime_error(fmt::format("{}: cannot read", path));
    std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (f.bad()) throw std::runtime_error(fmt::format("{}: cannot read", path));
    texts.emplace_back(path, std::move(text));
  }
  return merge_report_texts(texts);
}

nlohmann::json merge_report_texts(const std::vector<std::pair<std::string, std::string>>& reports) {
  nlohmann::json cases = nlohmann::json::array();
  std::vector<std::string> paths;
  for (const auto& [path, text] : reports) {
    paths.push_back(path);
    nlohmann::json j;
    try {
      j = parse_json_bounded(text, path);
    } catch (const JsonError& e) {
      throw std::runtime_error(fmt::format("{}: {}", path, e.detail));
    }
    if (!j.is_object() || !j.contains("cases") || !j["cases"].is_array())
      throw std::runtime_error(fmt::format("{}: not a normcheck JSON report (no \"cases\" array)", path));
    for (auto& c : j["cases"]) {
      if (!c.is_object()) throw std::runtime_error(fmt::format("{}: a case entry is not an object", path));
      for (const char* k : {"case", "layer", "op", "dtype", "backend", "status"})
        if (!c.contains(k) || !c[k].is_string())
          throw std::runtime_error(fmt::format("{}: a case entry lacks the string field \"{}\"", path, k));
      static const std::set<std::string> kStatuses{"PASSED", "FAILED", "SKIPPED", "MISTRUSTED", "ERROR"};
      if (!kStatuses.count(c["status"].get<std::string>()))
        throw std::runtime_error(fmt::format("{}: case {} has the unknown status \"{}\"", path, c["case"].get<std::string>(),
                                             c["status"].get<std::string>()));
      if (c.contains("metrics")) {
        const auto& m = c["metrics"];
        bool ok = m.is_object();
        for (const char* k : {"abs", "ulp", "stab"})
          ok = ok && m.contains(k) && m[k].is_object() && m[k].contains("value") && (m[k]["value"].is_number() || m[k]["value"].is_string());
        if (!ok) throw std::runtime_error(fmt::format("{}: case {} has malformed metrics", path, c["case"].get<std::string>()));
      }
      // format_report_table reads these: strings, and checks of {name, status, detail} strings.
      for (const char* k : {"reason", "repro"})
        if (c.contains(k) && !c[k].is_string())
          throw std::runtime_error(fmt::format("{}: case {}: field \"{}\" is not a string", path, c["case"].get<std::string>(), k));
      if (c.contains("checks")) {
        bool ok = c["checks"].is_array();
        if (ok)
          for (const auto& k : c["checks"])
            for (const char* f : {"name", "status", "detail"}) ok = ok && k.is_object() && k.contains(f) && k[f].is_string();
        if (!ok) throw std::runtime_error(fmt::format("{}: case {} has malformed checks", path, c["case"].get<std::string>()));
      }
      cases.push_back(c);
    }
  }
  std::map<std::string, int> n{{"PASSED", 0}, {"FAILED", 0}, {"SKIPPED", 0}, {"MISTRUSTED", 0}, {"ERROR", 0}};
  nlohmann::json layers = nlohmann::json::array();
  std::map<std::string, std::size_t> index;
  for (const auto& c : cases) {
    const std::string status = c["status"];
    ++n[status];
    const std::string key = c["layer"].get<std::string>() + "\x1f" + c["backend"].get<std::string>() + "\x1f" + c["dtype"].get<std::string>();
    auto [it, fresh] = index.emplace(key, layers.size());
    if (fresh)
      layers.push_back({{"layer", c["layer"]}, {"op", c["op"]}, {"backend", c["backend"]}, {"dtype", c["dtype"]}, {"cases", 0},
                        {"passed", 0}, {"failed", 0}, {"skipped", 0}, {"mistrusted", 0}, {"errors", 0},
                        {"max_abs", 0.0}, {"max_ulp", 0.0}, {"max_stab", 0.0}});
    auto& row = layers[it->second];
    row["cases"] = row["cases"].get<int>() + 1;
    const char* field = status == "PASSED" ? "passed" : status == "FAILED" ? "failed" : status == "SKIPPED" ? "skipped"
                        : status == "MISTRUSTED" ? "mistrusted" : "errors";
    row[field] = row[field].get<int>() + 1;
    if (c.contains("metrics"))
      for (const char* m : {"abs", "ulp", "stab"}) {
        const double v = metric_value(c["metrics"][m]["value"]);
        const double was = metric_value(row[std::string("max_") + m]);
        if (v > was || std::isnan(v)) row[std::string("max_") + m] = number_json(v);
      }
  }
  for (auto& row : layers) {
    const int errors = row["errors"], failed = row["failed"], passed = row["passed"], mistrusted = row["mistrusted"];
    row["verdict"] = errors ? "ERROR" : failed ? "FAIL" : passed + mistrusted == 0 ? "SKIP" : "PASS";
  }
  std::stable_sort(layers.begin(), layers.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
    return a["layer"].get<std::string>() < b["layer"].get<std::string>();
  });
  const int exit_code = n["ERROR"] ? 3 : n["FAILED"] ? 1 : 0;
  nlohmann::json out;
  out["summary"] = {{"checks", cases.size()}, {"passed", n["PASSED"]}, {"failed", n["FAILED"]}, {"skipped", n["SKIPPED"]},
                    {"mistrusted", n["MISTRUSTED"]}, {"errors", n["ERROR"]}, {"exit_code", exit_code},
                    {"merged_from", paths}};
  out["layers"] = layers;
  out["cases"] = cases;
  return out;
}

std::string format_report_table(const nlohmann::json& report) {
  std::size_t wl = 5, wb = 7;
  for (auto& r : report["layers"]) {
    wl = std::max(wl, r["layer"].get<std::string>().size());
    wb = std::max(wb, r["backend"].get<std::string>().size());
  }
  auto num = [](const nlohmann::json& v) {
    const double d = metric_value(v);
    return d == 0 ? std::string("0") : fmt::format("{:.3g}", d);
  };
  std::string out = fmt::format("{:<{}}  {:<14}  {:<{}}  {:<5} {:>5}  {:>10}  {:>10}  {:>10}  {}\n", "layer", wl, "op", "backend",
                                wb, "dtype", "cases", "max abs", "max ulp", "max stab", "verdict");
  for (auto& r : report["layers"])
    out += fmt::format("{:<{}}  {:<14}  {:<{}}  {:<5} {:>5}  {:>10}  {:>10}  {:>10}  {}\n", r["layer"].get<std::string>(), wl,
                       r["op"].get<std::string>(), r["backend"].get<std::string>(), wb, r["dtype"].get<std::string>(),
                       r["cases"].get<int>(), num(r["max_abs"]), num(r["max_ulp"]), num(r["max_stab"]), r["verdict"].get<std::string>());
  for (auto& c : report["cases"]) {
    const std::string st = c["status"];
    if (st != "FAILED" && st != "ERROR") continue;
    out += fmt::format("\n{} {} on {}\n", st, c["case"].get<std::string>(), c["backend"].get<std::string>());
    if (c.contains("reason")) out += fmt::format("  {}\n", c["reason"].get<std::string>());
    if (c.contains("checks"))
      for (auto& k : c["checks"])
        if (k["status"] != "PASSED") out += fmt::format("  {} {}: {}\n", k["status"].get<std::string>(), k["name"].get<std::string>(),
                                                        k["detail"].get<std::string>());
    if (c.contains("repro")) out += fmt::format("  rerun: {}\n", c["repro"].get<std::string>());
  }
  const auto& s = report["summary"];
  out += fmt::format("\n{} case runs: {} passed, {} failed, {} skipped, {} mistrusted, {} errors\n", s["checks"].get<std::size_t>(),
                     s["passed"].get<int>(), s["failed"].get<int>(), s["skipped"].get<int>(), s["mistrusted"].get<int>(),
                     s["errors"].get<int>());
  return out;
}

}  // namespace normcheck
