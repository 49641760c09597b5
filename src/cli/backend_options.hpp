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

/// A check for a floating-point option: a number in [lo, hi]. CLI::Range lets NaN through
/// (every comparison with NaN is false): `run --budget nan` and `--backend-cpu nan` were
/// accepted and ran with no limit (false-pass audit). Every floating-point option's range
/// check is this one.
CLI::Validator number_in(double lo, double hi);

}  // namespace normcheck::cli
