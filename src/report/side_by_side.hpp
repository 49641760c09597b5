// Backends side by side per layer (normcheck run --format side-by-side).
#pragma once

#include <string>

#include "report/model.hpp"

namespace normcheck {

/// One row per (layer, dtype), one column per backend (in the order they ran). A cell holds
/// "max ulp / max stab VERDICT" of that layer on that backend, with counts of failed, error
/// and skipped cases; "-" where the backend has no case of the row. Long backend names
/// (cmd:..., plugin:...) are shortened in the header and spelled out in a legend below.
/// format_details follows (failures, repro lines, counts, verdict).
std::string format_side_by_side(const Report& r, bool color);

}  // namespace normcheck
