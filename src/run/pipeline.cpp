#include "run/pipeline.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "checks/dump.hpp"
#include "checks/runner.hpp"
#include "report/report.hpp"
#include "run/expectations.hpp"
#include "run/progress.hpp"
#include "run/resolve.hpp"

namespace normcheck {

namespace {
/// The golden folder (a folder named golden beside a cases/ folder) that holds `d`, or empty.
std::filesystem::path golden_holding(std::filesystem::path d) {
  std::error_code ec;
  for (; !d.empty() && d != d.root_path(); d = d.parent_path())
    if (d.filename() == "golden" && std::filesystem::is_directory(d.parent_path() / "cases", ec)) return d;
  return {};
}
}  // namespace

void check_output_path(const std::string& opt, const std::string& path, const std::vector<std::string>& inputs) {
  namespace fs = std::filesystem;
  if (path.empty()) return;
  std::error_code ec;
  const fs::path p = fs::weakly_canonical(path, ec);
  const fs::path parent = (ec ? fs::path(path) : p).parent_path();
  if (fs::is_directory(p, ec)) throw UsageError(fmt::format("{} {}: is a folder", opt, path));
  if (!parent.empty() && !fs::is_directory(parent, ec))
    throw UsageError(fmt::format("{} {}: the folder {} does not exist", opt, path, parent.string()));
  if (!parent.empty() && access(parent.c_str(), W_OK) != 0)
    throw UsageError(fmt::format("{} {}: the folder {} is not writable", opt, path, parent.string()));
  for (const auto& in : inputs)
    if (fs::weakly_canonical(in, ec) == p) throw UsageError(fmt::format("{} {}: that is an input of this run", opt, path));
  if (const fs::path g = golden_holding(parent); !g.empty())
    throw UsageError(fmt::format("{} {}: inside {}, the golden files (rewrite them with normcheck golden --update)", opt,
                                 path, g.string()));
}

Report run(const RunRequest& req) {
  // 1. select
  Selection sel = select_cases(req.select);
  // Refuse what cannot work before anything runs: outputs, expectations, backends, dumps.
  std::vector<std::string> inputs;
  for (auto& c : sel.cases) inputs.push_back(c.file);
  if (!req.expect_failures.empty()) inputs.push_back(req.expect_failures);
  for (const auto& [opt, path] : req.outputs) check_output_path(opt, path, inputs);
  // Two reports to one file: the last written replaced the other (--json r --junit r kept the
  // JUnit file alone; false-pass audit).
  for (std::size_t i = 0; i < req.outputs.size(); ++i)
    for (std::size_t j = i + 1; j < req.outputs.size(); ++j) {
      const auto& [oi, pi] = req.outputs[i];
      const auto& [oj, pj] = req.outputs[j];
      auto canon = [](const std::string& path) {  // (a path that cannot be resolved: its absolute spelling)
        std::error_code ec;
        const auto c = std::filesystem::weakly_canonical(path, ec);
        return ec ? std::filesystem::absolute(path, ec).lexically_normal() : c;
      };
      if (!pi.empty() && !pj.empty() && canon(pi) == canon(pj))
        throw UsageError(fmt::format("{} {} and {} {}: the same file (each report needs its own)", oi, pi, oj, pj));
    }
  std::vector<Expectation> expectations;
  if (!req.expect_failures.empty()) expectations = read_expectations(req.expect_failures);
  if (!req.dump_dir.empty()) {
    // The dump replaces DIR/<case>__<backend>/ folders: never inside the golden files, never a
    // report's own path (checked before the folder is created).
    std::error_code ec;
    const auto dump = std::filesystem::weakly_canonical(req.dump_dir, ec);
    if (const auto g = golden_holding(ec ? std::filesystem::absolute(req.dump_dir) : dump); !g.empty())
      throw UsageError(fmt::format("--dump-failures {}: inside {}, the golden files", req.dump_dir, g.string()));
    for (const auto& [opt, path] : req.outputs)
      if (!path.empty() && std::filesystem::weakly_canonical(path, ec) == dump)
        throw UsageError(fmt::format("--dump-failures {} and {} {}: the same path", req.dump_dir, opt, path));
    std::filesystem::create_directories(req.dump_dir, ec);
    if (!std::filesystem::is_directory(req.dump_dir))
      throw UsageError(fmt::format("--dump-failures {}: not a folder that can be created{}", req.dump_dir,
                                   ec ? ": " + ec.message() : ""));
  }
  // 2. resolve
  std::map<std::string, std::string> recorded;  // source -> the first case recording it
  for (auto& c : sel.cases)
    for (auto& [k, v] : c.recorded) recorded.emplace(k, fmt::format("{}:{}: case.{}", c.file, c.line, c.name));
  BackendSet bs = resolve_backends(req.backends, recorded, req.limits, req.strict);
  // 3. execute, with the observers: progress, failure dumps
  RunOptions opt;
  opt.program = req.program;
  double heartbeat = 10;
  if (const char* h = std::getenv("NORMCHECK_HEARTBEAT_S"); h && *h) heartbeat = std::max(0.0, std::atof(h));
  Progress progress(Progress::choose(!req.progress), sel.cases.size() * bs.backends.size(), heartbeat);
  opt.observers.push_back([&](CaseResult& r, const Evaluation*) {
    progress.step(fmt::format("{} on {}", r.cs->layer, r.backend), r.status == Status::failed || r.status == Status::error);
  });
  if (!req.dump_dir.empty()) opt.observers.push_back(failure_dumper(req.dump_dir));
  RunInfo info;
  info.version = NORMCHECK_VERSION;
  info.suite = sel.suite;
  info.suite_cases = sel.suite_cases;
  info.shard_index = sel.shard_index;
  info.shard_count = sel.shard_count;
  info.strict = req.strict;
  std::string names;
  for (auto& r : bs.records) names += r.name + "\n";
  info.fingerprint = fingerprint(sel.cases_fingerprint + "\n" + names);
  info.backends = bs.records;
  if (req.started) {  // the placeholder: no cases, the verdict ERROR until the run's end
    Report placeholder = make_report({}, info);
    placeholder.expectations = req.expect_failures;
    placeholder.incomplete = true;
    req.started(placeholder);
  }
  const auto results = run_cases(sel.cases, bs.backends, opt);
  progress.finish();
  // 4. report
  Report rep = make_report(results, std::move(info));
  if (!req.expect_failures.empty()) apply_expectations(rep, expectations, sel.names_in_files, req.expect_failures);
  return rep;
}

}  // namespace normcheck
