#include "report/side_by_side.hpp"

#include <algorithm>
#include <map>

#include <fmt/color.h>
#include <fmt/format.h>

#include "report/report.hpp"

namespace normcheck {

namespace {

std::string num(double v) { return v == 0 ? "0" : fmt::format("{:.3g}", v); }

/// A header label for a backend: its name when short, else prefix + the basename of its
/// last path-like word ("cmd:onnxruntime_backend.py", "plugin:libfoo.so").
std::string short_label(const std::string& name) {
  if (name.size() <= 20) return name;
  const std::size_t colon = name.find(':');
  const std::string prefix = colon == std::string::npos ? "" : name.substr(0, colon + 1);
  std::string best;
  std::string word;
  auto consider = [&] {
    if (word.find('/') != std::string::npos || word.find('.') != std::string::npos) best = word;
    word.clear();
  };
  for (char c : name.substr(prefix.size())) {
    if (c == ' ' || c == '\'' || c == '"') consider();
    else word += c;
  }
  consider();
  if (best.empty()) return name.substr(0, 20);
  const std::size_t slash = best.rfind('/');
  return prefix + (slash == std::string::npos ? best : best.substr(slash + 1));
}

}  // namespace

std::string format_side_by_side(const Report& rep, bool color) {
  const auto rows = summarize(rep);
  std::vector<std::string> backends;
  for (auto& r : rep.cases)
    if (std::find(backends.begin(), backends.end(), r.backend) == backends.end()) backends.push_back(r.backend);
  // (layer, dtype) rows in the order summarize() gives them.
  std::vector<std::pair<std::string, std::string>> keys;
  std::map<std::pair<std::string, std::string>, std::string> op_of;
  std::map<std::tuple<std::string, std::string, std::string>, const LayerRow*> cell;
  for (auto& r : rows) {
    auto k = std::make_pair(r.layer, r.dtype);
    if (!op_of.count(k)) keys.push_back(k), op_of[k] = r.op;
    cell[{r.layer, r.dtype, r.backend}] = &r;
  }
  auto text = [](const LayerRow& r) {
    std::string v = r.verdict();
    std::string extra;
    if (r.failed) extra += fmt::format(" {}F", r.failed);
    if (r.errors) extra += fmt::format(" {}E", r.errors);
    if (r.skipped && v != "SKIP") extra += fmt::format(" {}S", r.skipped);
    if (v == "SKIP") return std::string("SKIP");
    return fmt::format("{} / {} {}{}", num(r.max_ulp), num(r.max_stab), v, extra);
  };
  std::size_t wl = 5, wo = 2;
  for (auto& [k, op] : op_of) wl = std::max(wl, k.first.size()), wo = std::max(wo, op.size());
  std::vector<std::string> labels;
  std::vector<std::size_t> w;
  for (auto& b : backends) {
    labels.push_back(short_label(b));
    std::size_t width = labels.back().size();
    for (auto& k : keys)
      if (auto it = cell.find({k.first, k.second, b}); it != cell.end()) width = std::max(width, text(*it->second).size());
    w.push_back(width);
  }
  std::string out = fmt::format("{:<{}}  {:<{}}  {:<5}", "layer", wl, "op", wo, "dtype");
  for (std::size_t i = 0; i < backends.size(); ++i) out += fmt::format("  {:<{}}", labels[i], w[i]);
  while (!out.empty() && out.back() == ' ') out.pop_back();
  out += "\n";
  out += fmt::format("{:<{}}  {:<{}}  {:<5}", "", wl, "", wo, "");
  for (std::size_t i = 0; i < backends.size(); ++i) out += fmt::format("  {:<{}}", "max ulp / max stab", w[i]);
  while (!out.empty() && out.back() == ' ') out.pop_back();
  out += "\n";
  for (auto& k : keys) {
    out += fmt::format("{:<{}}  {:<{}}  {:<5}", k.first, wl, op_of[k], wo, k.second);
    for (std::size_t i = 0; i < backends.size(); ++i) {
      auto it = cell.find({k.first, k.second, backends[i]});
      std::string t = it == cell.end() ? "-" : text(*it->second);
      const std::string pad(w[i] - t.size(), ' ');
      if (color && it != cell.end()) {
        const std::string v = it->second->verdict();
        const auto style = v == "PASS" ? fmt::fg(fmt::terminal_color::green)
                           : v == "SKIP" ? fmt::fg(fmt::terminal_color::yellow)
                                         : fmt::fg(fmt::terminal_color::red) | fmt::emphasis::bold;
        t = fmt::format(style, "{}", t);
      }
      out += "  " + t + pad;
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += "\n";
  }
  bool legend = false;
  for (std::size_t i = 0; i < backends.size(); ++i)
    if (labels[i] != backends[i]) {
      if (!legend) out += "\n";
      legend = true;
      out += fmt::format("{} = {}\n", labels[i], backends[i]);
    }
  out += "\nF failed, E errors, S skipped cases of the row.\n";
  return out + format_details(rep, color);
}

}  // namespace normcheck
