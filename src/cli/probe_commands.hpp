// `normcheck probe`, `normcheck compare-eps` (issue 4) and `normcheck presets` (issue 20):
// registered on the main CLI11 app.
#pragma once

#include <memory>
#include <optional>

#include <CLI/CLI.hpp>

namespace normcheck::cli {

struct ProbeCommands;  // the parsed options of both subcommands

/// Adds the subcommands `probe`, `compare-eps` and `presets` to `app`; the returned state must outlive
/// app.parse().
std::shared_ptr<ProbeCommands> add_probe_commands(CLI::App& app);

/// Runs whichever of the three subcommands was selected and returns its exit code
/// (0 ok, 2 bad usage, 3 backend failure); nullopt when neither was selected.
std::optional<int> run_probe_commands(const ProbeCommands& cmds);

}  // namespace normcheck::cli
