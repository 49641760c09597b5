#include "backends/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include <fmt/format.h>

extern char** environ;

namespace normcheck::detail {

namespace {

constexpr std::size_t kTailBytes = 4096;

/// Makes sure fds 0, 1, 2 are open (CI may start us with no stdin): otherwise a pipe or
/// socket created below could land on one of them and dup2 would not clear its CLOEXEC.
void ensure_std_fds() {
  for (int fd = 0; fd < 3; ++fd)
    if (fcntl(fd, F_GETFD) == -1 && errno == EBADF) {
      int n = open("/dev/null", O_RDWR);
      if (n >= 0 && n != fd) { dup2(n, fd); close(n); }
    }
}

void set_nonblock(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

// The process groups of the running children, for the handler below: a normcheck killed by
// SIGTERM (a CI timeout), SIGINT (Ctrl-C) or SIGHUP took its workers' destructors with it,
// and a hung worker outlived it (false-pass audit 21). Slots hold a group id or 0.
constexpr int kGroupSlots = 256;
std::atomic<pid_t> g_groups[kGroupSlots];

/// Kills every registered group, then dies of `sig` as the default action would (kill,
/// signal, raise: async-signal-safe).
extern "C" void kill_groups_and_die(int sig) {
  for (auto& g : g_groups)
    if (const pid_t pg = g.load(std::memory_order_relaxed); pg > 0) ::kill(-pg, SIGKILL);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

/// Installs kill_groups_and_die for SIGTERM, SIGINT and SIGHUP, once, where their action is
/// the default (one set to ignore, as nohup does, stays ignored).
void install_group_killer() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int sig : {SIGTERM, SIGINT, SIGHUP}) {
      struct sigaction old{};
      if (sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL || (old.sa_flags & SA_SIGINFO)) continue;
      struct sigaction sa{};
      sa.sa_handler = kill_groups_and_die;
      sigemptyset(&sa.sa_mask);
      sigaction(sig, &sa, nullptr);
    }
  });
}

void register_group(pid_t pg) noexcept {
  for (auto& g : g_groups) {
    pid_t empty = 0;
    if (g.compare_exchange_strong(empty, pg)) return;
  }
}

void unregister_group(pid_t pg) noexcept {
  for (auto& g : g_groups) {
    pid_t want = pg;
    if (g.compare_exchange_strong(want, 0)) return;
  }
}

std::string describe_status(int st) {
  if (WIFEXITED(st)) {
    const int code = WEXITSTATUS(st);
    if (code > 128 && code < 128 + 65) {  // a shell (sh -c) reporting its child's signal
      const char* abbrev = sigabbrev_np(code - 128);
      return fmt::format("exited with status {} (a shell reporting signal {}, SIG{})", code, code - 128, abbrev ? abbrev : "?");
    }
    return fmt::format("exited with status {}", code);
  }
  if (WIFSIGNALED(st)) {
    const int s = WTERMSIG(st);
    const char* abbrev = sigabbrev_np(s);
    return fmt::format("killed by signal {} (SIG{}: {}){}", s, abbrev ? abbrev : "?", strsignal(s),
                       WCOREDUMP(st) ? ", core dumped" : "");
  }
  return fmt::format("ended with wait status {}", st);
}

}  // namespace

std::uint64_t group_resident_bytes(pid_t pgrp) noexcept {
  std::uint64_t pages = 0;
  std::error_code ec;
  for (std::filesystem::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream f(it->path() / "stat");
    std::string line;
    if (!std::getline(f, line)) continue;  // ended meanwhile
    // pid (comm) state ppid pgrp ... rss (field 24): comm may hold spaces and ')'.
    const auto close = line.rfind(')');
    if (close == std::string::npos) continue;
    const char* p = line.c_str() + close + 1;
    long long group = 0, rss = 0;  // fields 5 and 24 (state, ppid and 6..23 skipped)
    if (std::sscanf(p, " %*c %*d %lld %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %lld", &group,
                    &rss) != 2)
      continue;
    if (group == pgrp && rss > 0) pages += static_cast<std::uint64_t>(rss);
  }
  return pages * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}

