#include "cli/backend_options.hpp"

#include <cstdlib>

#include <fmt/format.h>

namespace normcheck::cli {

CLI::Validator number_in(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(s.c_str(), &end);
        if (s.empty() || *end != '\0' || !(v >= lo && v <= hi)) return fmt::format("must be a number in [{:g}, {:g}]", lo, hi);
        return "";
      },
      fmt::format("FLOAT in [{:g} - {:g}]", lo, hi));
}

void add_backend_options(CLI::App* sub, BackendOptions& o, bool run_limits) {
  sub->add_option("--timeout", o.timeout_s,
                  fmt::format("seconds a plugin:/cmd: backend gets per evaluation and to start (default {:g}; > 0, <= 86400)", o.timeout_s))
      ->check(CLI::Validator(
          [](std::string& s) -> std::string {
            char* end = nullptr;
            const double v = std::strtod(s.c_str(), &end);
            if (s.empty() || *end != '\0' || !(v > 0) || !(v <= 86400)) return "must be a number of seconds in (0, 86400]";
            return "";
          },
          "SECONDS"));
  if (run_limits) {
    sub->add_option("--budget", o.budget_s,
                    "seconds each plugin:/cmd: backend may spend in all its evaluations; then its remaining cases are ERROR "
                    "\"budget exhausted\" (default 0: no limit)")
        ->check(number_in(0.0, 1e9));
    sub->add_option("--max-timeouts", o.max_timeouts,
                    "after this many timeouts in a row a plugin:/cmd: backend is not asked again: its remaining cases are "
                    "ERROR (default 3; 0: never stop)")
        ->check(CLI::Range(0, 1000000));
  }
  sub->add_option("--backend-memory", o.memory_bytes,
                  fmt::format("resident memory the worker of a plugin:/cmd: backend (with its children) may hold while it "
                              "evaluates, e.g. 8G or 512M; over it the worker is killed and the case is ERROR (default {:.3g} GiB, "
                              "half of this machine; 0: no limit)",
                              static_cast<double>(default_backend_memory()) / (1 << 30)))
      ->transform(CLI::AsSizeValue(false));
  sub->add_option("--backend-cpu", o.cpu_s,
                  "CPU seconds each worker process of a plugin:/cmd: backend may use over its life (RLIMIT_CPU); then it "
                  "ends and the case in flight is ERROR (default 3600; 0: no limit)")
      ->check(number_in(0.0, 1e9));
}

}  // namespace normcheck::cli
