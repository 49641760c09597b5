// External worker processes: "cmd:COMMAND" (README "External process backends").
//
// One JSON object per line each way, tensors as .npy files. The host offers protocol 2 and
// speaks whichever the worker answers (1 or 2):
//   host -> worker  {"type": "hello", "protocol": 2, "protocols": [1, 2]}
//   worker -> host  {"protocol": 2, "name": "onnxruntime 1.22.0", "backward": true, "views": true}
//   host -> worker  {"type": "run", "id": 7, "op": "layer_norm", "out_dtype": "f16", "layout": "padded",
//                    "convention": {"eps": 1e-05, "eps_placement": "inside_sqrt", ..., "direction": "forward"},
//                    "inputs":  {"x": {"path": ".../7_x.npy", "dtype": "f16", "shape": [2, 8],
//                                      "strides": [11, 1], "offset": 5}, ...},
//                    "outputs": {"y": {"path": ".../7_out_y.npy", "dtype": "f16", "shape": [2, 8]}}}
//   worker -> host  {"id": 7, "outputs": {"y": {"path": ".../7_y.npy", "dtype": "f16"}}}
//                 | {"id": 7, "skip": "reason"} | {"id": 7, "error": "message"}
// Protocol 2: an input's file holds its storage as a 1-D array and the input is the view
// (shape, strides in elements, offset) into it (core/view.hpp present(), the problem's layout);
// backward problems are sent (direction "backward", input dy, outputs dx, d<param>) unless
// the hello said "backward": false, and views unless it said "views": false. Protocol 1: an
// input's file is the dense array, forward problems on contiguous inputs only.
// f64, f32 and f16 travel as '<f8', '<f4', '<f2'; bf16, fp8_e4m3fn and fp8_e5m2 as '<f4'
// holding values of their format, with "dtype" beside the path; int8 as '|i1'. Each output
// names its own dtype (h in the residual's, a quantized y in out_dtype, a scale in f32) and
// the optional ones (saved statistics "mean", "rstd") carry "optional": true: a worker may
// leave them out. EOF on stdin ends the worker.
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backends/child_process.hpp"
#include "backends/external.hpp"
#include "backends/isolated.hpp"
#include "backends/worker_protocol.hpp"
#include "core/json_bounded.hpp"
#include "core/tensor_file.hpp"
#include "core/view.hpp"
#include "spec/convention.hpp"

namespace normcheck {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kProtocol = 2;  // the newest the host speaks; it also speaks 1

/// The command's first word (after VAR=value assignments), quotes removed.
std::string first_word(const std::string& cmd) {
  std::istringstream in(cmd);
  std::string w;
  while (in >> w) {
    if (w.find('=') != std::string::npos && w.find('/') == std::string::npos && w.front() != '\'' && w.front() != '"') continue;
    if (w.size() >= 2 && (w.front() == '\'' || w.front() == '"') && w.back() == w.front()) w = w.substr(1, w.size() - 2);
    return w;
  }
  return {};
}

/// Whether `prog` names an executable file, directly (with a '/') or through PATH, or is a
/// shell builtin that commonly starts a command line ("cd dir && ./worker").
bool executable(const std::string& prog) {
  if (prog.empty()) return false;
  for (const char* builtin : {"cd", "exec", "export", "ulimit", "umask", "set", "."})
    if (prog == builtin) return true;
  auto ok = [](const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec) && access(p.c_str(), X_OK) == 0;
  };
  if (prog.find('/') != std::string::npos) return ok(prog);
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  std::string d;
  while (std::getline(dirs, d, ':'))
    if (ok(fs::path(d.empty() ? "." : d) / prog)) return true;
  return false;
}

