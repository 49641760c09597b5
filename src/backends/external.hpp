// Backends that live outside normcheck's own kernels: C-ABI plugins, external worker
// processes and third-party libraries. The registry (registry.cpp) creates them by name.
#pragma once

#include <memory>
#include <string>

#include "backends/registry.hpp"

namespace normcheck {

/// A C-ABI plugin (normcheck_plugin.h) loaded in a worker process "EXE __plugin-host PATH".
/// `path` must name an existing file (std::invalid_argument otherwise); a library that does
/// not load or has another ABI version throws BackendError.
std::unique_ptr<Backend> make_plugin_backend(const std::string& path, const BackendOptions& opt);

/// An external worker process started once with /bin/sh -c COMMAND, speaking JSON lines
/// on stdin/stdout (README "External process backends"). The first word of the command
/// must be an executable (std::invalid_argument otherwise); a worker that does not answer
/// the handshake throws BackendError.
std::unique_ptr<Backend> make_cmd_backend(const std::string& command, const BackendOptions& opt);

/// oneDNN's layer normalization primitive (CPU engine), when normcheck was built with
/// oneDNN; otherwise a backend whose unavailable() says why. poison_y: y is filled with 0xFF
/// bytes before oneDNN writes it, so that an element it leaves unwritten reads as NaN in a
/// check (the default, `--backend onednn`); `normcheck bench` times its peer without the
/// fill, as the cpu backend is timed (y allocated, not filled).
std::unique_ptr<Backend> make_onednn_backend(bool poison_y = true);

/// argv[1] of the plugin worker process.
inline constexpr const char* kPluginHostCommand = "__plugin-host";
/// Entry point of the plugin worker process (argv: EXE __plugin-host PATH): loads the
/// plugin, answers the handshake, then evaluates requests from stdin until EOF.
int plugin_host_main(int argc, char** argv);

}  // namespace normcheck