ChildProcess::ChildProcess(const std::vector<std::string>& argv, ChildLimits limits) : limits_(limits) {
  if (argv.empty()) throw ChildError(ChildError::Kind::io, "empty command");
  ensure_std_fds();
  install_group_killer();
  int sv[2], po[2], pe[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    throw ChildError(ChildError::Kind::io, fmt::format("socketpair: {}", std::strerror(errno)));
  if (pipe2(po, O_CLOEXEC) != 0 || pipe2(pe, O_CLOEXEC) != 0) {
    close(sv[0]); close(sv[1]);
    throw ChildError(ChildError::Kind::io, fmt::format("pipe: {}", std::strerror(errno)));
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, sv[1], 0);
  posix_spawn_file_actions_adddup2(&fa, po[1], 1);
  posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
  posix_spawnattr_t at;
  posix_spawnattr_init(&at);
  sigset_t none, def;
  sigemptyset(&none);
  sigemptyset(&def);
  sigaddset(&def, SIGPIPE);
  sigaddset(&def, SIGINT);
  posix_spawnattr_setsigmask(&at, &none);
  posix_spawnattr_setsigdefault(&at, &def);
  posix_spawnattr_setpgroup(&at, 0);  // own process group: a timeout kills grandchildren too
  posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, args[0], &fa, &at, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&at);
  close(sv[1]); close(po[1]); close(pe[1]);
  if (rc != 0) {
    close(sv[0]); close(po[0]); close(pe[0]);
    throw ChildError(ChildError::Kind::io, fmt::format("cannot start '{}': {}", argv[0], std::strerror(rc)));
  }
  pid_ = pid;
  register_group(pid_);
  in_ = sv[0]; out_ = po[0]; err_ = pe[0];
  if (limits_.cpu_s > 0 && !limits_.cpu_set_by_child) {  // before it can start anything: what it starts inherits the limit
    const auto soft = static_cast<rlim_t>(std::ceil(limits_.cpu_s));
    const rlimit cpu{soft, soft + 5};
    prlimit(pid_, RLIMIT_CPU, &cpu, nullptr);
  }
  set_nonblock(in_); set_nonblock(out_); set_nonblock(err_);
}

ChildProcess::~ChildProcess() {
  if (in_ >= 0) close(in_);  // EOF on the child's stdin: a well-behaved worker exits
  in_ = -1;
  if (pid_ > 0 && !dead_) {
    for (int i = 0; i < 200; ++i) {  // up to 2 s
      int st = 0;
      if (waitpid(pid_, &st, WNOHANG) == pid_) { dead_ = true; break; }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!dead_) kill();
  }
  // Whatever the worker started in its process group dies with it, also when the worker
  // itself exited cleanly (its pid cannot be reused while the group has members). A child
  // that left the group (setsid, setpgid) escapes: README "Plugins and external workers".
  if (pid_ > 0) ::kill(-pid_, SIGKILL);
  if (pid_ > 0) unregister_group(pid_);
  if (out_ >= 0) close(out_);
  if (err_ >= 0) close(err_);
}

void ChildProcess::kill() noexcept {
  if (pid_ <= 0 || dead_) return;
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);
  int st = 0;
  while (waitpid(pid_, &st, 0) < 0 && errno == EINTR) {}
  dead_ = true;
  if (exit_desc_.empty()) exit_desc_ = describe_status(st);
}

