// The one error type that carries its exit code (DESIGN.md "Exit codes").
#pragma once

#include <stdexcept>
#include <string>

namespace normcheck {

/// Exit codes: 0 every check passed, 1 a check failed, 2 bad usage or bad input, 3 a backend
/// could not run.
inline constexpr int kExitPass = 0, kExitFail = 1, kExitUsage = 2, kExitBackend = 3;

/// An error that ends a command with `exit_code` (kExitUsage for bad usage or bad input,
/// kExitBackend for a backend that cannot run). The message is complete: it names the
/// file, line and field, or the option, it comes from.
struct Error : std::runtime_error {
  Error(int exit_code_, const std::string& msg) : std::runtime_error(msg), exit_code(exit_code_) {}
  int exit_code;
};

/// Bad usage or bad input (exit 2).
struct UsageError : Error {
  explicit UsageError(const std::string& msg) : Error(kExitUsage, msg) {}
};

}  // namespace normcheck
