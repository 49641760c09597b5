// normcheck command line (CLI11). Exit codes: DESIGN.md "Exit codes".
#include <malloc.h>
#include <limits>
#include <fnmatch.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
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
#include "cli/backend_options.hpp"
#include "cli/trace_compare.hpp"
#include "report/report.hpp"
#include "run/data_dir.hpp"
#include "run/expectations.hpp"
#include "run/progress.hpp"
#include "run/resolve.hpp"
#include "run/pipeline.hpp"
#include "run/select.hpp"
#include "cli/probe_commands.hpp"
#include "ops/common/cpu_rows_fast.hpp"
#include "cli/zoo.hpp"
#include "cli/fuzz_command.hpp"
#include "cli/bench_command.hpp"
#include "ops/reference.hpp"

#ifndef NORMCHECK_VERSION
#define NORMCHECK_VERSION "0.0.0"
#endif

namespace nc = normcheck;

namespace {

constexpr int kOk = 0, kBadInput = 2;

int usage_error(const std::string& msg) {
  fmt::print(stderr, "normcheck: {}\n", msg);
  return kBadInput;
}

/// Where a report goes: --format/--output, and any number of --json/--junit files.
struct OutputArgs {
  std::string format = "table", output, json, junit;
  bool no_color = false;
};

/// The report in `format` (table, json, junit, side-by-side).
std::string render(const nc::Report& rep, const std::string& format, bool color) {
  if (format == "json") return nc::to_json(rep);
  if (format == "junit") return nc::format_junit(rep);
  if (format == "side-by-side") return nc::format_side_by_side(rep, color);
  return nc::format_table(rep, color);
}

/// Writes the report to the files OutputArgs name (--json, --junit, --output), each
/// atomically. Throws UsageError when a file cannot be written.
void write_files(const nc::Report& rep, const OutputArgs& o) {
  try {
    if (!o.json.empty()) nc::write_atomically(o.json, nc::to_json(rep));
    if (!o.junit.empty()) nc::write_atomically(o.junit, nc::format_junit(rep));
    if (!o.output.empty()) nc::write_atomically(o.output, render(rep, o.format, false));
  } catch (const std::exception& e) {
    throw nc::UsageError(e.what());
  }
}

/// Writes the report where OutputArgs say; the console always gets the failures and the
/// verdict. Returns the verdict's exit code. Throws UsageError when a file cannot be written.
int emit(const nc::Report& rep, const OutputArgs& o) {
  const bool tty = o.output.empty() && isatty(fileno(stdout));
  // no-color.org: NO_COLOR set to a non-empty value disables colour; so does TERM=dumb.
  const char* no_color = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  const bool color = tty && !o.no_color && !(no_color && *no_color) && !(term && std::string_view(term) == "dumb");
  write_files(rep, o);
  if (o.output.empty()) fmt::print("{}", render(rep, o.format, color));
  // A report in a file: the console still shows every failure, the counts and the verdict.
  else fmt::print("{}", nc::format_details(rep, false));
  return nc::judge(rep).exit_code;
}

struct RunArgs {
  std::vector<std::string> paths, backends, filters, case_names;
  std::string dump_dir, program = "normcheck", shard, expect_failures, tier;
  OutputArgs out;
  bool list = false, strict = false, no_progress = false, coverage = false;
  std::string reference_path = "auto";
  nc::BackendOptions limits;  ///< --timeout, --budget, --max-timeouts, --backend-memory, --backend-cpu
};

int cmd_run(const RunArgs& a) {
  const std::string& f = a.out.format;
  if (f != "table" && f != "json" && f != "junit" && f != "side-by-side")
    return usage_error(fmt::format("--format: unknown '{}' (table | json | junit | side-by-side)", f));
  if (a.list) {
    const nc::Selection sel = nc::select_cases({a.paths, a.filters, a.case_names, a.shard, a.tier});
    for (auto& c : sel.cases)
      fmt::print("{}:{}  {}  layer={} op={} dtype={} x={}{}\n", c.file, c.line, c.name, c.layer, nc::to_string(c.problem.op),
                 nc::dtype_name(c.problem.out_dtype), nc::shape_str(c.problem.x().shape()),
                 c.recorded.empty() ? "" : fmt::format(" recorded={}", [&] { std::string s; for (auto& [k, v] : c.recorded) s += (s.empty() ? "" : ",") + k; return s; }()));
    fmt::print("{} of {} cases ({}){}\n", sel.cases.size(), sel.suite_cases, sel.suite,
               sel.shard_count > 1 ? fmt::format(", shard {}/{}", sel.shard_index, sel.shard_count) : "");
    return kOk;
  }
  if (a.reference_path != "auto" && a.reference_path != "mpfr")
    return usage_error(fmt::format("--reference-path: unknown '{}' (auto | mpfr)", a.reference_path));
  nc::reference::set_fast_path(a.reference_path == "auto");
  nc::RunRequest req;
  req.select = {a.paths, a.filters, a.case_names, a.shard, a.tier};
  req.backends = a.backends;
  req.expect_failures = a.expect_failures;
  req.dump_dir = a.dump_dir;
  req.program = a.program;
  req.strict = a.strict;
  req.progress = !a.no_progress;
  req.limits = a.limits;
  req.outputs = {{"--output", a.out.output}, {"--json", a.out.json}, {"--junit", a.out.junit}};
  // A run killed before its end leaves this placeholder (verdict ERROR) where its reports go,
  // never the previous run's.
  req.started = [&](const nc::Report& placeholder) { write_files(placeholder, a.out); };
  const nc::Report rep = nc::run(req);
  const int rc = emit(rep, a.out);
  if (const auto fp = nc::reference::fast_path_counts(); fp.certified + fp.recomputed > 0 && !a.no_progress)
    fmt::print(stderr, "reference: {} rows decided by the certified double-double path, {} recomputed in MPFR ({:.2g}%)\n",
               fp.certified, fp.recomputed, 100.0 * static_cast<double>(fp.recomputed) / static_cast<double>(fp.certified + fp.recomputed));
  if (a.coverage) fmt::print("{}", nc::format_coverage(rep));
  return rc;
}

/// Reads a report file for merge: at most 1 GiB (a report of 10^6 case runs is ~1 GB).
std::string read_report_file(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) throw nc::UsageError(fmt::format("{}: not a readable file", path));
  const auto size = fs::file_size(path, ec);
  if (ec || size > (std::uintmax_t{1} << 30)) throw nc::UsageError(fmt::format("{}: larger than 1 GiB, not a report", path));
  std::ifstream f(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (!f && !f.eof()) throw nc::UsageError(fmt::format("{}: cannot read", path));
  return text;
}

int cmd_merge(const std::vector<std::string>& paths, const OutputArgs& o) {
  if (o.format != "table" && o.format != "json" && o.format != "junit" && o.format != "side-by-side")
    return usage_error(fmt::format("merge --format: unknown '{}' (table | json | junit | side-by-side)", o.format));
  std::vector<std::pair<std::string, nc::Report>> shards;
  for (const auto& p : paths) {
    try {
      shards.emplace_back(p, nc::report_from_json(read_report_file(p), p));
    } catch (const nc::Error&) {
      throw;
    } catch (const std::exception& e) {
      throw nc::UsageError(e.what());
    }
  }
  nc::check_output_path("--output", o.output, paths);
  nc::check_output_path("--json", o.json, paths);
  nc::check_output_path("--junit", o.junit, paths);
  nc::Report merged;
  try {
    merged = nc::merge_reports(shards);
  } catch (const std::runtime_error& e) {
    throw nc::UsageError(fmt::format("merge: {}", e.what()));
  }
  return emit(merged, o);
}

int cmd_golden(std::vector<std::string> paths, bool update) {
  if (paths.empty()) paths.push_back(nc::bundled_cases_dir());
  try {
    int bad = 0;
    std::int64_t files = 0, compared = 0;
    for (const auto& f : nc::find_case_files(paths)) {
      ++files;
      if (update) {
        fmt::print("wrote {}\n", nc::write_golden(f, NORMCHECK_VERSION));
        continue;
      }
      for (const auto& m : nc::check_golden(f, &compared)) {
        ++bad;
        fmt::print("MISMATCH {} {}: {}\n", m.case_file, m.case_name, m.what);
      }
    }
    // Nothing compared is not a match (a folder without case files is find_case_files' error,
    // exit 2, as for run): a guard should a file ever yield no case.
    if (!update && bad == 0 && compared == 0) {
      fmt::print(stderr, "normcheck: golden: no case compared in {}\n", fmt::join(paths, ", "));
      return kBadInput;
    }
    if (!update)
      fmt::print("golden: {}\n", bad ? fmt::format("{} mismatches", bad) : fmt::format("reference matches every golden file ({} cases in {} files)", compared, files));
    return bad ? 1 : kOk;
  } catch (const nc::CaseError& e) {
    fmt::print(stderr, "{}\n", e.what());
    return kBadInput;
  }
}

/// OpenMP threads that wait between parallel regions spin by default (libgomp spins ~300000
/// iterations before sleeping), and a run of many small cases has thousands of regions: on the
/// bundled suite the spinning was 31% of the CPU time. libgomp reads OMP_WAIT_POLICY once,
/// before main, so when the user has not set it this process sets it to passive and executes
/// itself again; the re-executed process then removes both variables, so that backends it
/// starts (cmd: workers, which may be OpenMP programs) see the user's environment. Results do
/// not depend on it (the threads' work is the same). If the re-execution fails, the run goes
/// on with spinning threads.
void wait_passively_between_parallel_regions(char** argv) {
  constexpr const char* kMarker = "NORMCHECK_OMP_PASSIVE_SET";
  if (std::getenv(kMarker)) {
    unsetenv(kMarker);
    unsetenv("OMP_WAIT_POLICY");
    return;
  }
  if (std::getenv("OMP_WAIT_POLICY")) return;  // the user's choice
  setenv("OMP_WAIT_POLICY", "passive", 1);
  setenv(kMarker, "1", 1);
  execv("/proc/self/exe", argv);
  unsetenv(kMarker);  // execv failed: carry on as we are
  unsetenv("OMP_WAIT_POLICY");
}

/// Large tensors (an output of 128 MB per evaluation) come from the heap and stay there when
/// freed, so the next one reuses pages already mapped: by default glibc maps each block
/// above 32 MB afresh and returns it on free, and the kernel's first-touch faults and zeroing
/// of the new pages cost more than a norm kernel's whole pass (4 GB/s for LayerNorm f32
/// [8192, 4096] against 15 GB/s for a copy into a buffer already there; `normcheck bench`).
/// Peak memory is unchanged; the process keeps its high-water mark until it exits.
void keep_freed_memory_for_reuse() {
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max());
}

}  // namespace