class CmdBackend final : public detail::IsolatedBackend {
 public:
  CmdBackend(std::string command, BackendOptions opt)
      : IsolatedBackend(opt), command_(std::move(command)), opt_(std::move(opt)) {
    std::string tmpl = (fs::temp_directory_path() / "normcheck-cmd-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw BackendError(fmt::format("cmd: cannot create a temporary folder: {}", std::strerror(errno)));
    dir_ = tmpl;
    try {
      start();
    } catch (...) {
      std::error_code ec;
      fs::remove_all(dir_, ec);
      throw;
    }
  }
  ~CmdBackend() override {
    child_.reset();  // EOF to the worker, then wait or kill
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  // The command as given: the report names it, and a rerun line quotes it once, whole.
  std::string name() const override { return "cmd:" + command_; }
  std::string identity() const override { return worker_name_; }
  std::string description() const override {
    return fmt::format("external worker '{}'{}", command_, worker_name_.empty() ? "" : " [" + worker_name_ + "]");
  }
  // Protocol 2 workers get backward problems and views unless their hello declined them.
  bool supports_backward() const override { return protocol_ >= 2 && backward_; }
  bool takes_views() const override { return protocol_ >= 2 && views_; }

 protected:
  detail::Evaluation evaluate(const Problem& p, detail::Clock::time_point deadline) override {
    detail::Evaluation e;
    if (!child_ || !child_->alive()) {
      try {
        start();
      } catch (const std::exception& ex) {
        e.message = fmt::format("restarting the worker failed: {}", ex.what());
        return e;
      }
    }
    const long id = ++next_id_;
    std::vector<fs::path> files;
    auto cleanup = [&] {
      std::error_code ec;
      for (auto& f : files) fs::remove(f, ec);
    };
    json req = detail::worker_request(p, id, protocol_);
    try {
      for (auto& [name, t] : p.inputs) {
        const fs::path f = dir_ / fmt::format("{}_{}.npy", id, name);
        files.push_back(f);
        req["inputs"][name]["path"] = f.string();
        if (protocol_ < 2) {
          write_npy(f.string(), t, NpyBf16::as_f32);  // bf16 travels as float32 values
          continue;
        }
        write_npy(f.string(), detail::view_storage(t, p.layout, req["inputs"][name]), NpyBf16::as_f32);
      }
    } catch (const std::exception& ex) {
      cleanup();
      e.message = fmt::format("cmd: writing the inputs failed: {}", ex.what());
      return e;
    }
    for (auto& [oname, o] : req["outputs"].items()) {
      const fs::path of = dir_ / fmt::format("{}_out_{}.npy", id, oname);
      files.push_back(of);
      o["path"] = of.string();
    }
    json rep;
    try {
      child_->clear_stderr_tail();
      const std::string line = req.dump() + "\n";
      child_->write_all(line.data(), line.size(), deadline);
      rep = read_reply(deadline);
    } catch (const detail::ChildError& ex) {
      cleanup();
      e.message = failure(ex);
      e.timed_out = ex.kind == detail::ChildError::Kind::timeout;
      return e;
    } catch (const std::exception& ex) {  // a reply that breaks the protocol: restart the worker
      cleanup();
      e.message = fmt::format("worker broke the protocol: {}; restarted for the next case{}", ex.what(), stderr_note());
      child_->kill();
      return e;
    }
    detail::WorkerReply r = detail::interpret_worker_reply(rep, id);
    for (const auto& path : r.paths)
      if (fs::path(path).parent_path() == dir_) files.emplace_back(path);
    cleanup();
    switch (r.kind) {
      case detail::WorkerReply::Kind::wrong_id:
        e.message = r.message + "; restarted for the next case";
        child_->kill();
        return e;
      case detail::WorkerReply::Kind::skip:
        e.kind = detail::Evaluation::Kind::skip;
        e.message = r.message;
        return e;
      case detail::WorkerReply::Kind::error:
        e.message = fmt::format("worker error: {}{}", r.message, stderr_note());
        return e;
      case detail::WorkerReply::Kind::unusable:
        e.message = fmt::format("worker reply unusable: {}", r.message);
        return e;
      case detail::WorkerReply::Kind::outputs:
        e.kind = detail::Evaluation::Kind::outputs;
        e.outputs = std::move(r.outputs);
        return e;
    }
    return e;
  }

 private:
  std::chrono::milliseconds timeout() const {
    return std::chrono::milliseconds(static_cast<std::int64_t>(opt_.timeout_s * 1000));
  }

  std::string stderr_note() const {
    std::string t = child_ ? child_->stderr_tail() : "";
    if (t.empty()) return t;
    std::size_t at = t.size();
    for (int i = 0; i < 5 && at != std::string::npos && at > 0; ++i) at = t.rfind('\n', at - 1);
    if (at != std::string::npos && at > 0) t = t.substr(at + 1);
    for (char& c : t) if (c == '\n') c = '|';
    return "; worker stderr: " + t;
  }

  std::string failure(const detail::ChildError& ex) const {
    if (ex.kind == detail::ChildError::Kind::timeout)
      return fmt::format("worker did not answer within {:g} s (--timeout): killed, restarted for the next case{}", opt_.timeout_s,
                         stderr_note());
    if (ex.kind == detail::ChildError::Kind::died)
      return fmt::format("worker crashed: {}; restarted for the next case{}", ex.what(), stderr_note());
    if (ex.kind == detail::ChildError::Kind::memory)
      return fmt::format("{}; restarted for the next case{}", ex.what(), stderr_note());
    return fmt::format("worker failed: {}{}", ex.what(), stderr_note());
  }

  /// One reply line as JSON; throws std::runtime_error naming what is wrong with it.
  json read_reply(detail::Clock::time_point deadline) { return detail::parse_worker_line(child_->read_line(deadline)); }

  /// Starts the worker and completes the handshake. Throws BackendError.
  void start() {
    child_.reset();
    try {
      // RLIMIT_CPU is set by the shell itself before it runs the command: the prlimit that
      // ChildProcess applies after the start comes too late for a child the shell forks at once.
      std::vector<std::string> argv{"/bin/sh", "-c", command_};
      if (opt_.cpu_s > 0) {
        const auto soft = static_cast<long long>(std::ceil(opt_.cpu_s));
        argv = {"/bin/sh", "-c", fmt::format("ulimit -S -t {} && ulimit -H -t {} && exec /bin/sh -c \"$1\"", soft, soft + 5),
                "normcheck-worker", command_};
      }
      child_ = std::make_unique<detail::ChildProcess>(argv, detail::ChildLimits{opt_.memory_bytes, opt_.cpu_s, opt_.cpu_s > 0});
      const auto deadline = detail::Clock::now() + timeout();
      const std::string hello = json{{"type", "hello"}, {"protocol", kProtocol}, {"protocols", {1, kProtocol}}}.dump() + "\n";
      child_->write_all(hello.data(), hello.size(), deadline);
      const json j = read_reply(deadline);
      if (!j.is_object() || !j.contains("protocol") || !(j["protocol"] == 1 || j["protocol"] == 2))
        throw BackendError(fmt::format("cmd {}: the worker answered the handshake with {} (expected {{\"protocol\": 1 or 2, ...}})",
                                       command_, j.dump().substr(0, 200)));
      auto flag = [&](const char* key) {
        if (!j.contains(key)) return true;
        if (!j[key].is_boolean()) throw BackendError(fmt::format("cmd {}: the handshake's \"{}\" must be true or false", command_, key));
        return j[key].get<bool>();
      };
      const int protocol = j["protocol"].get<int>();
      const bool backward = flag("backward"), views = flag("views");
      const std::string name = j.contains("name") && j["name"].is_string() ? j["name"].get<std::string>() : "";
      // A restarted worker must be the worker the run asked: the runner decided what to send
      // it (backward problems, views) from the first handshake, so a worker answering
      // another one now would be handed dense inputs for a case reported as a view case.
      if (handshakes_++ > 0 && (protocol != protocol_ || backward != backward_ || views != views_ || name != worker_name_))
        throw BackendError(fmt::format("cmd {}: the restarted worker answered another handshake (protocol {}, backward {}, "
                                       "views {}, name '{}'; first: protocol {}, backward {}, views {}, name '{}')",
                                       command_, protocol, backward, views, name, protocol_, backward_, views_, worker_name_));
      protocol_ = protocol;
      backward_ = backward;
      views_ = views;
      worker_name_ = name;
    } catch (const BackendError&) {
      child_.reset();
      throw;
    } catch (const detail::ChildError& ex) {
      const std::string note = stderr_note();
      child_.reset();
      throw BackendError(fmt::format("cmd {}: the worker failed during the handshake: {}{}", command_,
                                     ex.kind == detail::ChildError::Kind::timeout
                                         ? fmt::format("no answer within {:g} s (--timeout)", opt_.timeout_s)
                                         : std::string(ex.what()),
                                     note));
    } catch (const std::exception& ex) {
      const std::string note = stderr_note();
      child_.reset();
      throw BackendError(fmt::format("cmd {}: bad handshake: {}{}", command_, ex.what(), note));
    }
  }

  std::string command_;
  BackendOptions opt_;
  fs::path dir_;
  std::string worker_name_;
  int protocol_ = 1;                  ///< what the worker's hello answered
  bool backward_ = true, views_ = true;  ///< protocol 2: what the hello did not decline
  long next_id_ = 0;
  int handshakes_ = 0;                ///< completed handshakes (a restart must repeat the first)
  std::unique_ptr<detail::ChildProcess> child_;
};

}  // namespace

namespace detail {

json parse_worker_line(const std::string& line) {
  try {
    return parse_json_bounded(line, "worker reply");
  } catch (const JsonError& ex) {
    throw std::runtime_error(fmt::format("a reply line that is not JSON: '{}' ({}; the worker must print only protocol "
                                         "lines on stdout; logs go to stderr)",
                                         line.substr(0, 200), ex.detail.substr(0, 200)));
  }
}

json worker_request(const Problem& p, long id, int protocol) {
  json req = {{"type", "run"}, {"id", id}, {"op", std::string(to_string(p.op))}, {"out_dtype", std::string(dtype_name(p.out_dtype))}};
  if (protocol >= 2) req["layout"] = std::string(to_string(p.layout));
  // The op's convention keys (common core and its own parameters) by the one writer
  // (spec/convention.hpp); momentum null = the cumulative average.
  req["convention"] = convention_json(p.conv, p.op);
  req["inputs"] = json::object();
  for (auto& [name, t] : p.inputs)
    req["inputs"][name] = {{"dtype", std::string(dtype_name(t.dtype()))}, {"shape", t.shape()}};
  // Every output the op defines (y; running stats, h, q_hat/k_hat, scale...), each in its own
  // dtype; the optional ones (saved statistics) marked "optional": true.
  req["outputs"] = json::object();
  for (const auto& [oname, oshape] : output_shapes(p)) {
    req["outputs"][oname] = {{"dtype", std::string(dtype_name(output_dtype(p, oname)))}, {"shape", oshape}};
    if (is_optional_output(p, oname)) req["outputs"][oname]["optional"] = true;
  }
  return req;
}

Tensor view_storage(const Tensor& t, MemoryLayout layout, json& entry) {
  StridedView v = present(t, layout);
  Tensor storage(t.dtype(), Shape{v.storage_elements()});
  if (!v.storage.empty()) std::memcpy(storage.data(), v.storage.data(), v.storage.size());
  entry["strides"] = v.strides;
  entry["offset"] = v.offset;
  return storage;
}

WorkerReply interpret_worker_reply(const json& rep, long id) {
  WorkerReply r;
  if (!rep.is_object() || !rep.contains("id") || rep.at("id") != id) {
    r.kind = WorkerReply::Kind::wrong_id;
    r.message = fmt::format("worker answered request {} with {}: ids must match", id, rep.dump().substr(0, 200));
    return r;
  }
  if (rep.contains("skip")) {
    r.kind = WorkerReply::Kind::skip;
    r.message = rep.at("skip").is_string() ? rep.at("skip").get<std::string>() : std::string();
    // A skip says why (README, the worker protocol): an empty or non-string reason is the
    // worker's error, not a SKIPPED with nothing to read (false-pass audit).
    if (r.message.find_first_not_of(" \t\r\n") == std::string::npos) {
      r.kind = WorkerReply::Kind::error;
      r.message = fmt::format("worker skipped with no reason ({}): a skip must be a non-empty string saying why", rep.at("skip").dump().substr(0, 80));
    }
    return r;
  }
  if (rep.contains("error")) {
    r.kind = WorkerReply::Kind::error;
    r.message = rep.at("error").is_string() ? rep.at("error").get<std::string>() : rep.at("error").dump();
    return r;
  }
  try {
    if (!rep.contains("outputs") || !rep.at("outputs").is_object())
      throw std::runtime_error("reply has none of \"outputs\", \"skip\", \"error\"");
    for (const auto& [name, o] : rep.at("outputs").items()) {
      if (!o.is_object() || !o.contains("path") || !o.at("path").is_string())
        throw std::runtime_error(fmt::format("output '{}' has no \"path\"", name));
      NpyReadOptions opt;
      if (o.contains("dtype")) {
        opt.as = o.at("dtype").is_string() ? parse_dtype(o.at("dtype").get<std::string>()) : std::nullopt;
        if (!opt.as) throw std::runtime_error(fmt::format("output '{}' has an unknown dtype {}", name, o.at("dtype").dump()));
      }
      const std::string path = o.at("path").get<std::string>();
      r.paths.push_back(path);
      r.outputs[name] = read_npy(path, opt);
    }
    r.kind = WorkerReply::Kind::outputs;
  } catch (const std::exception& ex) {
    r.outputs.clear();
    r.kind = WorkerReply::Kind::unusable;
    r.message = ex.what();
  }
  return r;
}

}  // namespace detail

std::unique_ptr<Backend> make_cmd_backend(const std::string& command, const BackendOptions& opt) {
  const std::string prog = first_word(command);
  if (prog.empty()) throw std::invalid_argument("cmd: empty command (cmd:\"python3 my_worker.py\")");
  if (!executable(prog))
    throw std::invalid_argument(fmt::format("cmd: '{}' is not an executable file{}", prog,
                                            prog.find('/') == std::string::npos ? " found in PATH" : ""));
  return std::make_unique<CmdBackend>(command, opt);
}

}  // namespace normcheck
