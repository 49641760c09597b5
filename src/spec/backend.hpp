// The one backend interface (STYLE.md 10): anything that evaluates a ValidProblem. The
// table of backends that implement it is src/backends/registry.cpp.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "spec/op.hpp"

namespace normcheck {

/// A backend could not run a problem it claimed to support (crash, bad output, library
/// error). The runner reports it as ERROR and the exit code becomes 3.
struct BackendError : Error {
  explicit BackendError(const std::string& msg) : Error(kExitBackend, msg) {}
};

/// Outputs that other sources recorded for the same inputs (e.g. ONNX's stored
/// expected outputs), by source name; a case carries them, RecordedBackend serves them.
using Recorded = std::map<std::string, Outputs>;

/// Anything that evaluates ops. Implementations: reference, cpu, mutant:<fault>, and
/// recorded sources. `run` must return every output the op defines ("y", ...), each of
/// the input's shape and the problem's out_dtype.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  /// One line for `normcheck backends`.
  virtual std::string description() const = 0;
  /// The backend's self-reported name and version, for reports: a worker's hello name, a
  /// plugin's nc_plugin_name(), a library's version ("oneDNN 2.6.3"); built-in backends
  /// give normcheck's version. Empty when the backend says nothing about itself.
  virtual std::string identity() const { return {}; }
  /// Reason the backend cannot run at all on this machine (no device, library missing), or nullopt.
  virtual std::optional<std::string> unavailable() const { return std::nullopt; }
  /// Whether the backend has anything to say about this case at all. A recorded source
  /// applies only to cases that carry its outputs; elsewhere it is left out of the report
  /// (not SKIPPED: it never claimed those cases).
  virtual bool applies(const ValidProblem&, const Recorded&) const { return true; }
  /// Reason this problem is outside the backend's capabilities (SKIPPED), or nullopt.
  virtual std::optional<std::string> unsupported(const ValidProblem& p, const Recorded& rec) const = 0;
  /// Whether the backend evaluates backward problems (direction = backward: outputs dx,
  /// dgamma...). Default false: the runner marks backward cases SKIPPED ("forward only")
  /// without asking unsupported(), so a forward-only backend needs no change.
  virtual bool supports_backward() const { return false; }
  /// Whether the backend is handed the inputs as views in the problem's layout
  /// (Problem::layout, core/view.hpp present()). Default false: the runner marks a problem
  /// whose layout is not contiguous SKIPPED ("dense tensors only") without asking
  /// unsupported(), so that no PASS claims a layout the backend never saw.
  virtual bool takes_views() const { return false; }
  /// Evaluates p. Throws BackendError.
  virtual Outputs run(const ValidProblem& p, const Recorded& rec) = 0;
};

/// Why `b` is not asked about p at all (the case is SKIPPED before unsupported()): the backend
/// is unavailable, p is backward and b forward only, or p's layout is not contiguous and b
/// takes dense tensors only. nullopt: ask b. The runner and fuzz use this one rule.
inline std::optional<std::string> declined(const Backend& b, const Problem& p) {
  if (auto why = b.unavailable()) return why;
  if (p.conv.direction == Direction::backward && !b.supports_backward())
    return fmt::format("{}: forward only (no backward)", b.name());
  if (p.layout != MemoryLayout::contiguous && !b.takes_views())
    return fmt::format("{}: dense tensors only (the {} layout is not presented to it)", b.name(), to_string(p.layout));
  return std::nullopt;
}

}  // namespace normcheck