int main(int argc, char** argv) {
  wait_passively_between_parallel_regions(argv);
  keep_freed_memory_for_reuse();
  // The worker process of plugin: backends is this executable (src/backends/plugin.cpp).
  if (argc >= 2 && std::string_view(argv[1]) == nc::kPluginHostCommand) return nc::plugin_host_main(argc, argv);
  CLI::App app{"normcheck: numerical verification and conformance suite for normalization layers"};
  app.set_version_flag("--version", NORMCHECK_VERSION);
  app.require_subcommand(1);
  auto probe_cmds = nc::cli::add_probe_commands(app);  // probe, compare-eps (cli/probe_commands.cpp)
  auto zoo_cmd = nc::cli::add_zoo_command(app);        // zoo (cli/zoo.cpp)
  auto fuzz_cmd = nc::cli::add_fuzz_command(app, argc > 0 ? argv[0] : nullptr);  // fuzz (cli/fuzz_command.cpp)
  auto bench_cmd = nc::cli::add_bench_command(app);    // bench (cli/bench_command.cpp)

  RunArgs ra;
  auto* run = app.add_subcommand("run", "run case files against backends and report per-layer errors");
  run->add_option("paths", ra.paths, "case files or folders (default: the bundled cases, found beside the executable)");
  // Each occurrence of these takes exactly one value, so `-b cpu file.toml` keeps file.toml a path.
  run->add_option("--backend,-b", ra.backends, "backends to run, repeatable or comma-separated; cmd:/plugin: take the rest of their occurrence (default: reference,cpu and recorded sources)")->allow_extra_args(false);
  run->add_option("--filter,-f", ra.filters, "keep cases whose layer, op or name matches this glob (repeatable: a case any of them matches is kept; each must match a case)")->allow_extra_args(false);
  run->add_option("--case", ra.case_names, "run only the case(s) with this exact name (repeatable; each must exist)")->allow_extra_args(false);
  auto add_outputs = [](CLI::App* sub, OutputArgs& o) {
    sub->add_option("--format", o.format, "table | json | junit | side-by-side (one column per backend)");
    sub->add_option("--output,-o", o.output, "write the --format report to this file (atomically); the console keeps the failures and the verdict");
    sub->add_option("--json", o.json, "also write the JSON report to this file");
    sub->add_option("--junit", o.junit, "also write the JUnit XML report to this file");
    sub->add_flag("--no-color", o.no_color, "no ANSI colours (also: NO_COLOR)");
  };
  add_outputs(run, ra.out);
  run->add_option("--dump-failures", ra.dump_dir, "write inputs, outputs and exact values of failing cases as .npy here");
  run->add_option("--expect-failures", ra.expect_failures, "TOML file of known (backend, case) failures: they do not fail the run (README \"Expected failures\")");
  run->add_option("--reference-path", ra.reference_path, "auto (default): the certified double-double fast path of the reference where it decides, MPFR for the rest (identical results) | mpfr: MPFR for every row");
  run->add_flag("--list", ra.list, "list the selected cases and exit");
  run->add_option("--tier", ra.tier, "coverage matrix tier added to the cases: quick (the default with the bundled suite) | full (README \"Coverage matrix\"); also as a path: matrix:quick, matrix:full");
  run->add_option("--shard", ra.shard, "run shard K of N (K/N, K from 0; default GTEST_SHARD_INDEX/GTEST_TOTAL_SHARDS); join reports with normcheck merge");
  run->add_flag("--strict", ra.strict, "fail on anything not checked: an unavailable backend (exit 3), a skipped case or check, an expected failure that passed, a stale expectation (exit 1)");
  run->add_flag("--coverage", ra.coverage, "print the coverage report: per backend, which dimension values (op, dtypes, width, groups, direction, eps, affine) were evaluated and which all skipped");
  run->add_flag("--no-progress", ra.no_progress, "no progress bar or heartbeat lines on stderr");
  nc::cli::add_backend_options(run, ra.limits, /*run_limits=*/true);

  auto* backends = app.add_subcommand("backends", "list built-in backends and the installed adapters");

  std::vector<std::string> merge_paths;
  OutputArgs merge_out;
  auto* merge = app.add_subcommand("merge", "join the JSON reports of the shards of one run (normcheck run --shard K/N) into one report");
  merge->add_option("reports", merge_paths, "JSON reports written by normcheck run --json or --format json")->required();
  add_outputs(merge, merge_out);

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
  // NORMCHECK_CPU_TIER (the CPU row kernel's instruction-set tier; README "Backends") once,
  // here: a bad value is an error even where no case reaches that kernel.
  try {
    (void)nc::kernels::cpu::detail::cpu_tier_name();
  } catch (const std::exception& e) {
    return usage_error(e.what());
  }
  try {
    if (auto rc = nc::cli::run_probe_commands(*probe_cmds)) return *rc;
    if (auto rc = nc::cli::run_zoo_command(*zoo_cmd)) return *rc;
    if (auto rc = nc::cli::run_fuzz_command(*fuzz_cmd)) return *rc;
    if (auto rc = nc::cli::run_bench_command(*bench_cmd)) return *rc;
    if (*run) return cmd_run(ra);
    if (int rc = nc::cli::run_trace_compare(tc); rc >= 0) return rc;
    if (*golden) return cmd_golden(golden_paths, golden_update);
    if (*merge) return cmd_merge(merge_paths, merge_out);
    if (*backends) {
      for (auto& [n, d] : nc::builtin_backends()) fmt::print("{:<28} {}\n", n, d);
      if (const std::string ad = nc::adapters_dir(); !ad.empty()) {
        fmt::print("\nadapters (external workers, {}):\n", ad);
        for (const char* a : {"torch_backend.py", "onnxruntime_backend.py"})
          if (std::filesystem::exists(std::filesystem::path(ad) / a))
            fmt::print("  --backend {}\n", nc::shell_quote("cmd:python3 " + (std::filesystem::path(ad) / a).string()));
      }
      return kOk;
    }
  } catch (const nc::Error& e) {
    fmt::print(stderr, "normcheck: {}\n", e.what());
    return e.exit_code;
  } catch (const std::exception& e) {
    fmt::print(stderr, "normcheck: internal error: {}\n", e.what());
    return 3;
  }
  return kOk;
}
