// Error metrics by name and the gate a case is judged by (DESIGN.md "Error metrics"): part
// of a case's expectations, so the case layer holds them; checks/ computes them.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace normcheck {

/// abs: |y - r|; rel: |y - r| / |r|; ulp: |y - r| / ulp_out(r); nmse: sum (y-r)^2 / sum r^2;
/// stab: |y - r| / (ulp_out/2) up to half an output step, 1 + (|y - r| - ulp_out/2) / (u_acc c)
/// beyond it, c the condition magnitude of the element (checks/metrics.hpp stab_of).
enum class Metric { abs, rel, ulp, nmse, stab };
std::string_view to_string(Metric) noexcept;
std::optional<Metric> parse_metric(std::string_view) noexcept;

/// A gate: the case passes when metric <= max.
struct Gate {
  Metric metric = Metric::stab;
  double max = 0;
  std::string source;  ///< "default: <formula>" or "file:line" of the case's expect.gate
};

}  // namespace normcheck

/// {} of a Metric: its name ("stab").
template <>
struct fmt::formatter<normcheck::Metric> : fmt::formatter<std::string_view> {
  template <class Ctx>
  auto format(normcheck::Metric v, Ctx& ctx) const {
    return fmt::formatter<std::string_view>::format(normcheck::to_string(v), ctx);
  }
};
