// `normcheck probe` and `normcheck compare-eps` (issue 4): registered on the main CLI11 app.
#pragma once

#include <memory>
#include <optional>

#include <CLI/CLI.hpp>

namespace normcheck::cli {

struct ProbeCommands;  // the parsed options of both subcommands

/// Adds the subcommands `probe` and `compare-eps` to `app`; the returned state must outlive
/// app.parse().
std::shared_ptr<ProbeCommands> add_probe_commands(CLI::App& app);

/// Runs whichever of the two subcommands was selected and returns its exit code
/// (0 ok, 2 bad usage, 3 backend failure); nullopt when neither was selected.
std::optional<int> run_probe_commands(const ProbeCommands& cmds);

}  // namespace normcheck::cli
