#include "spec/gate.hpp"

namespace normcheck {

std::string_view to_string(Metric m) noexcept {
  switch (m) {
    case Metric::abs: return "abs";
    case Metric::rel: return "rel";
    case Metric::ulp: return "ulp";
    case Metric::nmse: return "nmse";
    case Metric::stab: return "stab";
  }
  return "?";
}

std::optional<Metric> parse_metric(std::string_view s) noexcept {
  for (Metric m : {Metric::abs, Metric::rel, Metric::ulp, Metric::nmse, Metric::stab})
    if (to_string(m) == s) return m;
  return std::nullopt;
}

}  // namespace normcheck
