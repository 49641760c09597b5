#include "checks/golden.hpp"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ops/reference.hpp"
#include "core/atomic_file.hpp"

namespace normcheck {

namespace {
namespace fs = std::filesystem;
constexpr std::int64_t kMaxListed = 4096;

std::string hex(double v) {
  if (std::isnan(v)) return "nan";
  return fmt::format("{:a}", v);
}

std::string digest(const Tensor& t) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a 64
  const auto* b = static_cast<const unsigned char*>(t.data());
  for (std::size_t i = 0; i < t.nbytes(); ++i) { h ^= b[i]; h *= 1099511628211ull; }
  return fmt::format("fnv1a64:{:016x}", h);
}

nlohmann::json outputs_json(const Case& cs) {
  nlohmann::json j;
  j["op"] = to_string(cs.problem.op);
  j["dtype"] = dtype_name(cs.problem.out_dtype);
  j["precision_bits"] = reference::working_bits(cs.problem);
  if (!cs.seeds.empty()) j["seeds"] = cs.seeds;
  for (auto& [name, out] : reference::evaluate_exact(cs.problem)) {
    // Golden files hold the outputs every backend must return; the optional ones (saved
    // statistics) are checked by their tests and literal expectations instead.
    if (is_optional_output(cs.problem, name)) continue;
    nlohmann::json o;
    const Tensor rounded = out.rounded();
    o["shape"] = rounded.shape();
    o["digest"] = digest(rounded);
    if (rounded.size() <= kMaxListed) {
      std::vector<std::string> v;
      for (std::int64_t i = 0; i < rounded.size(); ++i) v.push_back(hex(rounded.get(i)));
      o["values"] = v;
    }
    j["outputs"][name] = o;
  }
  return j;
}
}  // namespace

namespace {
/// A case file's path split at its first folder named cases: {the folder holding cases/, the
/// path inside cases/}. CaseError when there is none.
std::pair<fs::path, fs::path> split_at_cases(const std::string& case_file) {
  const fs::path p = fs::path(case_file).lexically_normal();
  fs::path root, rel;
  bool found = false;
  for (auto it = p.begin(); it != p.end(); ++it) {
    if (!found && *it == "cases") { found = true; continue; }
    (found ? rel : root) /= *it;
  }
  if (!found || rel.empty()) throw CaseError(case_file, 0, "path", "golden files exist only for case files under a folder named cases/");
  return {root, rel};
}
}  // namespace

std::string golden_path(const std::string& case_file) {
  auto [root, rel] = split_at_cases(case_file);
  rel.replace_extension(".json");
  return (root / "golden" / rel).string();
}

namespace {

/// The shape of a golden file: {"cases": {NAME: {"outputs": {OUT: {"digest": "...",
/// "values": ["hex", ...]?}}}}}. Anything else is a malformed file: UsageError naming the
/// file and the field (it gave "internal error", exit 3: issue 19).
void check_schema(const nlohmann::json& g, const std::string& gp) {
  auto bad = [&](const std::string& field, const std::string& what) {
    throw UsageError(fmt::format("{}: {}: {}", gp, field, what));
  };
  if (!g.is_object()) bad("(top level)", "expected an object with \"cases\"");
  if (!g.contains("cases") || !g["cases"].is_object()) bad("cases", "expected an object of cases by name");
  for (auto& [cn, c] : g["cases"].items()) {
    const std::string f = "cases." + cn;
    if (!c.is_object() || !c.contains("outputs") || !c["outputs"].is_object()) bad(f + ".outputs", "expected an object of outputs by name");
    for (auto& [on, o] : c["outputs"].items()) {
      const std::string of = f + ".outputs." + on;
      if (!o.is_object() || !o.contains("digest") || !o["digest"].is_string()) bad(of + ".digest", "expected a digest string");
      if (o.contains("values")) {
        if (!o["values"].is_array()) bad(of + ".values", "expected an array of hex floats");
        for (auto& v : o["values"])
          if (!v.is_string()) bad(of + ".values", "expected an array of hex floats (strings)");
      }
    }
  }
}

}  // namespace

std::vector<GoldenMismatch> check_golden(const std::string& case_file, std::int64_t* compared) {
  std::vector<GoldenMismatch> out;
  const std::string gp = golden_path(case_file);
  std::ifstream f(gp);
  if (!f) return {{case_file, "", fmt::format("no golden file {} (create it with: normcheck golden --update {})", gp, case_file)}};
  nlohmann::json g;
  try {
    g = nlohmann::json::parse(f);
  } catch (const std::exception& e) {
    return {{case_file, "", fmt::format("{}: not valid JSON: {}", gp, e.what())}};
  }
  check_schema(g, gp);
  const auto cases = parse_case_file(case_file);
  std::set<std::string> names;
  for (const auto& cs : cases) names.insert(cs.name);
  for (auto& [name, entry] : g["cases"].items())
    if (!names.count(name)) out.push_back({case_file, name, fmt::format("in {} but not in the case file (deleted or renamed: update the golden file)", gp)});
  for (const auto& cs : cases) {
    if (!g["cases"].contains(cs.name)) { out.push_back({case_file, cs.name, fmt::format("missing from {}", gp)}); continue; }
    if (compared) ++*compared;
    const nlohmann::json now = outputs_json(cs);
    const nlohmann::json& was = g["cases"][cs.name];
    for (auto& [name, o] : was["outputs"].items())
      if (!now["outputs"].contains(name)) out.push_back({case_file, cs.name, fmt::format("output {} is in {} but the reference no longer gives it", name, gp)});
    for (auto& [name, o] : now["outputs"].items()) {
      if (!was["outputs"].contains(name)) { out.push_back({case_file, cs.name, fmt::format("output {} missing", name)}); continue; }
      const auto& w = was["outputs"][name];
      if (w["digest"] != o["digest"] || w.value("values", nlohmann::json()) != o.value("values", nlohmann::json())) {
        std::string where;
        if (w.contains("values") && o.contains("values"))
          for (std::size_t i = 0; i < o["values"].size() && i < w["values"].size(); ++i)
            if (o["values"][i] != w["values"][i]) {
              where = fmt::format(" first at flat index {}: golden {} now {}", i, w["values"][i].get<std::string>(),
                                  o["values"][i].get<std::string>());
              break;
            }
        out.push_back({case_file, cs.name, fmt::format("output {} differs from {}{}", name, gp, where)});
      }
    }
  }
  return out;
}

std::string write_golden(const std::string& case_file, const std::string& version) {
  const std::string gp = golden_path(case_file);
  nlohmann::json g;
  g["generator"] = fmt::format("normcheck {} golden --update", version);
  // "cases/<op>/<file>.toml", whichever way the file was named (a path from the working
  // folder or the absolute one `golden --update` finds alone): rewriting an unchanged file
  // leaves it as it was.
  g["source"] = (fs::path("cases") / split_at_cases(case_file).second).generic_string();
  g["rounding"] = "MPFR reference rounded once to nearest even; values as C99 hex floats";
  for (const auto& cs : parse_case_file(case_file)) g["cases"][cs.name] = outputs_json(cs);
  fs::create_directories(fs::path(gp).parent_path());
  write_atomically(gp, g.dump(1) + "\n");
  return gp;
}

}  // namespace normcheck
