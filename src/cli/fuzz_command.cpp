#include "cli/fuzz_command.hpp"

#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "checks/runner.hpp"
#include "cli/backend_options.hpp"
#include "core/atomic_file.hpp"
#include "ops/registry.hpp"
#include "run/fuzz.hpp"
#include "run/pipeline.hpp"
#include "run/resolve.hpp"

namespace normcheck::cli {

struct FuzzCommand {
  CLI::App* sub = nullptr;
  std::string program = "normcheck";
  std::vector<std::string> backend;
  std::vector<std::string> ops;
  std::uint64_t seed = 1;
  std::int64_t count = 0, draw = -1, max_width = 4097, shrink = 400;
  double budget = 60;
  BackendOptions limits;  ///< --timeout, --backend-memory, --backend-cpu
  bool keep_going = false, no_backward = false, no_progress = false;
  std::string output;
};

std::shared_ptr<FuzzCommand> add_fuzz_command(CLI::App& app, const char* argv0) {
  auto f = std::make_shared<FuzzCommand>();
  if (argv0) f->program = argv0;
  auto* s = app.add_subcommand("fuzz", "draw random problems over the coverage matrix, run them on a backend, shrink a failure to a case file");
  f->sub = s;
  s->add_option("--backend,-b", f->backend, "the backend to fuzz (one; default cpu)")->allow_extra_args(false);
  s->add_option("--op", f->ops, "draw only these ops (repeatable; default every op)")->allow_extra_args(false);
  s->add_option("--seed", f->seed, "the run's seed (default 1): the same seed draws the same problems");
  s->add_option("--count", f->count, "number of draws (default: as many as the budget allows)")->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40));
  s->add_option("--budget", f->budget, "seconds of drawing when --count is not given (default 60)")->check(number_in(0.001, 86400.0));
  s->add_option("--draw", f->draw, "rerun draw I of the seed alone (the index a failure names)")->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 40));
  s->add_option("--max-width", f->max_width, "largest reduction width drawn (default 4097)")->check(CLI::Range(1, 65537));
  s->add_option("--shrink-evaluations", f->shrink, "evaluations the shrinker may spend per failure (default 400)")->check(CLI::Range(0, 100000));
  s->add_flag("--keep-going", f->keep_going, "go on after a failure (each is shrunk)");
  s->add_flag("--no-backward", f->no_backward, "draw forward problems only");
  s->add_flag("--no-progress", f->no_progress, "no progress lines on stderr");
  s->add_option("--output,-o", f->output, "write the first failure's shrunk case file here (refused if it exists)");
  add_backend_options(s, f->limits);
  return f;
}

namespace {

std::string rerun_line(const FuzzCommand& f, const std::string& backend, std::int64_t draw) {
  std::string s = fmt::format("{} fuzz --backend {} --seed {} --draw {}", shell_quote(f.program), shell_quote(backend), f.seed, draw);
  for (const auto& o : f.ops) s += " --op " + shell_quote(o);
  if (f.max_width != 4097) s += fmt::format(" --max-width {}", f.max_width);
  if (f.no_backward) s += " --no-backward";
  return s;
}

}  // namespace

std::optional<int> run_fuzz_command(const FuzzCommand& f) {
  if (!f.sub || !*f.sub) return std::nullopt;
  FuzzOptions opt;
  for (const auto& name : f.ops) {
    auto op = ops::find(name);
    if (!op) {
      fmt::print(stderr, "normcheck: fuzz: --op: unknown op '{}' ({})\n", name, ops::choices());
      return 2;
    }
    opt.ops.push_back(*op);
  }
  const auto specs = split_backend_list(f.backend.empty() ? std::vector<std::string>{"cpu"} : f.backend);
  if (specs.size() != 1) {
    fmt::print(stderr, "normcheck: fuzz: give one backend (--backend B), not {}\n", specs.size());
    return 2;
  }
  if (!f.output.empty()) {
    if (access(f.output.c_str(), F_OK) == 0) {
      fmt::print(stderr, "normcheck: fuzz: --output {}: the file exists (a case file is never overwritten)\n", f.output);
      return 2;
    }
    check_output_path("--output", f.output, {});
  }
  BackendSet bs = resolve_backends(specs, {}, f.limits, /*strict=*/true);
  const std::string backend = bs.backends.front()->name();
  opt.seed = f.seed;
  opt.max_width = f.max_width;
  opt.backward = !f.no_backward;
  opt.keep_going = f.keep_going;
  opt.shrink_evaluations = f.shrink;
  if (f.draw >= 0) {
    opt.first_draw = f.draw;
    opt.count = 1;
  } else {
    opt.count = f.count;
    opt.budget_s = f.budget;
  }
  const bool tty = isatty(fileno(stderr));
  if (!f.no_progress)
    opt.progress = [&, last = std::chrono::steady_clock::now()](std::int64_t draws, std::int64_t failures) mutable {
      const auto now = std::chrono::steady_clock::now();
      if (!tty && now - last < std::chrono::seconds(5)) return;  // a heartbeat every 5 s off a terminal
      last = now;
      if (tty) fmt::print(stderr, "\rfuzz: {} draws, {} failures ", draws, failures);
      else fmt::print(stderr, "fuzz: {} draws, {} failures\n", draws, failures);
    };
  const FuzzReport rep = fuzz(bs.backends, opt);
  if (tty && !f.no_progress) fmt::print(stderr, "\n");

  fmt::print("fuzz {} seed {}: {} draws in {:.1f} s: {} evaluated, {} skipped, {} not drawable, {} failed\n", backend, rep.seed,
             rep.draws, rep.seconds, rep.evaluated, rep.skipped, rep.invalid, rep.failures.size());
  if (!rep.coverage.empty()) {
    std::vector<std::string> cov;
    for (const auto& [k, n] : rep.coverage) cov.push_back(fmt::format("{} {}", k, n));
    fmt::print("evaluated: {}\n", fmt::join(cov, ", "));
  }
  for (const auto& [why, n] : rep.skip_reasons) fmt::print("SKIPPED {} x: {}\n", n, why);
  int rc = 0;
  for (const auto& fl : rep.failures) {
    const std::string rerun = rerun_line(f, backend, fl.draw);
    fmt::print("\n{} draw {} ({} {})\n  {}\n", fl.status == Status::error ? "ERROR" : "FAILED", fl.draw, fl.op.name(),
               fl.dims.str(), fl.message);
    fmt::print("  shrunk to {} in {} evaluations: {}\n", fl.shrunk_dims.str(), fl.evaluations,
               fl.steps.empty() ? std::string("nothing smaller failed") : fmt::format("{}", fmt::join(fl.steps, "; ")));
    fmt::print("  rerun: {}\n", rerun);
    const std::string file = fuzz_case_file(fl, backend, rerun);
    if (!f.output.empty() && &fl == &rep.failures.front()) {
      write_atomically(f.output, file);
      fmt::print("  case file: {} (run it: {} run {} --backend {})\n", f.output, shell_quote(f.program), shell_quote(f.output),
                 shell_quote(backend));
    } else {
      fmt::print("--- shrunk case file ---\n{}---\n", file);
    }
    rc = std::max(rc, fl.status == Status::error ? 3 : 1);
  }
  if (rep.evaluated == 0) {
    fmt::print("verdict: FAIL (exit 1): {} evaluated none of the {} draws: nothing was checked\n", backend, rep.draws);
    return std::max(rc, 1);
  }
  fmt::print("verdict: {} (exit {})\n", rc == 0 ? "PASS" : "FAIL", rc);
  return rc;
}

}  // namespace normcheck::cli
