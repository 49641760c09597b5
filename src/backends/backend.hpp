// The one backend interface and the one table of backends (STYLE.md 10).
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
  virtual bool applies(const Problem&, const Recorded&) const { return true; }
  /// Reason this problem is outside the backend's capabilities (SKIPPED), or nullopt.
  virtual std::optional<std::string> unsupported(const Problem& p, const Recorded& rec) const = 0;
  /// Whether the backend evaluates backward problems (direction = backward: outputs dx,
  /// dgamma...). Default false: the runner marks backward cases SKIPPED ("forward only")
  /// without asking unsupported(), so a forward-only backend needs no change.
  virtual bool supports_backward() const { return false; }
  /// Evaluates p. Throws BackendError.
  virtual Outputs run(const Problem& p, const Recorded& rec) = 0;
};

/// Creates a backend by name: "reference", "cpu", "cuda", "mutant:<fault>", or any other name
/// as a recorded source. Throws std::invalid_argument for a malformed name.
std::unique_ptr<Backend> make_backend(const std::string& name);
/// Whether a name belongs to a built-in backend or a backend kind ("reference", "cpu",
/// "cuda", anything of the form "kind:..."), so a recorded source may not use it.
bool is_reserved_backend_name(const std::string& name);
/// Built-in backends run by default (reference, cpu).
std::vector<std::string> default_backends();
/// Names of the mutant faults (test-only backends mutant:<fault>).
std::vector<std::string> mutant_names();
/// Every built-in backend name with its description, for listings.
std::vector<std::pair<std::string, std::string>> builtin_backends();

/// Settings of the backends that run outside normcheck's process (plugin:, cmd:).
struct BackendOptions {
  double timeout_s = 60;  ///< seconds per evaluation and per worker start (--timeout)
  std::string host_exe;   ///< executable run as "EXE __plugin-host LIB" to host plugins; empty: this one
};
/// make_backend, also accepting "plugin:PATH" (a C-ABI plugin, src/backends/normcheck_plugin.h),
/// "cmd:COMMAND" (an external worker process, README "External process backends") and
/// "onednn". Throws std::invalid_argument for a malformed name, a missing plugin file or a
/// command that is not executable (usage errors, exit 2), BackendError when a plugin or
/// worker starts but cannot run (bad ABI version, failed handshake: exit 3).
std::unique_ptr<Backend> make_backend(const std::string& name, const BackendOptions& opt);
/// Whether `name` has the form of a parametric backend (mutant:, plugin:, cmd:).
bool is_backend_spec(const std::string& name);

}  // namespace normcheck
