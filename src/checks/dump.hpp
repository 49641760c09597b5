// --dump-failures DIR: an observer of the run that writes the tensors of every failing case
// as .npy files (README "Usage" has the layout).
#pragma once

#include <string>

#include "checks/runner.hpp"

namespace normcheck {

/// Writes DIR/<case>__<backend>/ for each FAILED result: <input>.npy per input, y.npy (dx.npy
/// backward: the backend's primary output), exact.npy (exact, rounded once to binary64),
/// exact_rounded.npy (rounded once to the output dtype), out_<name>.npy and
/// out_<name>_exact.npy for the other outputs; all float64. A folder that cannot be
/// written adds a SKIPPED "dump" check to the result's report, never fails the run.
ResultObserver failure_dumper(std::string dir);

}  // namespace normcheck
