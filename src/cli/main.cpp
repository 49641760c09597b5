// normcheck command line (CLI11). Exit codes: DESIGN.md "Exit codes".
#include <fnmatch.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <set>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cases/case.hpp"
#include "checks/golden.hpp"
#include "backends/external.hpp"
#include "report/side_by_side.hpp"
#include "checks/runner.hpp"
#include "cli/trace_compare.hpp"
#include "report/merge.hpp"
#include "report/report.hpp"
#include "cli/probe_commands.hpp"
#include "cli/zoo.hpp"

#ifndef NORMCHECK_VERSION
#define NORMCHECK_VERSION "0.0.0"
#endif
#ifndef NORMCHECK_CASES_DIR
#define NORMCHECK_CASES_DIR "cases"
#endif

namespace nc = normcheck;

namespace {

constexpr int kOk = 0, kBadInput = 2;

int usage_error(const std::string& msg) {
  fmt::print(stderr, "normcheck: {}\n", msg);
  return kBadInput;
}

/// Splits "a,b" lists given once or repeated, trimming blanks around each entry.
/// Throws std::invalid_argument for an empty entry ("a,,b", "").
std::vector<std::string> split_list(const std::vector<std::string>& in) {
  std::vector<std::string> out;
  for (auto& s : in) {
    std::size_t a = 0;
    while (true) {
      std::size_t b = s.find(',', a);
      if (b == std::string::npos) b = s.size();
      std::string item = s.substr(a, b - a);
      const auto first = item.find_first_not_of(" \t"), last = item.find_last_not_of(" \t");
      item = first == std::string::npos ? "" : item.substr(first, last - first + 1);
      if (item.empty()) throw std::invalid_argument(fmt::format("empty entry in '{}'", s));
      if (std::find(out.begin(), out.end(), item) == out.end()) out.push_back(item);
      if (b == s.size()) break;
      a = b + 1;
    }
  }
  return out;
}

bool glob_match(const std::string& pat, const std::string& s) { return fnmatch(pat.c_str(), s.c_str(), 0) == 0; }

struct RunArgs {
  std::vector<std::string> paths, backends, filters, case_names;
  std::string format = "table", output, dump_dir, program = "normcheck", shard;
  bool list = false, strict = false, no_color = false;
  double timeout = 60;
};

int cmd_run(const RunArgs& a) {
  if (a.format != "table" && a.format != "json" && a.format != "junit" && a.format != "side-by-side")
    return usage_error(fmt::format("--format: unknown '{}' (table | json | junit | side-by-side)", a.format));
  std::vector<nc::Case> cases;
  try {
    std::vector<std::string> paths = a.paths;
    if (paths.empty()) {
      // The bundled cases: ./cases when run from the source tree, else the configured folder.
      std::error_code ec;
      paths.push_back(std::filesystem::is_directory("cases", ec) ? "cases" : NORMCHECK_CASES_DIR);
    }
    const auto files = nc::find_case_files(paths);
    if (files.empty()) return usage_error("no case files (*.toml) found");
    for (const auto& f : files) {
      auto cs = nc::parse_case_file(f);
      for (auto& c : cs) {
        bool keep = a.filters.empty();
        for (auto& pat : a.filters)
          keep = keep || glob_match(pat, c.layer) || glob_match(pat, std::string(nc::to_string(c.problem.op))) || glob_match(pat, c.name);
        if (!a.case_names.empty()) {
          bool named = false;
          for (auto& n : a.case_names) named = named || n == c.name;
          keep = keep && named;
        }
        if (keep) cases.push_back(std::move(c));
      }
    }
  } catch (const nc::CaseError& e) {
    fmt::print(stderr, "{}\n", e.what());
    return kBadInput;
  }
  if (cases.empty()) return usage_error("no case matches the given --filter/--case in the selected files");
  if (!a.case_names.empty()) {
    for (auto& n : a.case_names) {
      bool found = false;
      for (auto& c : cases) found = found || c.name == n;
      if (!found) return usage_error(fmt::format("--case {}: no such case in the selected files", n));
    }
  }
  // Sharding (DESIGN.md "Scale"): --shard K/N, or GTEST_SHARD_INDEX / GTEST_TOTAL_SHARDS as
  // a CI matrix, a Kubernetes indexed Job or a Slurm array sets them; K is 0-based. Case i
  // of the selection (files sorted, cases in file order) runs on shard i mod N. A shard may
  // be empty (more shards than cases): that is not an error.
  {
    std::string spec = a.shard;
    const char* gi = std::getenv("GTEST_SHARD_INDEX");
    const char* gn = std::getenv("GTEST_TOTAL_SHARDS");
    if (spec.empty() && gi && gn && *gi && *gn) spec = fmt::format("{}/{}", gi, gn);
    if (!spec.empty()) {
      long k = -1, n = 0;
      char slash = 0, extra = 0;
      if (std::sscanf(spec.c_str(), "%ld%c%ld%c", &k, &slash, &n, &extra) != 3 || slash != '/' || n < 1 || k < 0 || k >= n)
        return usage_error(fmt::format("--shard '{}': expected K/N with 0 <= K < N (GTEST_SHARD_INDEX/GTEST_TOTAL_SHARDS)", spec));
      std::vector<nc::Case> mine;
      for (std::size_t i = 0; i < cases.size(); ++i)
        if (static_cast<long>(i % static_cast<std::size_t>(n)) == k) mine.push_back(std::move(cases[i]));
      cases = std::move(mine);
      if (const char* status = std::getenv("GTEST_SHARD_STATUS_FILE"); status && *status)  // gtest protocol: "I shard"
        if (std::FILE* sf = std::fopen(status, "w")) std::fclose(sf);
    }
  }
  if (a.list) {
    for (auto& c : cases)
      fmt::print("{}:{}  {}  layer={} op={} dtype={} x={}{}\n", c.file, c.line, c.name, c.layer, nc::to_string(c.problem.op),
                 nc::dtype_name(c.problem.out_dtype), nc::shape_str(c.problem.x().shape()),
                 c.recorded.empty() ? "" : fmt::format(" recorded={}", [&] { std::string s; for (auto& [k, v] : c.recorded) s += (s.empty() ? "" : ",") + k; return s; }()));
    return kOk;
  }
  std::set<std::string> recorded;
  for (auto& c : cases) for (auto& [k, v] : c.recorded) recorded.insert(k);
  std::vector<std::string> names;
  try {
    names = split_list(a.backends);
  } catch (const std::invalid_argument& e) {
    return usage_error(fmt::format("--backend: {}", e.what()));
  }
  if (names.empty()) {
    names = nc::default_backends();
    names.insert(names.end(), recorded.begin(), recorded.end());
  }
  std::vector<std::unique_ptr<nc::Backend>> backends;
  for (auto& n : names) {
    bool builtin = false;
    for (auto& [bn, d] : nc::builtin_backends()) builtin = builtin || bn == n;
    if (!builtin && !nc::is_backend_spec(n) && !recorded.count(n))
      return usage_error(fmt::format("--backend {}: unknown backend (built in: {}; recorded in the selected cases: {})", n,
                                     fmt::join(nc::default_backends(), ", "),
                                     recorded.empty() ? "none" : fmt::format("{}", fmt::join(recorded, ", "))));
    try {
      backends.push_back(nc::make_backend(n, nc::BackendOptions{a.timeout, {}}));
    } catch (const nc::BackendError& e) {  // a plugin or worker that cannot run
      fmt::print(stderr, "normcheck: --backend {}: {}\n", n, e.what());
      return 3;
    } catch (const std::exception& e) {
      return usage_error(fmt::format("--backend {}: {}", n, e.what()));
    }
    if (a.strict)
      if (auto why = backends.back()->unavailable()) {
        fmt::print(stderr, "normcheck: backend {} unavailable under --strict: {}\n", n, *why);
        return 3;
      }
  }
  nc::RunOptions opt;
  opt.dump_dir = a.dump_dir;
  opt.program = a.program;
  if (!opt.dump_dir.empty()) {  // fail now, not after the run
    std::error_code ec;
    std::filesystem::create_directories(opt.dump_dir, ec);
    if (!std::filesystem::is_directory(opt.dump_dir))
      return usage_error(fmt::format("--dump-failures {}: not a folder that can be created{}", opt.dump_dir,
                                     ec ? ": " + ec.message() : ""));
  }
  std::vector<nc::CaseResult> results;
  try {
    results = nc::run_cases(cases, backends, opt);
  } catch (const nc::SpecError& e) {
    return usage_error(fmt::format("{}: {}", e.field, e.what()));
  }
  std::string text;
  const bool tty = a.output.empty() && isatty(fileno(stdout));
  // no-color.org: NO_COLOR set to a non-empty value disables colour; so does TERM=dumb.
  const char* no_color = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  const bool color = tty && !a.no_color && !(no_color && *no_color) && !(term && std::string_view(term) == "dumb");
  if (a.format == "json") text = nc::format_json(results);
  else if (a.format == "junit") text = nc::format_junit(results);
  else if (a.format == "side-by-side") text = nc::format_side_by_side(results, color);
  else text = nc::format_table(results, color);
  if (a.output.empty()) {
    fmt::print("{}", text);
  } else {
    try {
      nc::write_atomically(a.output, text);
    } catch (const std::exception& e) {
      return usage_error(e.what());
    }
    // Keep the human summary on the terminal when the report goes to a file.
    if (a.format != "table" && a.format != "side-by-side") {
      const std::string t = nc::format_table(results, false);
      fmt::print("{}", t.substr(t.rfind('\n', t.size() - 2) + 1));
    }
  }
  return nc::exit_code(results);
}

int cmd_golden(std::vector<std::string> paths, bool update) {
  if (paths.empty()) {
    std::error_code ec;
    paths.push_back(std::filesystem::is_directory("cases", ec) ? "cases" : NORMCHECK_CASES_DIR);
  }
  try {
    int bad = 0;
    for (const auto& f : nc::find_case_files(paths)) {
      if (update) {
        fmt::print("wrote {}\n", nc::write_golden(f, NORMCHECK_VERSION));
        continue;
      }
      for (const auto& m : nc::check_golden(f)) {
        ++bad;
        fmt::print("MISMATCH {} {}: {}\n", m.case_file, m.case_name, m.what);
      }
    }
    if (!update) fmt::print("golden: {}\n", bad ? fmt::format("{} mismatches", bad) : std::string("reference matches every golden file"));
    return bad ? 1 : kOk;
  } catch (const nc::CaseError& e) {
    fmt::print(stderr, "{}\n", e.what());
    return kBadInput;
  }
}

}  // namespace

