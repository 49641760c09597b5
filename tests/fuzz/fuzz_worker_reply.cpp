// libFuzzer harness: the host's side of the cmd: worker protocol without a process. The
// input is a reply line, '\n', then the bytes of the .npy file "reply.npy" it may name
// (written to a private folder, the working directory during the call; libFuzzer's own
// relative paths stay valid between calls). Contract: parse_worker_line throws
// std::runtime_error for a line that is not JSON, and interpret_worker_reply never throws.
// Lines holding '/' are skipped so that a reply can only name files in that folder.
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "backends/worker_protocol.hpp"

namespace {
/// Descriptors of the starting folder and of a private temporary folder.
struct Dirs {
  int home = -1, priv = -1;
};
std::string private_dir;
void remove_private_dir() {
  std::error_code ec;
  std::filesystem::remove_all(private_dir, ec);
}
Dirs make_dirs() {
  Dirs d;
  std::string tmpl = (std::filesystem::temp_directory_path() / "normcheck-fuzz-reply-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) std::abort();
  private_dir = tmpl;
  std::atexit(remove_private_dir);
  d.home = open(".", O_RDONLY | O_DIRECTORY);
  d.priv = open(tmpl.c_str(), O_RDONLY | O_DIRECTORY);
  if (d.home < 0 || d.priv < 0) std::abort();
  return d;
}
int run(const std::string& all);
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const Dirs dirs = make_dirs();
  if (fchdir(dirs.priv) != 0) std::abort();
  run(std::string(reinterpret_cast<const char*>(data), size));
  if (fchdir(dirs.home) != 0) std::abort();
  return 0;
}

namespace {
int run(const std::string& all) {
  const auto nl = all.find('\n');
  const std::string line = all.substr(0, nl);
  if (line.find('/') != std::string::npos) return 0;
  {
    std::ofstream f("reply.npy", std::ios::binary | std::ios::trunc);
    if (nl != std::string::npos) f.write(all.data() + nl + 1, static_cast<std::streamsize>(all.size() - nl - 1));
  }
  nlohmann::json rep;
  try {
    rep = normcheck::detail::parse_worker_line(line);
  } catch (const std::runtime_error&) {
    return 0;
  }
  const auto r = normcheck::detail::interpret_worker_reply(rep, 7);
  if (r.kind == normcheck::detail::WorkerReply::Kind::outputs && r.outputs.empty() && !rep.at("outputs").empty()) std::abort();
  return 0;
}
}  // namespace
