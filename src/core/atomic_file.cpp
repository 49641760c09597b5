#include "core/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>

namespace normcheck {

void write_atomically(const std::string& path, const std::string& text) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  // mkstemp: a fresh name created with O_EXCL in the target's folder (never a planted
  // file or symlink), then rename over the target.
  // (fmt, not operator+: g++ 12 warns falsely on that concatenation, PR 105329)
  std::string tmpl = (dir / fmt::format(".{}.tmp.XXXXXX", target.filename().string())).string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) throw std::runtime_error(fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t k = ::write(fd, text.data() + done, text.size() - done);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      ::unlink(tmpl.c_str());
      throw std::runtime_error(fmt::format("{}: write failed: {}", path, why));
    }
    done += static_cast<std::size_t>(k);
  }
  const mode_t mask = ::umask(0);  // a report gets the permissions a plain open would give it
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmpl.c_str());
    throw std::runtime_error(fmt::format("{}: write failed: {}", path, why));
  }
  std::error_code ec;
  fs::rename(tmpl, target, ec);
  if (ec) {
    ::unlink(tmpl.c_str());
    throw std::runtime_error(fmt::format("{}: cannot replace: {}", path, ec.message()));
  }
}

}  // namespace normcheck