std::string ChildProcess::reap(std::chrono::milliseconds wait) {
  if (dead_) return exit_desc_;
  const auto until = Clock::now() + wait;
  for (;;) {
    int st = 0;
    const pid_t r = waitpid(pid_, &st, WNOHANG);
    if (r == pid_) {
      dead_ = true;
      exit_desc_ = describe_status(st);
      ::kill(-pid_, SIGKILL);  // anything it left behind in its group
      return exit_desc_;
    }
    if (r < 0 && errno != EINTR) { dead_ = true; exit_desc_ = "ended (not waitable)"; return exit_desc_; }
    if (Clock::now() >= until) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  kill();
  exit_desc_ = "closed its output and was killed";
  return exit_desc_;
}

void ChildProcess::died(const char* while_doing) {
  drain_stderr();
  std::string how = reap(std::chrono::milliseconds(2000));
  if (limits_.cpu_s > 0 && how.find("SIGXCPU") != std::string::npos) {
    how += fmt::format(" (its CPU limit is {:g} s, --backend-cpu)", limits_.cpu_s);
  }
  throw ChildError(ChildError::Kind::died, fmt::format("worker {} while {}", how, while_doing));
}

void ChildProcess::check_memory() {
  if (limits_.memory_bytes == 0 || pid_ <= 0 || dead_) return;
  const auto now = Clock::now();
  if (now - memory_checked_ < std::chrono::milliseconds(kMemoryPollMs)) return;
  memory_checked_ = now;
  const std::uint64_t rss = group_resident_bytes(pid_);
  if (rss <= limits_.memory_bytes) return;
  drain_stderr();
  kill();
  constexpr double kGiB = 1024.0 * 1024 * 1024;
  throw ChildError(ChildError::Kind::memory,
                   fmt::format("worker held {:.3g} GiB resident (with its children), over its {:.3g} GiB (--backend-memory): killed",
                               static_cast<double>(rss) / kGiB, static_cast<double>(limits_.memory_bytes) / kGiB));
}

void ChildProcess::drain_stderr() noexcept {
  if (err_ < 0) return;
  char buf[4096];
  for (;;) {
    const ssize_t n = read(err_, buf, sizeof buf);
    if (n > 0) {
      err_tail_.append(buf, static_cast<std::size_t>(n));
      if (err_tail_.size() > 2 * kTailBytes) err_tail_.erase(0, err_tail_.size() - kTailBytes);
      continue;
    }
    if (n == 0) { close(err_); err_ = -1; }  // the child closed stderr (or ended)
    return;                                  // EAGAIN: nothing more for now
  }
}

std::string ChildProcess::stderr_tail() const {
  std::string t = err_tail_.size() > kTailBytes ? err_tail_.substr(err_tail_.size() - kTailBytes) : err_tail_;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  return t;
}

void ChildProcess::wait_fd(int fd, short events, Clock::time_point deadline, const char* what) {
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      drain_stderr();
      kill();
      throw ChildError(ChildError::Kind::timeout, fmt::format("worker timed out while {} (killed)", what));
    }
    check_memory();
    pollfd p[2] = {{fd, events, 0}, {err_, POLLIN, 0}};
    const long long slice = limits_.memory_bytes ? kMemoryPollMs : 1000;
    const int n = poll(p, err_ >= 0 ? 2 : 1, static_cast<int>(std::min<long long>(left, slice)));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw ChildError(ChildError::Kind::io, fmt::format("poll: {}", std::strerror(errno)));
    }
    if (err_ >= 0 && (p[1].revents & (POLLIN | POLLHUP | POLLERR))) drain_stderr();
    if (p[0].revents) return;  // ready, or hung up / error: the read or write reports it
  }
}

void ChildProcess::write_all(const void* data, std::size_t n, Clock::time_point deadline) {
  if (!alive()) throw ChildError(ChildError::Kind::died, "worker is not running");
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = send(in_, p, n, MSG_NOSIGNAL);
    if (w > 0) { p += w; n -= static_cast<std::size_t>(w); continue; }
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) { wait_fd(in_, POLLOUT, deadline, "reading its request"); continue; }
    died("reading its request");
  }
}

void ChildProcess::read_exact(void* data, std::size_t n, Clock::time_point deadline) {
  char* p = static_cast<char*>(data);
  const std::size_t have = std::min(n, out_buf_.size());
  std::memcpy(p, out_buf_.data(), have);
  out_buf_.erase(0, have);
  p += have;
  n -= have;
  while (n > 0) {
    if (!alive()) throw ChildError(ChildError::Kind::died, "worker is not running");
    const ssize_t r = read(out_, p, n);
    if (r > 0) { p += r; n -= static_cast<std::size_t>(r); continue; }
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) { wait_fd(out_, POLLIN, deadline, "waiting for its answer"); continue; }
    died("waiting for its answer");
  }
}

std::string ChildProcess::read_line(Clock::time_point deadline, std::size_t max) {
  for (;;) {
    const std::size_t nl = out_buf_.find('\n');
    if (nl != std::string::npos) {
      std::string line = out_buf_.substr(0, nl);
      out_buf_.erase(0, nl + 1);
      return line;
    }
    if (out_buf_.size() > max)
      throw ChildError(ChildError::Kind::io, fmt::format("worker wrote a line longer than {} bytes", max));
    if (!alive()) throw ChildError(ChildError::Kind::died, "worker is not running");
    char buf[65536];
    const ssize_t r = read(out_, buf, sizeof buf);
    if (r > 0) { out_buf_.append(buf, static_cast<std::size_t>(r)); continue; }
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) { wait_fd(out_, POLLIN, deadline, "waiting for its answer"); continue; }
    died("waiting for its answer");
  }
}

}  // namespace normcheck::detail
