#include "core/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <random>
#include <stdexcept>

#include <fmt/format.h>

namespace normcheck {

namespace {

/// Writes all of text to fd; returns errno (0 on success).
int write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t k = ::write(fd, text.data() + done, text.size() - done);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return k < 0 ? errno : EIO;
    done += static_cast<std::size_t>(k);
  }
  return 0;
}

/// Gives the unnamed file fd (O_TMPFILE) a fresh name in dir: linkat never replaces an
/// existing name (EEXIST: another name is tried), so a planted file or symlink is never
/// followed. Returns the name, or "" with errno set.
std::string link_fresh_name(int fd, const std::filesystem::path& dir, const std::string& stem) {
  std::mt19937_64 rng(std::random_device{}() ^ static_cast<std::uint64_t>(
                                                    std::chrono::steady_clock::now().time_since_epoch().count()));
  const std::string proc = fmt::format("/proc/self/fd/{}", fd);
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::string name = (dir / fmt::format(".{}.tmp.{:016x}", stem, rng())).string();
    if (::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW) == 0) return name;
    if (errno != EEXIST) return "";
  }
  errno = EEXIST;
  return "";
}

/// The O_TMPFILE way: returns the fresh name of the complete, flushed file, or "" when this
/// file system or this process cannot do it (no O_TMPFILE, no /proc): nothing is left then.
std::string write_unnamed(const std::filesystem::path& dir, const std::string& stem, const std::string& text, mode_t mode) {
  const int fd = ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, mode);
  if (fd < 0) return "";
  std::string name;
  if (write_all(fd, text) == 0 && ::fsync(fd) == 0) name = link_fresh_name(fd, dir, stem);
  if (::close(fd) != 0 && !name.empty()) {
    ::unlink(name.c_str());
    name.clear();
  }
  return name;
}

}  // namespace

void write_atomically(const std::string& path, const std::string& text) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const mode_t mask = ::umask(0);  // a report gets the permissions a plain open would give it
  ::umask(mask);
  const std::string stem = target.filename().string();
  // The text goes into an unnamed file (O_TMPFILE) in the target's folder: a process killed
  // while writing (kill -9, SIGXFSZ) leaves nothing behind. Only the complete, flushed file
  // gets a name (a fresh one, then renamed over the target). Where that cannot be done (a
  // file system without O_TMPFILE, no /proc), mkstemp: a fresh name created with O_EXCL,
  // removed on every failure we see.
  std::string tmp = write_unnamed(dir, stem, text, 0666 & ~mask);
  if (tmp.empty()) {
    // (fmt, not operator+: g++ 12 warns falsely on that concatenation, PR 105329)
    tmp = (dir / fmt::format(".{}.tmp.XXXXXX", stem)).string();
    const int fd = ::mkstemp(tmp.data());
    if (fd < 0) throw std::runtime_error(fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
    ::fchmod(fd, 0666 & ~mask);
    int err = write_all(fd, text);
    if (!err && ::fsync(fd) != 0) err = errno;
    if (::close(fd) != 0 && !err) err = errno;
    if (err) {
      ::unlink(tmp.c_str());
      throw std::runtime_error(fmt::format("{}: write failed: {}", path, std::strerror(err)));
    }
  }
  std::error_code ec;
  fs::rename(tmp, target, ec);
  if (ec) {
    ::unlink(tmp.c_str());
    throw std::runtime_error(fmt::format("{}: cannot replace: {}", path, ec.message()));
  }
}

}  // namespace normcheck
