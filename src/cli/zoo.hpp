// `normcheck zoo`: the mutant zoo's kill table and probe table from one command (issue 4).
#pragma once

#include <memory>
#include <optional>

#include <CLI/CLI.hpp>

namespace normcheck::cli {

struct ZooCommand;

/// Adds the subcommand `zoo` to `app`; the returned state must outlive app.parse().
std::shared_ptr<ZooCommand> add_zoo_command(CLI::App& app);

/// Runs `zoo` when selected: every mutant on the bundled (or given) cases, one table row per
/// mutant with the number of cases it fails and the first of them, then the probe's verdict
/// for each layer_norm/rms_norm mutant. Exit 1 when a mutant survives every case, 2 on bad
/// input; nullopt when `zoo` was not selected.
std::optional<int> run_zoo_command(const ZooCommand& z);

}  // namespace normcheck::cli
