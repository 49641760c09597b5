// C-ABI plugins (normcheck_plugin.h) evaluated in a worker process.
//
// The parent (PluginBackend) and the worker (plugin_host_main, the same executable run as
// "normcheck __plugin-host LIB") exchange frames over the worker's stdin/stdout:
//   frame = u32 tag, u64 payload length, payload (native byte order: same machine, same binary)
//   worker -> parent after loading: HELO name | FAIL message
//   parent -> worker: EVAL problem (convention fields, then named tensors with their bytes)
//   worker -> parent: OKAY y bytes | SKIP reason | ERRR message
// The worker moves its own stdout to stderr before loading the plugin, so whatever the
// plugin prints cannot corrupt the protocol.
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
#include <vector>

#include <fmt/format.h>

#include "backends/child_process.hpp"
#include "backends/external.hpp"
#include "backends/isolated.hpp"
#include "backends/normcheck_plugin.h"

namespace normcheck {

namespace {

constexpr std::uint32_t tag(const char (&s)[5]) {
  return static_cast<std::uint32_t>(s[0]) | static_cast<std::uint32_t>(s[1]) << 8 |
         static_cast<std::uint32_t>(s[2]) << 16 | static_cast<std::uint32_t>(s[3]) << 24;
}
constexpr std::uint32_t kHelo = tag("HELO"), kFail = tag("FAIL"), kEval = tag("EVAL"), kOkay = tag("OKAY"),
                        kSkip = tag("SKIP"), kErrr = tag("ERRR");
constexpr std::size_t kGuardBytes = 4096;   // after y: catches writes past its end
constexpr unsigned char kGuardByte = 0xA5;
constexpr std::size_t kMsgBytes = 4096;     // reason / error buffers handed to the plugin
/// The largest text frame (HELO name, FAIL/SKIP/ERRR message) the parent accepts: the host
/// writes at most kMsgBytes of the plugin's text plus its own short wording.
constexpr std::size_t kTextFrameBytes = 64 * 1024;

/// Appends plain values and strings to a byte buffer.
struct Writer {
  std::string buf;
  template <class T> void put(const T& v) { buf.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void str(const std::string& s) { put(static_cast<std::uint64_t>(s.size())); buf += s; }
  void bytes(const void* p, std::size_t n) { put(static_cast<std::uint64_t>(n)); buf.append(static_cast<const char*>(p), n); }
};

/// Reads what Writer wrote; throws std::runtime_error on truncation.
struct Reader {
  const std::string& buf;
  std::size_t at = 0;
  template <class T> T get() {
    if (at + sizeof(T) > buf.size()) throw std::runtime_error("truncated frame");
    T v;
    std::memcpy(&v, buf.data() + at, sizeof v);
    at += sizeof v;
    return v;
  }
  std::string str() {
    const auto n = get<std::uint64_t>();
    if (at + n > buf.size()) throw std::runtime_error("truncated frame");
    std::string s = buf.substr(at, n);
    at += n;
    return s;
  }
};

nc_dtype to_nc(DType d) {
  switch (d) {
    case DType::f64: return NC_F64;
    case DType::f32: return NC_F32;
    case DType::f16: return NC_F16;
    case DType::bf16: return NC_BF16;
    case DType::fp8_e4m3fn:
    case DType::fp8_e5m2:
    case DType::int8: break;  // not in ABI 1: evaluate() skips such problems first
  }
  return NC_F64;
}

std::size_t nc_bytes(nc_dtype d) { return d == NC_F64 ? 8 : d == NC_F32 ? 4 : 2; }

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

std::string message(const char* buf) {
  std::string s(buf, strnlen(buf, kMsgBytes - 1));
  return s.empty() ? std::string("(no message)") : s;
}

/// Evaluates one EVAL payload with the plugin's functions; returns the reply frame.
std::pair<std::uint32_t, std::string> serve(const std::string& payload, nc_plugin_supports_fn supports, nc_plugin_run_fn run) {
  Reader r{payload};
  nc_problem p{};
  p.abi_version = NC_PLUGIN_ABI_VERSION;
  p.op = static_cast<nc_op>(r.get<std::uint32_t>());
  p.eps = r.get<double>();
  p.eps_placement = static_cast<nc_eps_placement>(r.get<std::uint32_t>());
  p.variance = static_cast<nc_variance>(r.get<std::uint32_t>());
  p.affine = static_cast<nc_affine>(r.get<std::uint32_t>());
  p.normalized_ndim = r.get<std::int32_t>();
  p.acc_dtype = static_cast<nc_dtype>(r.get<std::uint32_t>());
  p.out_dtype = static_cast<nc_dtype>(r.get<std::uint32_t>());
  const auto n = r.get<std::uint32_t>();
  std::vector<std::string> names(n);
  std::vector<std::vector<double>> data(n);  // 8-byte aligned storage for every dtype
  std::vector<nc_tensor> ts(n);
  for (std::uint32_t k = 0; k < n; ++k) {
    names[k] = r.str();
    nc_tensor& t = ts[k];
    t.dtype = static_cast<nc_dtype>(r.get<std::uint32_t>());
    t.ndim = r.get<std::int32_t>();
    for (int d = 0; d < t.ndim; ++d) t.shape[d] = r.get<std::int64_t>();
    std::int64_t st = 1;
    for (int d = t.ndim; d-- > 0;) { t.strides[d] = st; st *= t.shape[d]; }
    const std::string bytes = r.str();
    data[k].resize((bytes.size() + sizeof(double) - 1) / sizeof(double));
    std::memcpy(data[k].data(), bytes.data(), bytes.size());
  }
  // y: the shape of x in out_dtype, NaN-filled, with a guard zone after it.
  const nc_tensor* x = nullptr;
  for (std::uint32_t k = 0; k < n; ++k) {
    ts[k].name = names[k].c_str();
    ts[k].data = data[k].data();
    if (names[k] == "x") x = &ts[k], p.x = &ts[k];
    else if (names[k] == "gamma") p.gamma = &ts[k];
    else if (names[k] == "beta") p.beta = &ts[k];
  }
  if (!x) return {kErrr, "host: request without x"};
  nc_tensor y = *x;
  y.name = "y";
  y.dtype = p.out_dtype;
  std::int64_t count = 1;
  for (int d = 0; d < y.ndim; ++d) count *= y.shape[d];
  const std::size_t ybytes = static_cast<std::size_t>(count) * nc_bytes(p.out_dtype);
  std::vector<unsigned char> ybuf(ybytes + kGuardBytes, kGuardByte);
  std::memset(ybuf.data(), 0xff, ybytes);
  y.data = ybuf.data();
  const nc_tensor y_before = y;
  p.y = &y;

  char msg[kMsgBytes] = {0};
  if (!supports(&p, msg, sizeof msg)) return {kSkip, message(msg)};
  msg[0] = 0;
  if (run(&p, msg, sizeof msg) != 0) return {kErrr, message(msg)};
  bool same = y.name == y_before.name && y.dtype == y_before.dtype && y.ndim == y_before.ndim && y.data == y_before.data;
  for (int d = 0; same && d < NC_MAX_NDIM; ++d) same = y.shape[d] == y_before.shape[d] && y.strides[d] == y_before.strides[d];
  if (!same) {
    auto dn = [](nc_dtype d) { return d == NC_F64 ? "f64" : d == NC_F32 ? "f32" : d == NC_F16 ? "f16" : d == NC_BF16 ? "bf16" : "?"; };
    std::string s = fmt::format("plugin modified the output descriptor y (dtype {} -> {}, ndim {} -> {}", dn(y_before.dtype),
                                dn(y.dtype), y_before.ndim, y.ndim);
    if (y.ndim >= 0 && y.ndim <= NC_MAX_NDIM) {
      s += ", shape [";
      for (int d = 0; d < y.ndim; ++d) s += fmt::format("{}{}", d ? ", " : "", y.shape[d]);
      s += "]";
    }
    return {kErrr, s + "): the output must keep the shape of x and dtype out_dtype"};
  }
  std::size_t bad = 0, last = 0;
  for (std::size_t i = 0; i < kGuardBytes; ++i)
    if (ybuf[ybytes + i] != kGuardByte) ++bad, last = i;
  if (bad)
    return {kErrr, fmt::format("plugin wrote past the end of output y ({} of the {} bytes after it changed, the last at "
                               "byte +{}): y holds {} elements of {} bytes; wrong output shape or dtype?",
                               bad, kGuardBytes, last, count, nc_bytes(p.out_dtype))};
  return {kOkay, std::string(reinterpret_cast<const char*>(ybuf.data()), ybytes)};
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
  std::string description() const override {
    return fmt::format("C-ABI plugin {}{} (in a worker process)", path_, plugin_name_.empty() ? "" : " [" + plugin_name_ + "]");
  }

 protected:
  detail::Evaluation evaluate(const Problem& p, detail::Clock::time_point deadline) override {
    detail::Evaluation e;
    if (p.op != Op::layer_norm && p.op != Op::rms_norm) {  // the fields of the other ops come with ABI 2
      e.kind = detail::Evaluation::Kind::skip;
      e.message = fmt::format("plugin ABI {} covers layer_norm and rms_norm, not {}", NC_PLUGIN_ABI_VERSION, to_string(p.op));
      return e;
    }
    for (auto& [name, t] : p.inputs)
      if (is_quantized(t.dtype())) {
        e.kind = detail::Evaluation::Kind::skip;
        e.message = fmt::format("plugin ABI {} has no {} dtype (input {})", NC_PLUGIN_ABI_VERSION, dtype_name(t.dtype()), name);
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
    Writer w;
    w.put(static_cast<std::uint32_t>(p.op == Op::layer_norm ? NC_LAYER_NORM : NC_RMS_NORM));  // ABI 1: these two
    w.put(p.conv.eps);
    w.put(static_cast<std::uint32_t>(p.conv.eps_placement));
    w.put(static_cast<std::uint32_t>(p.conv.variance));
    w.put(static_cast<std::uint32_t>(p.conv.affine));
    w.put(static_cast<std::int32_t>(p.conv.normalized_shape.size()));
    w.put(static_cast<std::uint32_t>(to_nc(p.conv.acc_dtype)));
    w.put(static_cast<std::uint32_t>(to_nc(p.out_dtype)));
    w.put(static_cast<std::uint32_t>(p.inputs.size()));
    for (auto& [name, t] : p.inputs) {
      if (t.shape().size() > NC_MAX_NDIM) {
        e.kind = detail::Evaluation::Kind::skip;
        e.message = fmt::format("plugin ABI: input {} has {} dims (at most {})", name, t.shape().size(), NC_MAX_NDIM);
        return e;
      }
      w.str(name);
      w.put(static_cast<std::uint32_t>(to_nc(t.dtype())));
      w.put(static_cast<std::int32_t>(t.shape().size()));
      for (auto d : t.shape()) w.put(static_cast<std::int64_t>(d));
      w.bytes(t.data(), t.nbytes());
    }
    try {
      child_->clear_stderr_tail();
      send(kEval, w.buf, deadline);
      // A reply is y (out_dtype, the shape of x) or a message: nothing larger is read.
      const std::size_t y_bytes = static_cast<std::size_t>(numel(p.x().shape())) * format_info(p.out_dtype).bytes;
      auto [t, payload] = receive(deadline, std::max(y_bytes, kTextFrameBytes));
      if (t == kSkip) {
        e.kind = detail::Evaluation::Kind::skip;
        e.message = fmt::format("{}: {}", plugin_name_.empty() ? "plugin" : plugin_name_, payload);
      } else if (t == kErrr) {
        e.message = fmt::format("plugin error: {}", payload);
      } else if (t == kOkay) {
        Tensor y(p.out_dtype, p.x().shape());
        if (payload.size() != y.nbytes()) {
          e.message = fmt::format("plugin worker sent {} bytes for y, expected {}", payload.size(), y.nbytes());
          child_->kill();
        } else {
          std::memcpy(y.data(), payload.data(), payload.size());
          e.kind = detail::Evaluation::Kind::outputs;
          e.outputs["y"] = std::move(y);
        }
      } else {
        e.message = "plugin worker sent an unknown frame";
        child_->kill();
      }
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
  std::pair<std::uint32_t, std::string> receive(detail::Clock::time_point deadline, std::size_t max_bytes) {
    std::uint32_t t = 0;
    std::uint64_t n = 0;
    child_->read_exact(&t, sizeof t, deadline);
    child_->read_exact(&n, sizeof n, deadline);
    if (n > max_bytes) {
      child_->kill();
      throw detail::ChildError(detail::ChildError::Kind::io,
                               fmt::format("plugin worker sent an oversized frame: {} bytes claimed, at most {} expected",
                                           n, max_bytes));
    }
    std::string payload(n, '\0');
    child_->read_exact(payload.data(), n, deadline);
    return {t, std::move(payload)};
  }

  /// Starts the worker and reads its handshake. Throws BackendError.
  void start() {
    child_.reset();
    try {
      child_ = std::make_unique<detail::ChildProcess>(std::vector<std::string>{opt_.host_exe, kPluginHostCommand, path_});
      auto [t, payload] = receive(detail::Clock::now() + timeout(), kTextFrameBytes);
      if (t == kFail) throw BackendError(fmt::format("plugin {}: {}", spec_, payload));
      if (t != kHelo) throw BackendError(fmt::format("plugin {}: unexpected handshake from the worker", spec_));
      plugin_name_ = payload;
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
  if (v != NC_PLUGIN_ABI_VERSION) {
    send_frame(kFail, fmt::format("plugin ABI version {} but this normcheck speaks version {}: rebuild the plugin against "
                                  "this normcheck's normcheck_plugin.h",
                                  v, NC_PLUGIN_ABI_VERSION));
    return 1;
  }
  const char* nm = pname ? pname() : nullptr;
  send_frame(kHelo, nm ? std::string(nm) : std::string());
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
    std::pair<std::uint32_t, std::string> reply;
    try {
      reply = serve(payload, supports, run);
    } catch (const std::exception& e) {
      reply = {kErrr, fmt::format("host: {}", e.what())};
    }
    send_frame(reply.first, reply.second);
  }
}

}  // namespace normcheck
