// C-ABI plugins (normcheck_plugin.h) evaluated in a worker process.
//
// The parent (PluginBackend) and the worker (plugin_host_main, the same executable run as
// "normcheck __plugin-host LIB") exchange frames over the worker's stdin/stdout; the frames
// and their checks on both ends are in plugin_frames.hpp. The worker moves its own stdout
// to stderr before loading the plugin, so whatever the plugin prints cannot corrupt the
// protocol.
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "backends/child_process.hpp"
#include "backends/external.hpp"
#include "backends/isolated.hpp"
#include "backends/normcheck_plugin.h"
#include "backends/plugin_frames.hpp"

namespace normcheck {

namespace {

using detail::kEval;
using detail::kErrr;
using detail::kFail;
using detail::kHelo;
using detail::kTextFrameBytes;

// ---- worker side ------------------------------------------------------------------------

int g_in = -1, g_out = -1;  // the worker's protocol fds

bool read_fd(void* p, std::size_t n) {
  auto* c = static_cast<char*>(p);
  while (n > 0) {
    const ssize_t r = read(g_in, c, n);
    if (r > 0) { c += r; n -= static_cast<std::size_t>(r); continue; }
    if (r < 0 && errno == EINTR) continue;
    return false;
  }
  return true;
}

void write_fd(const void* p, std::size_t n) {
  const auto* c = static_cast<const char*>(p);
  while (n > 0) {
    const ssize_t w = write(g_out, c, n);
    if (w > 0) { c += w; n -= static_cast<std::size_t>(w); continue; }
    if (w < 0 && errno == EINTR) continue;
    _exit(1);  // the parent is gone
  }
}

void send_frame(std::uint32_t t, const std::string& payload) {
  const std::uint64_t n = payload.size();
  write_fd(&t, sizeof t);
  write_fd(&n, sizeof n);
  write_fd(payload.data(), payload.size());
}

// ---- parent side ------------------------------------------------------------------------

/// The parent: starts the worker, sends problems, turns failures into Evaluation errors.
class PluginBackend final : public detail::IsolatedBackend {
 public:
  PluginBackend(std::string spec_path, std::string abs_path, BackendOptions opt)
      : IsolatedBackend(opt),
        spec_(std::move(spec_path)),
        path_(std::move(abs_path)),
        opt_(std::move(opt)) {
    if (opt_.host_exe.empty()) {
      std::error_code ec;
      opt_.host_exe = std::filesystem::read_symlink("/proc/self/exe", ec).string();
      if (ec) throw BackendError(fmt::format("plugin {}: cannot find the normcheck executable: {}", spec_, ec.message()));
    }
    start();  // load errors surface now, before any case runs
  }
  std::string name() const override { return "plugin:" + spec_; }
  std::string identity() const override { return plugin_name_; }
  // ABI 2 plugins get every op, backward problems and views; ABI 1 plugins neither.
  bool supports_backward() const override { return abi_ >= 2; }
  bool takes_views() const override { return abi_ >= 2; }
  std::string description() const override {
    return fmt::format("C-ABI plugin {}{} (in a worker process)", path_, plugin_name_.empty() ? "" : " [" + plugin_name_ + "]");
  }

 protected:
  detail::Evaluation evaluate(const Problem& p, detail::Clock::time_point deadline) override {
    detail::Evaluation e;
    const detail::Request req = detail::encode_request(p, abi_);
    if (req.skip) {
      e.kind = detail::Evaluation::Kind::skip;
      e.message = *req.skip;
      return e;
    }
    if (!child_ || !child_->alive()) {
      try {
        start();
      } catch (const std::exception& ex) {
        e.message = fmt::format("restarting the plugin worker failed: {}", ex.what());
        return e;
      }
    }
    try {
      child_->clear_stderr_tail();
      send(kEval, req.payload, deadline);
      // A reply is the outputs the request names (their bytes) or a message: nothing larger is read.
      auto r = detail::interpret_plugin_reply(receive(deadline, detail::reply_bound(p, abi_)), p, plugin_name_, abi_);
      if (r.kill_worker) child_->kill();
      e = std::move(r.evaluation);
    } catch (const detail::ChildError& ex) {
      e.message = failure(ex);
      e.timed_out = ex.kind == detail::ChildError::Kind::timeout;
    }
    return e;
  }

