#include "cli/zoo.hpp"

#include <filesystem>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "spec/backend.hpp"
#include "cases/case.hpp"
#include "cases/matrix.hpp"
#include "checks/probe.hpp"
#include "checks/runner.hpp"
#include "ops/common/mutants.hpp"
#include "run/data_dir.hpp"
#include "backends/registry.hpp"


namespace normcheck::cli {

struct ZooCommand {
  CLI::App* sub = nullptr;
  std::vector<std::string> paths;
  bool no_probe = false;
  std::string tier = "quick";
};

std::shared_ptr<ZooCommand> add_zoo_command(CLI::App& app) {
  auto z = std::make_shared<ZooCommand>();
  z->sub = app.add_subcommand("zoo", "kill table and probe table of every mutant (deliberately wrong kernel)");
  z->sub->add_option("paths", z->paths, "case files or folders (default: the bundled cases)");
  z->sub->add_flag("--no-probe", z->no_probe, "only the kill table");
  z->sub->add_option("--tier", z->tier, "coverage matrix tiers to kill with: quick (default) | full (quick and full)")
      ->check(CLI::IsMember({"quick", "full"}));
  return z;
}

std::optional<int> run_zoo_command(const ZooCommand& z) {
  if (!z.sub || !*z.sub) return std::nullopt;
  std::vector<std::string> paths = z.paths;
  if (paths.empty()) paths.push_back(bundled_cases_dir());
  std::vector<Case> cases;
  try {
    for (const auto& f : find_case_files(paths))
      for (auto& c : parse_case_file(f)) cases.push_back(std::move(c));
  } catch (const CaseError& e) {
    fmt::print(stderr, "{}\n", e.what());
    return 2;
  }
  if (cases.empty()) {  // no case cannot kill anything: not a verdict on the mutants
    fmt::print(stderr, "normcheck: zoo: no case files (*.toml) found\n");
    return 2;
  }
  // One run with every mutant per source: the reference is evaluated once per case and
  // shared. Sources: the case files, and the coverage matrix's tiers (a kill per tier).
  std::vector<std::unique_ptr<Backend>> backends;
  for (const auto& m : mutant_names()) backends.push_back(make_backend("mutant:" + m));
  std::vector<std::pair<std::string, std::vector<Case>>> sources{{"cases", std::move(cases)}};
  sources.emplace_back("matrix:quick", coverage_matrix(Tier::quick));
  if (z.tier == "full") sources.emplace_back("matrix:full", coverage_matrix(Tier::full));
  std::map<std::string, std::map<std::string, std::vector<std::string>>> killed;  // source -> backend -> cases
  std::map<std::string, std::map<std::string, int>> ran;
  for (auto& [src, cs] : sources)
    for (const auto& r : run_cases(cs, backends, {})) {
      if (r.status != Status::skipped) ++ran[src][r.backend];
      if (r.status == Status::failed || r.status == Status::error) killed[src][r.backend].push_back(r.cs->name);
    }
  int survivors = 0;
  std::string head = fmt::format("{:<34}", "mutant");
  for (auto& [src, cs] : sources) head += fmt::format(" {:>15}", src);
  fmt::print("{}  {}\n", head, "first failing cases");
  for (const auto& b : backends) {
    bool any = false;
    std::string row = fmt::format("{:<34}", b->name());
    std::vector<std::string> first;
    for (auto& [src, cs] : sources) {
      const auto& k = killed[src][b->name()];
      any = any || !k.empty();
      row += fmt::format(" {:>15}", fmt::format("{}/{}", k.size(), ran[src][b->name()]));
      for (std::size_t i = 0; i < k.size() && first.size() < 3; ++i) first.push_back(k[i]);
    }
    survivors += !any;
    fmt::print("{}  {}\n", row, any ? fmt::format("{}", fmt::join(first, ", ")) : std::string("SURVIVED"));
  }
  fmt::print("\n{} mutants, {} killed, {} survived (killed/evaluated per source)\n", backends.size(), backends.size() - survivors, survivors);
  if (!z.no_probe) {
    std::vector<ProbeResult> probes;
    for (Op op : {Op::layer_norm, Op::rms_norm})
      for (const auto& m : mutant_names()) {
        const auto fault = kernels::mutant::parse_fault(m);
        if (!fault || !kernels::mutant::supports(*fault, op)) continue;
        auto be = make_backend("mutant:" + m);
        try {
          probes.push_back(probe(*be, default_probe_options(op)));
        } catch (const std::exception& e) {
          fmt::print(stderr, "normcheck: probe of mutant:{} on {}: {}\n", m, to_string(op), e.what());
          return 3;
        }
      }
    fmt::print("\n{}", format_probe_summary(probes));
  }
  return survivors ? 1 : 0;
}

}  // namespace normcheck::cli
