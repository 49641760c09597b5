// Internals shared by the probe drivers (probe.cpp) and the per-family experiments.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "checks/eps_fit.hpp"
#include "checks/probe.hpp"

namespace normcheck::detail {

inline std::string g7(double v) { return fmt::format("{:.7g}", v); }
inline std::string g3(double v) { return fmt::format("{:.3g}", v); }

/// A finding; `deviates` only counts when the finding is not undetermined.
inline Finding finding(std::string property, std::string value, std::string expected, Certainty c, bool deviates, Evidence e) {
  Finding f;
  f.property = std::move(property);
  f.value = std::move(value);
  f.expected = std::move(expected);
  f.certainty = c;
  f.deviates = deviates && c != Certainty::undetermined;
  f.evidence = std::move(e);
  return f;
}

/// Probes of the row-wise normalizations (layer_norm, rms_norm): checks/probe_row_norm.cpp.
ProbeResult probe_row_norm(Backend& backend, const ProbeOptions& options);

/// Probes of every other op (families, adaptive, QK, DyT, fused): checks/probe_family.cpp.
ProbeResult probe_family(Backend& backend, const ProbeOptions& options);

/// The layout experiment, for any op: whether a backend handed views reads them (offset,
/// padded, transposed, channels_last), added to `res` as findings "layout[<name>]".
void probe_layouts(Backend& backend, const ProbeOptions& options, ProbeResult& res);

/// The findings "eps", "eps_placement" (and, with `estimator`, "variance") and "gain_law"
/// from an eps sweep's gains (eps_fit.hpp: `m` values per statistic, `floor` the relative
/// resolution of one gain), with `e` as their evidence; sets res.inferred's eps, placement,
/// variance and res.eps_lo/eps_hi. Returns whether the fitted model is trustworthy.
bool eps_sweep_findings(ProbeResult& res, const ProbeOptions& o, const std::vector<GainSample>& samples, std::int64_t m,
                        double floor, Evidence e, bool estimator);

}  // namespace normcheck::detail
