// A worker child process with deadlines on every exchange: the isolation layer of the
// plugin and external-process backends (README "Plugins and external processes").
//
// The child runs in its own process group with stdin connected to a socket (so that
// writing to a dead child gives EPIPE, never SIGPIPE, without touching the signal
// dispositions of normcheck), stdout and stderr to pipes. stderr is drained whenever the
// parent waits, so a chatty child never blocks, and its last lines are kept for error
// messages. A crash, an exit or a deadline ends the child (SIGKILL to its group); the
// owner then starts a new one.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace normcheck::detail {

using Clock = std::chrono::steady_clock;

/// The child could not complete an exchange. `kind`: timeout (deadline passed, the child
/// was killed), died (it exited or was killed by a signal), memory (its process group held
/// more than ChildLimits::memory_bytes: killed), io (any other failure).
struct ChildError : std::runtime_error {
  enum class Kind { timeout, died, memory, io } kind;
  ChildError(Kind k, const std::string& msg) : std::runtime_error(msg), kind(k) {}
};

/// What the child may use. memory_bytes: resident bytes of its process group (the sum of
/// VmRSS over /proc), sampled every kMemoryPollMs while the parent waits on it; 0: no
/// limit. cpu_s: RLIMIT_CPU of the child (soft; the hard limit 5 s later), inherited by
/// what it starts; 0: no limit. cpu_set_by_child: the child sets that limit itself before it
/// starts anything (a shell's ulimit), so the parent only names it in messages: setting it
/// from outside as well raced with the shell's own `ulimit -H`, which then failed with EPERM
/// ("ulimit: error setting limit"), now and then, under load. The names are the options they
/// come from, for messages.
struct ChildLimits {
  std::uint64_t memory_bytes = 0;
  double cpu_s = 0;
  bool cpu_set_by_child = false;
};
inline constexpr int kMemoryPollMs = 100;

/// Resident bytes of the processes in process group `pgrp` (from /proc/N/stat), 0 if none.
std::uint64_t group_resident_bytes(pid_t pgrp) noexcept;

class ChildProcess {
 public:
  /// Starts argv[0] (looked up in PATH if it has no '/') with arguments argv[1..] under
  /// `limits`. Throws ChildError(io) if it cannot be started (e.g. no such executable).
  explicit ChildProcess(const std::vector<std::string>& argv, ChildLimits limits = {});
  /// Closes the child's stdin, gives it `grace` to exit, then kills its process group.
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  /// Writes all `n` bytes to the child's stdin before `deadline`. Throws ChildError.
  void write_all(const void* data, std::size_t n, Clock::time_point deadline);
  /// Reads exactly `n` bytes from the child's stdout before `deadline`. Throws ChildError.
  void read_exact(void* data, std::size_t n, Clock::time_point deadline);
  /// Reads one line (without its '\n') of at most `max` bytes. Throws ChildError.
  std::string read_line(Clock::time_point deadline, std::size_t max = 1 << 20);

  /// Whether the child is still believed to be running.
  bool alive() const noexcept { return pid_ > 0 && !dead_; }
  /// Kills the child's process group (SIGKILL) and reaps it.
  void kill() noexcept;
  /// The last lines the child wrote to stderr (at most ~4 KiB), for error messages.
  std::string stderr_tail() const;
  /// Forgets what stderr_tail() holds (called before each request).
  void clear_stderr_tail() noexcept { err_tail_.clear(); }
  pid_t pid() const noexcept { return pid_; }

 private:
  /// Waits until `fd` is ready for `events` (POLLIN/POLLOUT) before `deadline`, draining
  /// stderr meanwhile and checking the memory limit. Throws ChildError(timeout) or
  /// ChildError(memory) after killing the child.
  void wait_fd(int fd, short events, Clock::time_point deadline, const char* what);
  /// Reaps the child if it ended (waiting up to `wait`) and describes how it ended:
  /// "killed by signal 11 (SIGSEGV: Segmentation fault)", "exited with status 1".
  std::string reap(std::chrono::milliseconds wait);
  [[noreturn]] void died(const char* while_doing);
  void drain_stderr() noexcept;

  /// Kills the child and throws ChildError(memory) if its group holds over the limit.
  void check_memory();

  pid_t pid_ = -1;
  bool dead_ = false;
  ChildLimits limits_;
  Clock::time_point memory_checked_{};
  int in_ = -1, out_ = -1, err_ = -1;  // parent's ends: child's stdin, stdout, stderr
  std::string out_buf_;                // bytes read from stdout but not yet consumed
  std::string err_tail_;
  std::string exit_desc_;
};

}  // namespace normcheck::detail
