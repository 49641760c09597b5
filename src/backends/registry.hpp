// The one table of backends (STYLE.md 10): built-in backends, mutants, and the kinds of
// backends given by a spec (plugin:, cmd:). The CLI and the report never name a backend.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "spec/backend.hpp"

namespace normcheck {

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

/// Half of the machine's physical memory, in bytes: the default of BackendOptions::memory_bytes.
std::uint64_t default_backend_memory() noexcept;

/// Settings of the backends that run outside normcheck's process (plugin:, cmd:).
struct BackendOptions {
  double timeout_s = 60;  ///< seconds per evaluation and per worker start (--timeout)
  double budget_s = 0;    ///< seconds a plugin:/cmd: backend may spend in all (--budget); 0: no limit
  int max_timeouts = 3;   ///< timeouts in a row after which a plugin:/cmd: backend is not asked again; 0: never
  /// Bytes the worker's process group may hold resident while it evaluates (--backend-memory;
  /// sampled every 100 ms during an exchange; over it the worker is killed and the case is
  /// ERROR); 0: no limit. Resident memory, not address space: CUDA and ASan reserve address
  /// space far beyond what they use, so RLIMIT_AS would break them.
  std::uint64_t memory_bytes = default_backend_memory();
  /// CPU seconds each worker process may use over its life (--backend-cpu: RLIMIT_CPU, soft;
  /// SIGXCPU ends it, the case in flight is ERROR, the next case starts a new worker); 0: no limit.
  double cpu_s = 3600;
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
/// make_backend(name, opt) for a name given where no recorded source can be meant (trace,
/// compare, probe, fuzz, bench): a built-in backend or a spec (mutant:, plugin:, cmd:). Throws
/// std::invalid_argument "unknown backend 'NAME' (built in: ...)" for any other name (a typo
/// would otherwise become a recorded source that holds nothing), and what make_backend throws.
std::unique_ptr<Backend> make_named_backend(const std::string& name, const BackendOptions& opt);
/// The names make_named_backend accepts, for messages: "reference, cpu, cuda, onednn,
/// mutant:<fault>, plugin:PATH, cmd:COMMAND".
std::string named_backend_choices();

}  // namespace normcheck
