#include "run/progress.hpp"

#include <unistd.h>

#include <fmt/format.h>

namespace normcheck {

Progress::Progress(Mode mode, std::size_t total, double heartbeat_s, std::FILE* out)
    : mode_(mode), total_(total), heartbeat_s_(heartbeat_s), out_(out), start_(std::chrono::steady_clock::now()), last_(start_) {}

Progress::~Progress() { finish(); }

Progress::Mode Progress::choose(bool disabled, std::FILE* out) {
  if (disabled) return Mode::none;
  return isatty(fileno(out)) ? Mode::bar : Mode::heartbeat;
}

void Progress::step(const std::string& what, bool failed) {
  ++done_;
  failed_ += failed;
  if (mode_ == Mode::none) return;
  const auto now = std::chrono::steady_clock::now();
  const double since_last = std::chrono::duration<double>(now - last_).count();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (mode_ == Mode::bar) {
    if (since_last < 0.1 && done_ != total_) return;  // at most ten redraws a second
    last_ = now;
    constexpr int kWidth = 30;
    const int filled = total_ ? static_cast<int>(kWidth * done_ / total_) : kWidth;
    std::string label = what.size() > 40 ? what.substr(0, 37) + "..." : what;
    fmt::print(out_, "\r\x1b[2K[{:=<{}}{:<{}}] {}/{} {}{}", "", filled, "", kWidth - filled, done_, total_,
               failed_ ? fmt::format("{} failed ", failed_) : "", label);
    std::fflush(out_);
    drawn_ = true;
  } else if (since_last >= heartbeat_s_) {
    last_ = now;
    fmt::print(out_, "normcheck: {}/{} case runs done, {} failed, {:.0f} s\n", done_, total_, failed_, elapsed);
    std::fflush(out_);
  }
}

void Progress::finish() {
  if (mode_ == Mode::bar && drawn_) {
    fmt::print(out_, "\r\x1b[2K");
    std::fflush(out_);
    drawn_ = false;
  }
}

}  // namespace normcheck