int main(int argc, char** argv) {
  // The worker process of plugin: backends is this executable (src/backends/plugin.cpp).
  if (argc >= 2 && std::string_view(argv[1]) == nc::kPluginHostCommand) return nc::plugin_host_main(argc, argv);
  CLI::App app{"normcheck: numerical verification and conformance suite for normalization layers"};
  app.set_version_flag("--version", NORMCHECK_VERSION);
  app.require_subcommand(1);
  auto probe_cmds = nc::cli::add_probe_commands(app);  // probe, compare-eps (cli/probe_commands.cpp)
  auto zoo_cmd = nc::cli::add_zoo_command(app);        // zoo (cli/zoo.cpp)

  RunArgs ra;
  auto* run = app.add_subcommand("run", "run case files against backends and report per-layer errors");
  run->add_option("paths", ra.paths, "case files or folders (default: the bundled cases)");
  // Each occurrence of these takes exactly one value, so `-b cpu file.toml` keeps file.toml a path.
  run->add_option("--backend,-b", ra.backends, "backends to run, repeatable or comma-separated (default: reference,cpu and recorded sources)")->allow_extra_args(false);
  run->add_option("--filter,-f", ra.filters, "keep cases whose layer, op or name matches this glob (repeatable)")->allow_extra_args(false);
  run->add_option("--case", ra.case_names, "run only the case(s) with this exact name (repeatable)")->allow_extra_args(false);
  run->add_option("--format", ra.format, "table | json | junit");
  run->add_option("--output,-o", ra.output, "write the report to this file (atomically)");
  run->add_option("--dump-failures", ra.dump_dir, "write inputs, outputs and exact values of failing cases as .npy here");
  run->add_flag("--list", ra.list, "list the selected cases and exit");
  run->add_option("--shard", ra.shard, "run shard K of N (K/N, K from 0; default GTEST_SHARD_INDEX/GTEST_TOTAL_SHARDS); join reports with normcheck merge");
  run->add_flag("--strict", ra.strict, "an unavailable backend is an error (exit 3)");
  run->add_flag("--no-color", ra.no_color, "no ANSI colours (also: NO_COLOR)");
  run->add_option("--timeout", ra.timeout, "seconds a plugin:/cmd: backend gets per evaluation (default 60; > 0, <= 86400)")
      ->check(CLI::Validator(
          [](std::string& s) -> std::string {
            char* end = nullptr;
            const double v = std::strtod(s.c_str(), &end);
            if (s.empty() || *end != '\0' || !(v > 0) || !(v <= 86400)) return "must be a number of seconds in (0, 86400]";
            return "";
          },
          "SECONDS"));
  run->get_option("--format")->description("table | json | junit | side-by-side (one column per backend)");

  auto* backends = app.add_subcommand("backends", "list built-in backends");

  std::vector<std::string> merge_paths;
  std::string merge_format = "table", merge_output;
  auto* merge = app.add_subcommand("merge", "join the JSON reports of several runs (e.g. one per --shard) into one report");
  merge->add_option("reports", merge_paths, "JSON reports written by normcheck run --format json")->required();
  merge->add_option("--format", merge_format, "table | json");
  merge->add_option("--output,-o", merge_output, "write the merged report to this file (atomically)");

  std::vector<std::string> golden_paths;
  bool golden_update = false;
  auto* golden = app.add_subcommand("golden", "check the reference against golden/ (or rewrite golden/ with --update)");
  golden->add_option("paths", golden_paths, "case files or folders (default: the bundled cases)");
  golden->add_flag("--update", golden_update, "rewrite the golden files of these case files");

  nc::cli::TraceCompareArgs tc;
  nc::cli::add_trace_compare(app, tc);

  ra.program = argc > 0 ? argv[0] : "normcheck";
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    std::vector<std::string> names;
    for (const auto* sub : app.get_subcommands({})) {
      known = known || sub->get_name() == argv[1];
      names.push_back(sub->get_name());
    }
    if (!known) return usage_error(fmt::format("unknown command '{}' ({}; see --help)", argv[1], fmt::join(names, ", ")));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : kBadInput;
  }
  try {
    if (auto rc = nc::cli::run_probe_commands(*probe_cmds)) return *rc;
    if (auto rc = nc::cli::run_zoo_command(*zoo_cmd)) return *rc;
    if (*run) return cmd_run(ra);
    if (int rc = nc::cli::run_trace_compare(tc); rc >= 0) return rc;
    if (*golden) return cmd_golden(golden_paths, golden_update);
    if (*merge) {
      if (merge_format != "table" && merge_format != "json")
        return usage_error(fmt::format("merge --format: unknown '{}' (table | json)", merge_format));
      nlohmann::json merged;
      std::string text;
      try {  // a report whose fields have other types than format_json writes is bad input too
        merged = nc::merge_reports(merge_paths);
        text = merge_format == "json" ? merged.dump(2) + "\n" : nc::format_report_table(merged);
      } catch (const std::exception& e) {
        return usage_error(fmt::format("merge: {}", e.what()));
      }
      if (merge_output.empty()) fmt::print("{}", text);
      else {
        try {
          nc::write_atomically(merge_output, text);
        } catch (const std::exception& e) {
          return usage_error(e.what());
        }
      }
      return merged["summary"]["exit_code"].get<int>();
    }
    if (*backends) {
      for (auto& [n, d] : nc::builtin_backends()) fmt::print("{:<28} {}\n", n, d);
      return kOk;
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "normcheck: internal error: {}\n", e.what());
    return 3;
  }
  return kOk;
}
