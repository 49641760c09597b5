// Writes the generated part of the fuzzing seed corpus (tools/fuzz.sh): small .npy and
// .safetensors files from the codec's writers and hand-built variants (versions 2.0/3.0,
// Fortran order, 0-d, '=' and '|' byte orders), and worker replies naming them.
// Usage: normcheck_fuzz_seeds DIR  (writes DIR/npy, DIR/safetensors, DIR/worker_reply,
// DIR/plugin_frame: worker stdout streams and EVAL payloads, fuzz_plugin_frame.cpp).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "backends/plugin_frames.hpp"
#include "core/tensor_file.hpp"
#include "plugin_frame_problem.hpp"

using namespace normcheck;
namespace fs = std::filesystem;

namespace {

void put(const fs::path& p, const std::string& bytes) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

/// A .npy file of version `major` with header text `h` (no padding) and raw data.
std::string npy_raw(int major, const std::string& h, const std::string& data) {
  std::string s("\x93NUMPY", 6);
  s += static_cast<char>(major);
  s += '\0';
  for (int i = 0; i < (major == 1 ? 2 : 4); ++i) s += static_cast<char>((h.size() >> (8 * i)) & 0xff);
  return s + h + data;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  const fs::path dir = argv[1];
  for (const char* sub : {"npy", "safetensors", "worker_reply", "plugin_frame"}) fs::create_directories(dir / sub);
  std::map<std::string, Tensor> named;
  int k = 0;
  for (DType t : {DType::f64, DType::f32, DType::f16, DType::bf16})
    for (const Shape& s : std::vector<Shape>{{}, {3}, {2, 3}, {2, 1, 2}, {0, 4}}) {
      std::vector<double> v;
      for (std::int64_t i = 0; i < numel(s); ++i) v.push_back(i % 2 ? -1.5 * i : 0.25 * i);
      const Tensor x = Tensor::from_doubles(t, s, v);
      named["t" + std::to_string(k)] = x;
      const std::string npy = npy_bytes(x, NpyBf16::as_f32);
      put(dir / "npy" / ("codec_" + std::to_string(k) + ".npy"), npy);
      put(dir / "worker_reply" / ("reply_" + std::to_string(k)),
          R"({"id": 7, "outputs": {"y": {"path": "reply.npy", "dtype": ")" + std::string(dtype_name(t)) + "\"}}}\n" + npy);
      ++k;
    }
  const std::string d6(48, '\x01');
  put(dir / "npy" / "v2.npy", npy_raw(2, "{'descr': '=f8', 'fortran_order': False, 'shape': (6,), }\n", d6));
  put(dir / "npy" / "v3_fortran.npy", npy_raw(3, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3, 2), }\n", std::string(48, '\x02')));
  put(dir / "npy" / "zero_d.npy", npy_raw(1, "{\"descr\": \"|f2\", \"fortran_order\": False, \"shape\": ()}", std::string("\x00\x3c", 2)));
  put(dir / "npy" / "fortran.npy", npy_raw(1, "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }", d6));
  put(dir / "worker_reply" / "skip", "{\"id\": 7, \"skip\": \"unsupported\"}\n");
  put(dir / "worker_reply" / "error", "{\"id\": 7, \"error\": \"boom\"}\n");
  put(dir / "worker_reply" / "two_outputs",
      "{\"id\": 7, \"outputs\": {\"y\": {\"path\": \"reply.npy\"}, \"mean\": {\"path\": \"reply.npy\", \"dtype\": \"f64\"}}}\n" +
          npy_bytes(Tensor::from_doubles(DType::f64, {2}, {1, 2})));
  // Plugin frames: for each problem, a worker's stdout (HELO, then OKAY with y, SKIP, ERRR)
  // and the EVAL payload the parent sends.
  for (std::uint8_t sel = 0; sel < 64; ++sel) {
    using namespace normcheck::detail;
    const Problem p = fuzz::plugin_frame_problem(sel);
    const std::string head(1, static_cast<char>(sel));
    if (sel < 16) {  // ABI 1: y only
      const std::size_t y_bytes = static_cast<std::size_t>(numel(p.x().shape())) * format_info(p.out_dtype).bytes;
      put(dir / "plugin_frame" / ("stdout_" + std::to_string(sel)),
          head + frame_bytes(kHelo, helo_payload(1, "fuzz plugin")) + frame_bytes(kOkay, std::string(y_bytes, '\x3c')) +
              frame_bytes(kSkip, "no") + frame_bytes(kErrr, "boom") + frame_bytes(kOkay, std::string(y_bytes, '\0')));
      put(dir / "plugin_frame" / ("eval_" + std::to_string(sel)), std::string(1, static_cast<char>(0x80 | sel)) + encode_request(p, 1).payload);
    }
    // ABI 2: every output of the problem, each with its written flag and bytes.
    std::string okay;
    const auto shapes = output_shapes(p);
    const std::uint32_t n = static_cast<std::uint32_t>(shapes.size());
    okay.append(reinterpret_cast<const char*>(&n), sizeof n);
    for (const auto& [name, shape] : shapes) {
      const std::uint64_t len = name.size(), bytes = static_cast<std::uint64_t>(numel(shape)) * format_info(output_dtype(p, name)).bytes;
      const std::uint32_t written = 1;
      okay.append(reinterpret_cast<const char*>(&len), sizeof len).append(name);
      okay.append(reinterpret_cast<const char*>(&written), sizeof written);
      okay.append(reinterpret_cast<const char*>(&bytes), sizeof bytes).append(std::string(bytes, '\x3c'));
    }
    const std::string head2(1, static_cast<char>(0x40 | sel));
    put(dir / "plugin_frame" / ("stdout2_" + std::to_string(sel)),
        head2 + frame_bytes(kHelo, helo_payload(2, "fuzz plugin")) + frame_bytes(kOkay, okay) + frame_bytes(kSkip, "no"));
    put(dir / "plugin_frame" / ("eval2_" + std::to_string(sel)), std::string(1, static_cast<char>(0xC0 | sel)) + encode_request(p, 2).payload);
  }
  const fs::path st = dir / "safetensors";
  write_safetensors((st / "all.safetensors").string(), named, {{"format", "pt"}});
  write_safetensors((st / "one.safetensors").string(), {{"x", named.at("t6")}});
  write_safetensors((st / "empty.safetensors").string(), {});
  // Sanity: the seeds read back (a seed that does not is useless to start from).
  for (const auto& e : fs::directory_iterator(dir / "npy")) (void)parse_npy(slurp(e.path()), e.path().string());
  for (const auto& e : fs::directory_iterator(st)) (void)parse_safetensors(slurp(e.path()), e.path().string());
  std::printf("fuzz seeds written under %s\n", dir.c_str());
  return 0;
}
