// core/atomic_file: a report or golden file is replaced whole or not at all, and a writer
// killed mid-write leaves nothing behind (issue 19: 2 of 20 kill -9 left a 0-byte temp file).
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/atomic_file.hpp"

namespace fs = std::filesystem;
using normcheck::write_atomically;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    std::string t = (fs::temp_directory_path() / "nc-atomic-XXXXXX").string();
    REQUIRE(::mkdtemp(t.data()) != nullptr);
    path = t;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::vector<std::string> names() const {
    std::vector<std::string> v;
    for (auto& e : fs::directory_iterator(path)) v.push_back(e.path().filename().string());
    return v;
  }
};

std::string read(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("atomic_file: the target is replaced whole, no temporary is left") {
  TempDir d;
  const fs::path t = d.path / "report.json";
  write_atomically(t.string(), "first");
  write_atomically(t.string(), "second, longer");
  CHECK(read(t) == "second, longer");
  CHECK(d.names() == std::vector<std::string>{"report.json"});
}

TEST_CASE("atomic_file: a planted symlink at a temporary-looking name is never followed") {
  TempDir d;
  const fs::path victim = d.path / "victim";
  { std::ofstream(victim) << "keep"; }
  for (int i = 0; i < 8; ++i) fs::create_symlink(victim, d.path / (".report.json.tmp." + std::to_string(i)));
  write_atomically((d.path / "report.json").string(), "new");
  CHECK(read(victim) == "keep");
  CHECK(read(d.path / "report.json") == "new");
}

TEST_CASE("atomic_file: a writer killed while writing leaves the old target and no temporary file") {
  TempDir d;
  const fs::path t = d.path / "report.json";
  write_atomically(t.string(), "old");
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    // The write passes RLIMIT_FSIZE: the kernel kills the writer (SIGXFSZ) mid-write, as
    // kill -9 would, deterministically.
    rlimit r{4096, 4096};
    ::setrlimit(RLIMIT_FSIZE, &r);
    ::signal(SIGXFSZ, SIG_DFL);
    write_atomically(t.string(), std::string(1 << 20, 'x'));
    ::_exit(0);  // not reached: the write is killed
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGXFSZ);
  CHECK(read(t) == "old");
  const int probe = ::open(d.path.c_str(), O_TMPFILE | O_WRONLY, 0600);
  if (probe >= 0) {
    ::close(probe);
    CHECK(d.names() == std::vector<std::string>{"report.json"});
  } else {
    // The documented fallback (core/atomic_file.hpp): mkstemp leaves its temporary name.
    WARN("no O_TMPFILE in " << d.path << ": a killed writer leaves its temporary file (mkstemp fallback)");
    for (auto& n : d.names()) CHECK((n == "report.json" || n.rfind(".report.json.tmp.", 0) == 0));
  }
}

TEST_CASE("atomic_file: a folder that does not exist is an error naming the path") {
  TempDir d;
  const fs::path t = d.path / "missing" / "report.json";
  try {
    write_atomically(t.string(), "x");
    FAIL("no error");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()).find(t.string()) != std::string::npos);
  }
}
