// Progress of a long run on stderr: a bar on a terminal, a heartbeat line otherwise (a CI
// log must show that the run is alive, without a line per case).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <string>

namespace normcheck {

class Progress {
 public:
  enum class Mode { none, bar, heartbeat };
  /// `total` case runs expected; `heartbeat_s`: seconds between heartbeat lines.
  Progress(Mode mode, std::size_t total, double heartbeat_s = 10, std::FILE* out = stderr);
  ~Progress();
  /// One case run finished: `what` ("layer_norm/random on cpu"), `failed` whether it failed.
  void step(const std::string& what, bool failed);
  /// Clears the bar (the report follows on stdout).
  void finish();
  /// Mode for this process: none when disabled, bar when `out` is a terminal, else heartbeat.
  static Mode choose(bool disabled, std::FILE* out = stderr);

 private:
  Mode mode_;
  std::size_t total_, done_ = 0, failed_ = 0;
  double heartbeat_s_;
  std::FILE* out_;
  std::chrono::steady_clock::time_point start_, last_;
  bool drawn_ = false;
};

}  // namespace normcheck
