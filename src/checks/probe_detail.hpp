// Internals shared by the probe drivers (probe.cpp) and the per-family experiments.
#pragma once

#include "checks/probe.hpp"

namespace normcheck::detail {

/// Probes of the row-wise normalizations (layer_norm, rms_norm): checks/probe_row_norm.cpp.
ProbeResult probe_row_norm(Backend& backend, const ProbeOptions& options);

}  // namespace normcheck::detail
