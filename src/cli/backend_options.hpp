// The options every command that runs a plugin:/cmd: backend takes (run, fuzz, bench, trace,
// compare, probe), declared once so their names, checks and defaults cannot drift apart.
#pragma once

#include <CLI/CLI.hpp>

#include "backends/registry.hpp"

namespace normcheck::cli {

/// Adds --timeout (seconds per evaluation, > 0 and <= 86400; default o.timeout_s),
/// --backend-memory (resident bytes, 8G / 512M; 0: no limit) and --backend-cpu (CPU seconds
/// per worker process; 0: no limit) to `sub`, writing into `o`; with `run_limits` also
/// --budget (seconds of all evaluations) and --max-timeouts. `o` must outlive the parse.
void add_backend_options(CLI::App* sub, BackendOptions& o, bool run_limits = false);

}  // namespace normcheck::cli