 private:
  std::chrono::milliseconds timeout() const {
    return std::chrono::milliseconds(static_cast<std::int64_t>(opt_.timeout_s * 1000));
  }

  std::string failure(const detail::ChildError& ex) {
    std::string what;
    if (ex.kind == detail::ChildError::Kind::timeout)
      what = fmt::format("plugin did not answer within {:g} s (--timeout): worker killed, restarted for the next case", opt_.timeout_s);
    else if (ex.kind == detail::ChildError::Kind::died)
      what = fmt::format("plugin crashed: {}; restarted for the next case", ex.what());
    else if (ex.kind == detail::ChildError::Kind::memory)
      what = fmt::format("plugin {}; restarted for the next case", ex.what());
    else
      what = fmt::format("plugin worker failed: {}", ex.what());
    const std::string tail = child_ ? child_->stderr_tail() : "";
    if (!tail.empty()) what += fmt::format("; worker stderr: {}", last_lines(tail, 5));
    return what;
  }

  static std::string last_lines(const std::string& s, int k) {
    std::size_t at = s.size();
    for (int i = 0; i < k && at != std::string::npos && at > 0; ++i) at = s.rfind('\n', at - 1);
    std::string t = (at == std::string::npos || at == 0) ? s : s.substr(at + 1);
    for (char& c : t) if (c == '\n') c = '|';
    return t;
  }

  void send(std::uint32_t t, const std::string& payload, detail::Clock::time_point deadline) {
    const std::uint64_t n = payload.size();
    child_->write_all(&t, sizeof t, deadline);
    child_->write_all(&n, sizeof n, deadline);
    child_->write_all(payload.data(), payload.size(), deadline);
  }

  /// Reads one frame of at most max_bytes payload bytes (what the request can need: a
  /// forged header claiming more is refused before anything is allocated, and the worker is
  /// killed). Throws detail::ChildError.
  detail::Frame receive(detail::Clock::time_point deadline, std::size_t max_bytes) {
    try {
      return detail::read_frame([&](void* d, std::size_t n) { child_->read_exact(d, n, deadline); }, max_bytes);
    } catch (const detail::FrameError& ex) {
      child_->kill();
      throw detail::ChildError(detail::ChildError::Kind::io, ex.what());
    }
  }

  /// Starts the worker and reads its handshake. Throws BackendError.
  void start() {
    child_.reset();
    try {
      child_ = std::make_unique<detail::ChildProcess>(std::vector<std::string>{opt_.host_exe, kPluginHostCommand, path_},
                                                      detail::ChildLimits{opt_.memory_bytes, opt_.cpu_s});
      auto [t, payload] = receive(detail::Clock::now() + timeout(), kTextFrameBytes);
      if (t == kFail) throw BackendError(fmt::format("plugin {}: {}", spec_, payload));
      if (t != kHelo) throw BackendError(fmt::format("plugin {}: unexpected handshake from the worker", spec_));
      std::tie(abi_, plugin_name_) = detail::parse_helo(payload);
    } catch (const detail::FrameError& ex) {
      child_.reset();
      throw BackendError(fmt::format("plugin {}: bad handshake: {}", spec_, ex.what()));
    } catch (const detail::ChildError& ex) {
      std::string tail = child_ ? child_->stderr_tail() : "";
      child_.reset();
      throw BackendError(fmt::format("plugin {}: worker failed while loading it: {}{}", spec_, ex.what(),
                                     tail.empty() ? "" : "; worker stderr: " + last_lines(tail, 5)));
    }
  }

