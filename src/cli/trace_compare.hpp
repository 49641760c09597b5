// The `trace` and `compare` subcommands (src/trace, src/compare), registered on the main
// CLI11 app by main.cpp with two calls, so that main.cpp stays one table of commands.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "backends/registry.hpp"

namespace normcheck::cli {

/// Options of `normcheck trace` and `normcheck compare`, filled by CLI11.
struct TraceCompareArgs {
  CLI::App* trace = nullptr;
  CLI::App* compare = nullptr;
  std::string model, backend = "cpu", format = "table", output;
  std::vector<std::string> inject;
  std::vector<std::string> dirs;
  std::string compare_backend;
  double tolerance_ulp = 0;
  BackendOptions trace_limits, compare_limits;  ///< --timeout, --backend-memory, --backend-cpu of each
};

/// Adds the subcommands `trace` and `compare` to `app`; `a` must outlive the parse.
void add_trace_compare(CLI::App& app, TraceCompareArgs& a);

/// Runs the selected one: its exit code (0, 1, 2, 3 per DESIGN.md "Exit codes"), or -1
/// when neither was selected.
int run_trace_compare(const TraceCompareArgs& a);

}  // namespace normcheck::cli
