// `normcheck fuzz` (issue 12): random problems over the coverage matrix's dimensions on one
// backend, shrinking each failure to a small case file (run/fuzz.hpp).
#pragma once

#include <memory>
#include <optional>

#include <CLI/CLI.hpp>

namespace normcheck::cli {

struct FuzzCommand;

/// Adds the subcommand `fuzz` to `app`; the returned state must outlive app.parse().
std::shared_ptr<FuzzCommand> add_fuzz_command(CLI::App& app, const char* argv0);

/// Runs `fuzz` when selected. Exit 0: at least one draw was evaluated and none failed;
/// 1: a draw failed (its shrunk case printed and, with --output, written), or no draw was
/// evaluated (the backend skipped them all: nothing was checked); 2: bad usage; 3: the
/// backend could not run at all, or errored (crashed, timed out) on a draw. nullopt when
/// `fuzz` was not selected.
std::optional<int> run_fuzz_command(const FuzzCommand& f);

}  // namespace normcheck::cli
