#include "cli/zoo.hpp"

#include <filesystem>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "spec/backend.hpp"
#include "cases/case.hpp"
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
};

std::shared_ptr<ZooCommand> add_zoo_command(CLI::App& app) {
  auto z = std::make_shared<ZooCommand>();
  z->sub = app.add_subcommand("zoo", "kill table and probe table of every mutant (deliberately wrong kernel)");
  z->sub->add_option("paths", z->paths, "case files or folders (default: the bundled cases)");
  z->sub->add_flag("--no-probe", z->no_probe, "only the kill table");
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
  // One run with every mutant: the reference is evaluated once per case and shared.
  std::vector<std::unique_ptr<Backend>> backends;
  for (const auto& m : mutant_names()) backends.push_back(make_backend("mutant:" + m));
  const auto results = run_cases(cases, backends, {});
  std::map<std::string, std::vector<std::string>> killed;
  std::map<std::string, int> ran;
  for (const auto& r : results) {
    if (r.status != Status::skipped) ++ran[r.backend];
    if (r.status == Status::failed || r.status == Status::error) killed[r.backend].push_back(r.cs->name);
  }
  int survivors = 0;
  fmt::print("{:<34} {:>7} {:>7}  {}\n", "mutant", "killed", "of", "first failing cases");
  for (const auto& b : backends) {
    const auto& k = killed[b->name()];
    survivors += k.empty();
    std::vector<std::string> first(k.begin(), k.begin() + std::min<std::size_t>(k.size(), 3));
    fmt::print("{:<34} {:>7} {:>7}  {}{}\n", b->name(), k.size(), ran[b->name()], k.empty() ? "SURVIVED" : fmt::format("{}", fmt::join(first, ", ")),
               k.size() > 3 ? ", ..." : "");
  }
  fmt::print("\n{} mutants, {} killed, {} survived\n", backends.size(), backends.size() - survivors, survivors);
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
