// `normcheck bench` (issue 15): the throughput of one backend on one op, dtype and shape, as
// GB/s and as a ratio to a copy of the same bytes measured in the same run (and to oneDNN for
// layer_norm when it is built in); or, with --reference, the exact reference's elements per
// CPU-second.
#pragma once

#include <memory>
#include <optional>

#include <CLI/CLI.hpp>

namespace normcheck::cli {

struct BenchCommand;

/// Adds the subcommand `bench` to `app`; the returned state must outlive app.parse().
std::shared_ptr<BenchCommand> add_bench_command(CLI::App& app);

/// Runs `bench` when selected: every combination of the --op, --dtype and --shape lists (each
/// item checked before any is measured), each point's lines as it is measured, then a summary
/// table (JSON: one point's object, or {"runs": [...]}). Exit 0: every point measured; 1: a
/// backend's output held NaN or an unwritten element for finite inputs (its timing would
/// describe a broken kernel); 2: bad usage; 3: the backend could not run a point
/// (unavailable, SKIPPED, or an error). Several points: each is measured (a failed one keeps its
/// error), and the code is the worst as `run` ranks them, 2 over 3 over 1 over 0.
/// nullopt when `bench` was not selected.
std::optional<int> run_bench_command(const BenchCommand& b);

}  // namespace normcheck::cli