  std::string spec_, path_;
  BackendOptions opt_;
  std::string plugin_name_;
  std::uint32_t abi_ = NC_PLUGIN_ABI_VERSION;  ///< the plugin's, from its handshake
  std::unique_ptr<detail::ChildProcess> child_;
};

}  // namespace

std::unique_ptr<Backend> make_plugin_backend(const std::string& path, const BackendOptions& opt) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (path.empty()) throw std::invalid_argument("plugin: give the path of a shared library (plugin:/path/libfoo.so)");
  if (!fs::exists(path, ec)) throw std::invalid_argument(fmt::format("plugin: no such file '{}'", path));
  if (fs::is_directory(path, ec)) throw std::invalid_argument(fmt::format("plugin: '{}' is a folder, not a shared library", path));
  return std::make_unique<PluginBackend>(path, fs::absolute(path, ec).string(), opt);
}

int plugin_host_main(int argc, char** argv) {
  // Protocol on private copies of stdin/stdout; the plugin's own prints go to stderr.
  g_in = dup(0);
  g_out = dup(1);
  if (g_in < 0 || g_out < 0) return 1;
  dup2(2, 1);
  const int devnull = open("/dev/null", O_RDONLY);
  if (devnull >= 0) { dup2(devnull, 0); close(devnull); }
  rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);  // a crashing plugin leaves no core files around
  if (argc != 3) {
    send_frame(kFail, fmt::format("usage: normcheck {} LIB.so", kPluginHostCommand));
    return 2;
  }
  void* lib = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* err = dlerror();
    send_frame(kFail, fmt::format("cannot load: {}", err ? err : "dlopen failed"));
    return 1;
  }
  auto sym = [&](const char* name) { return dlsym(lib, name); };
  auto version = reinterpret_cast<nc_plugin_abi_version_fn>(sym("nc_plugin_abi_version"));
  auto supports = reinterpret_cast<nc_plugin_supports_fn>(sym("nc_plugin_supports"));
  auto run = reinterpret_cast<nc_plugin_run_fn>(sym("nc_plugin_run"));
  auto pname = reinterpret_cast<nc_plugin_name_fn>(sym("nc_plugin_name"));
  std::string missing;
  if (!version) missing += " nc_plugin_abi_version";
  if (!supports) missing += " nc_plugin_supports";
  if (!run) missing += " nc_plugin_run";
  if (!missing.empty()) {
    send_frame(kFail, fmt::format("not a normcheck plugin: missing exported function(s){} (see normcheck_plugin.h)", missing));
    return 1;
  }
  const std::uint32_t v = version();
  if (v < detail::kOldestAbi || v > NC_PLUGIN_ABI_VERSION) {
    send_frame(kFail, fmt::format("plugin ABI version {} but this normcheck speaks versions {} to {}: rebuild the plugin "
                                  "against this normcheck's normcheck_plugin.h",
                                  v, detail::kOldestAbi, NC_PLUGIN_ABI_VERSION));
    return 1;
  }
  const char* nm = pname ? pname() : nullptr;
  send_frame(kHelo, detail::helo_payload(v, nm ? std::string(nm) : std::string()));
  for (;;) {
    std::uint32_t t = 0;
    std::uint64_t n = 0;
    if (!read_fd(&t, sizeof t) || !read_fd(&n, sizeof n)) return 0;  // EOF: the run is over
    std::string payload(n, '\0');
    if (!read_fd(payload.data(), n)) return 0;
    if (t != kEval) {
      send_frame(kErrr, "host: unknown request");
      continue;
    }
    detail::Frame reply;
    try {
      // ABI 1 plugins' functions take ABI 1's problem (dlsym gives addresses, typed by version).
      reply = v == 1 ? detail::serve_request_v1(payload, reinterpret_cast<detail::NcSupportsV1>(supports),
                                                reinterpret_cast<detail::NcRunV1>(run))
                     : detail::serve_request(payload, supports, run);
    } catch (const std::exception& e) {
      reply = {kErrr, fmt::format("host: {}", e.what())};
    }
    send_frame(reply.tag, reply.payload);
  }
}

}  // namespace normcheck
