// Replays the checked-in fuzzing corpus (tests/fuzz/corpus/<harness>/: regression inputs
// of every finding fixed, and seeds) through the harnesses' own code, compiled into this
// test under other names (tests/CMakeLists.txt). So each finding stays fixed in every
// ctest run, tools/sanitize.sh's included, without clang or libFuzzer. A broken contract
// aborts or throws out of the harness: the test fails.
#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

extern "C" int normcheck_fuzz_case_file(const std::uint8_t* data, std::size_t size);
extern "C" int normcheck_fuzz_npy(const std::uint8_t* data, std::size_t size);
extern "C" int normcheck_fuzz_safetensors(const std::uint8_t* data, std::size_t size);
extern "C" int normcheck_fuzz_merge(const std::uint8_t* data, std::size_t size);
extern "C" int normcheck_fuzz_worker_reply(const std::uint8_t* data, std::size_t size);
extern "C" int normcheck_fuzz_plugin_frame(const std::uint8_t* data, std::size_t size);

namespace {

int replay(const std::string& harness, int (*one)(const std::uint8_t*, std::size_t)) {
  namespace fs = std::filesystem;
  const std::string root = std::getenv("NORMCHECK_SOURCE_DIR") ? std::getenv("NORMCHECK_SOURCE_DIR") : NORMCHECK_SOURCE_DIR;
  const fs::path dir = fs::path(root) / "tests" / "fuzz" / "corpus" / harness;
  int n = 0;
  if (!fs::is_directory(dir)) return n;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::ifstream f(e.path(), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    INFO(e.path().string());
    CHECK(one(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()) == 0);
    ++n;
  }
  return n;
}

}  // namespace

TEST_CASE("fuzz corpus: every checked-in input replays through its harness", "[fuzz][hostile]") {
  CHECK(replay("case_file", normcheck_fuzz_case_file) >= 0);
  CHECK(replay("npy", normcheck_fuzz_npy) >= 1);
  CHECK(replay("safetensors", normcheck_fuzz_safetensors) >= 0);
  CHECK(replay("merge", normcheck_fuzz_merge) >= 1);
  CHECK(replay("worker_reply", normcheck_fuzz_worker_reply) >= 0);
  CHECK(replay("plugin_frame", normcheck_fuzz_plugin_frame) >= 8);
}
