// normcheck compare: tensor files (.npy, .safetensors), dump directories, per-layer diffs.
#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "spec/backend.hpp"
#include "cases/case.hpp"
#include "compare/compare.hpp"
#include "backends/registry.hpp"

using namespace normcheck;
namespace fs = std::filesystem;

namespace {

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("normcheck_compare_test_" + std::to_string(::getpid())) / name;  // per process: ctest -j
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void write_bytes(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary) << bytes;
}

/// A safetensors file assembled byte by byte (not by our writer): header size, JSON, data.
std::string hand_built_safetensors(const std::string& header, const std::string& data) {
  std::string out(8, '\0');
  const std::uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out + header + data;
}

const std::string kData(
    "\x00\x00\xc0\x3f"  "\x00\x00\x00\xc0"                 // F32 1.5, -2
    "\x80\x3f"  "\x00\xbf"                                 // BF16 1, -0.5
    "\x55\x35"                                             // F16 0x3555 = 0.333251953125
    "\x9a\x99\x99\x99\x99\x99\xb9\x3f",                    // F64 0.1
    22);
const std::string kHeader =
    R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"BF16","shape":[2],"data_offsets":[8,12]},)"
    R"("c":{"dtype":"F16","shape":[1,1],"data_offsets":[12,14]},"d":{"dtype":"F64","shape":[],"data_offsets":[14,22]},)"
    R"("__metadata__":{"format":"pt"}})";

DumpError dump_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const DumpError& e) {
    return e;
  }
  FAIL("no DumpError");
  return DumpError("", 0, "", "");
}

/// A norm layer on a tiny input, output by the reference (correctly rounded).
void write_layer(const fs::path& dir, const std::string& layer, std::uint64_t seed) {
  Problem p;
  p.op = Op::layer_norm;
  p.conv.eps = 1e-5;
  p.conv.affine = Affine::gamma_beta;
  p.conv.normalized_shape = {8};
  p.out_dtype = DType::f32;
  p.inputs["x"] = Tensor::from_doubles(DType::f32, {3, 8}, generate_normal(24, 2.0, 1.0, seed));
  p.inputs["gamma"] = Tensor::from_doubles(DType::f32, {8}, generate_normal(8, 1.0, 0.1, seed + 1));
  p.inputs["beta"] = Tensor::from_doubles(DType::f32, {8}, generate_normal(8, 0.0, 0.1, seed + 2));
  const Tensor y = make_backend("reference")->run(validate(p), {}).at("y");
  write_npy((dir / (layer + ".input.npy")).string(), p.x());
  write_npy((dir / (layer + ".gamma.npy")).string(), *p.input("gamma"));
  write_npy((dir / (layer + ".beta.npy")).string(), *p.input("beta"));
  write_npy((dir / (layer + ".output.npy")).string(), y);
  std::ofstream(dir / (layer + ".json")) << R"({"op": "layer_norm", "eps": 1e-5, "affine": "gamma_beta"})";
}

}  // namespace

TEST_CASE("safetensors: a hand-built file reads back every dtype", "[compare][io]") {
  const fs::path d = fresh_dir("st");
  write_bytes(d / "t.safetensors", hand_built_safetensors(kHeader, kData));
  const auto t = read_safetensors((d / "t.safetensors").string());
  REQUIRE(t.size() == 4);
  CHECK(t.at("a").dtype() == DType::f32);
  CHECK(t.at("a").to_doubles() == std::vector<double>{1.5, -2.0});
  CHECK(t.at("b").dtype() == DType::bf16);
  CHECK(t.at("b").to_doubles() == std::vector<double>{1.0, -0.5});
  CHECK(t.at("c").shape() == Shape{1, 1});
  CHECK(t.at("c").get(0) == 0.333251953125);
  CHECK(t.at("d").shape() == Shape{});
  CHECK(t.at("d").get(0) == 0.1);
  // our writer's output reads back the same
  write_safetensors((d / "w.safetensors").string(), t, {{"format", "pt"}});
  const auto w = read_safetensors((d / "w.safetensors").string());
  for (auto& [k, v] : t) CHECK(w.at(k).to_doubles() == v.to_doubles());
}

TEST_CASE("safetensors: malformed files name the file and the field", "[compare][io]") {
  const fs::path d = fresh_dir("st_bad");
  auto err = [&](const std::string& bytes) {
    write_bytes(d / "bad.safetensors", bytes);
    return dump_error([&] { read_safetensors((d / "bad.safetensors").string()); });
  };
  std::string h = kHeader;
  h.replace(h.find("[0,8]"), 5, "[0,7]");
  DumpError e = err(hand_built_safetensors(h, kData));
  CHECK(e.field == "a.data_offsets");
  CHECK(std::string(e.what()).find("bad.safetensors: a.data_offsets: 7 bytes for shape [2] of F32") != std::string::npos);
  h = kHeader;
  h.replace(h.find("\"F16\""), 5, "\"I32\"");
  CHECK(err(hand_built_safetensors(h, kData)).field == "c.dtype");
  h = kHeader;
  h.replace(h.find("[14,22]"), 7, "[14,30]");
  CHECK(err(hand_built_safetensors(h, kData)).field == "d.data_offsets");
  CHECK(err(hand_built_safetensors("{not json", kData)).field == "header");
  CHECK(err(std::string("\xff\xff\x00\x00\x00\x00\x00\x00{}", 10)).field == "header_size");
  CHECK(err("abc").field == "header_size");
}

TEST_CASE("npy: f16, f32 and f64 round-trip through the codec", "[compare][io]") {
  const fs::path d = fresh_dir("npy");
  for (DType t : {DType::f16, DType::f32, DType::f64}) {
    const Tensor x = Tensor::from_doubles(t, {2, 3}, {1, -2.5, 0.1, 65504, 1e-7, -0.0});
    const std::string p = (d / "x.npy").string();
    write_npy(p, x);
    const Tensor y = read_npy(p);
    CHECK(y.dtype() == t);
    CHECK(y.shape() == x.shape());
    CHECK(std::memcmp(x.data(), y.data(), x.nbytes()) == 0);
  }
  CHECK_THROWS_AS(write_npy((d / "b.npy").string(), Tensor(DType::bf16, {2})), DumpError);
  write_bytes(d / "junk.npy", "not an npy file");
  CHECK(dump_error([&] { read_npy((d / "junk.npy").string()); }).field == "magic");
}

TEST_CASE("compare: natural order and layer names", "[compare]") {
  CHECK(natural_less("layer2", "layer10"));
  CHECK_FALSE(natural_less("layer10", "layer2"));
  CHECK(natural_less("02_a", "10_a"));
  CHECK(natural_less("a", "b"));
  CHECK(split_layer_name("blk.3.input") == std::make_pair(std::string("blk.3"), std::string("input")));
  CHECK(split_layer_name("logits") == std::make_pair(std::string("logits"), std::string()));
}

TEST_CASE("compare: identical dumps do not diverge, a perturbed layer is the first divergence", "[compare]") {
  const fs::path a = fresh_dir("A"), b = fresh_dir("B");
  for (const fs::path& d : {a, b}) {
    write_layer(d, "layer1", 10);
    write_layer(d, "layer2", 20);
    write_layer(d, "layer10", 30);
  }
  CompareResult same = compare_dumps(read_dump(a.string()), read_dump(b.string()), 0);
  REQUIRE(same.layers.size() == 3);
  CHECK(same.layers[0].layer == "layer1");
  CHECK(same.layers[1].layer == "layer2");
  CHECK(same.layers[2].layer == "layer10");
  CHECK_FALSE(same.first_divergence);
  CHECK(same.exit_code() == 0);
  for (auto& l : same.layers) {
    CHECK(l.has_reference);
    CHECK(l.closer == "tie");
    CHECK(l.a_exact->ulp.value <= 0.5);
  }

  // B's layer2 output is off by 1000 ULP in one element, and layer10 too: layer2 is first.
  for (const char* layer : {"layer2", "layer10"}) {
    const std::string p = (b / (std::string(layer) + ".output.npy")).string();
    Tensor y = read_npy(p);
    y.set(5, y.get(5) + 1000 * ulp(DType::f32, y.get(5)));
    write_npy(p, y);
  }
  CompareResult r = compare_dumps(read_dump(a.string()), read_dump(b.string()), 0);
  REQUIRE(r.first_divergence);
  CHECK(r.layers[*r.first_divergence].layer == "layer2");
  const TensorDiff* w = r.layers[1].worst();
  REQUIRE(w);
  CHECK(w->name == "layer2.output");
  CHECK(w->count_different == 1);
  CHECK(w->ulp.value == Approx(1000));
  CHECK(w->ulp.coords == std::vector<std::int64_t>{0, 5});
  CHECK(r.layers[1].closer == "A");
  CHECK(r.layers[1].b_fails());  // 1000 ULP is far outside the gate
  CHECK(r.first_fail_b == std::optional<std::size_t>(1));
  CHECK_FALSE(r.first_fail_a);
  CHECK(r.exit_code() == 1);
  // a tolerance above the perturbation: no divergence
  CHECK_FALSE(compare_dumps(read_dump(a.string()), read_dump(b.string()), 2000).first_divergence);

  // The same tensors as one .safetensors file compare equal to the .npy files.
  const fs::path s = fresh_dir("S");
  Dump da = read_dump(a.string());
  write_safetensors((s / "all.safetensors").string(), da.tensors);
  for (auto& e : fs::directory_iterator(a)) if (e.path().extension() == ".json") fs::copy(e.path(), s / e.path().filename());
  CHECK_FALSE(compare_dumps(da, read_dump(s.string()), 0).first_divergence);

  // Recomputed on cpu: both sides within the gate.
  auto cpu = make_backend("cpu");
  CompareResult rc = compare_dumps(da, recompute(da, *cpu), 0);
  CHECK_FALSE(rc.first_fail_a);
  CHECK_FALSE(rc.first_fail_b);
  CHECK(rc.exit_code() == 0);
}

TEST_CASE("compare: bad sidecars and duplicate names are errors with file, line and field", "[compare]") {
  const fs::path d = fresh_dir("badmeta");
  write_layer(d, "ln", 1);
  std::ofstream(d / "ln.json") << "{\"op\": \"layer_norm\",\n \"eps\": -1}";
  DumpError e = dump_error([&] { read_dump(d.string()); });
  CHECK(e.field == "eps");
  CHECK(e.line == 2);
  std::ofstream(d / "ln.json") << "{\"op\": \"layer_norm\",\n \"eps\": 1e-5,\n \"epz\": 1}";
  e = dump_error([&] { read_dump(d.string()); });
  CHECK(e.field == "epz");
  CHECK(e.line == 3);
  std::ofstream(d / "ln.json") << "{\"op\": \"layer_norm\",\n \"eps\": 1e-5,,}";
  CHECK(dump_error([&] { read_dump(d.string()); }).field == "json");
  std::ofstream(d / "ln.json") << R"({"op": "layer_norm", "eps": 1e-5})";
  write_safetensors((d / "dup.safetensors").string(), {{"ln.input", Tensor(DType::f32, {3, 8})}});
  CHECK(dump_error([&] { read_dump(d.string()); }).field == "ln.input");
  CHECK(dump_error([&] { read_dump((d / "nope").string()); }).field == "path");
}

TEST_CASE("compare: the bundled MiniLM dump reads as 13 LayerNorm layers", "[compare][minilm]") {
  const std::string root = std::getenv("NORMCHECK_SOURCE_DIR") ? std::getenv("NORMCHECK_SOURCE_DIR") : NORMCHECK_SOURCE_DIR;
  const Dump d = read_dump(root + "/cases/minilm/dump");
  CHECK(d.meta.size() == 13);
  CHECK(d.tensors.size() == 52);
  const auto p = layer_problem(d, "00_embeddings");
  REQUIRE(p);
  CHECK(p->conv.affine == Affine::gamma_beta);
  CHECK(p->conv.eps == static_cast<double>(1e-12f));
  CHECK(p->x().shape() == Shape{11, 384});
}

// ---- Hostile tensor files and sidecars (issue 18 section 5): each input below threw
// std::bad_alloc, std::length_error or nlohmann's out_of_range (exit 3, "internal error")
// before the codec checked it; now each is a DumpError naming the file and the field.

TEST_CASE("safetensors: hostile headers are DumpErrors found before allocating", "[compare][io][hostile]") {
  auto field = [](const std::string& header, const std::string& data = std::string(8, '\0')) {
    try {
      parse_safetensors(hand_built_safetensors(header, data), "hostile.safetensors");
    } catch (const DumpError& e) {
      CHECK(std::string(e.what()).rfind("hostile.safetensors: ", 0) == 0);
      return e.field;
    }
    FAIL("no DumpError for " << header);
    return std::string();
  };
  // 2^35 values of F64 (256 GiB) over 8 bytes: std::bad_alloc before.
  CHECK(field(R"({"x":{"dtype":"F64","shape":[34359738368],"data_offsets":[0,8]}})") == "x.data_offsets");
  CHECK(field(R"({"x":{"dtype":"F64","shape":[1099511627776],"data_offsets":[0,8]}})") == "x.shape");
  // A dimension of 2^64 - 1 read as -1: std::length_error before.
  CHECK(field(R"({"x":{"dtype":"F64","shape":[18446744073709551615],"data_offsets":[0,8]}})") == "x.shape");
  // A number beyond binary64: nlohmann's out_of_range before.
  CHECK(field(R"({"x":{"dtype":"F64","shape":[1e999],"data_offsets":[0,8]}})") == "header");
  CHECK(field(std::string(100000, '[')) == "header");  // nesting
  CHECK(field(R"({"x":{"dtype":"F64","shape":[1],"data_offsets":[0,8]},"y":{"dtype":"F64","shape":[1],"data_offsets":[0,8]}})") ==
        "y.data_offsets");  // overlap: two tensors claiming the same bytes
  CHECK(field(R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})") == "header");  // 4 bytes nobody claims
  CHECK(field(R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})") == "x.data_offsets");  // a gap
  CHECK(field(R"({"x":[]})") == "x");
  CHECK(field(R"({"x":{"dtype":"F64","shape":[1],"data_offsets":[0]}})") == "x.data_offsets");
  CHECK(field(R"({"x":{"dtype":"F64","shape":[-1],"data_offsets":[0,8]}})") == "x.shape");
  CHECK(field(R"({"x":{"dtype":7,"shape":[1],"data_offsets":[0,8]}})") == "x.dtype");
  CHECK(field("[]") == "header");
  CHECK(field(std::string("\xff\xfe", 2)) == "header");  // not UTF-8
  // The caller's element limit.
  CHECK_THROWS_AS(parse_safetensors(hand_built_safetensors(R"({"x":{"dtype":"F64","shape":[1],"data_offsets":[0,8]}})",
                                                           std::string(8, '\0')), "m.safetensors", 0),
                  DumpError);
  // Zero-element tensors and metadata of any JSON type are fine.
  const auto ok = parse_safetensors(
      hand_built_safetensors(R"({"__metadata__":[1],"e":{"dtype":"F16","shape":[0,1024],"data_offsets":[0,0]},)"
                             R"("x":{"dtype":"F64","shape":[],"data_offsets":[0,8]}})", std::string(8, '\0')),
      "ok.safetensors");
  CHECK(ok.at("e").size() == 0);
  CHECK(ok.at("x").get(0) == 0);
}

TEST_CASE("compare: a sidecar number beyond binary64 or nested too deep is a DumpError, not an internal error", "[compare][hostile]") {
  const fs::path d = fresh_dir("hostile_meta");
  write_layer(d, "ln", 1);
  std::ofstream(d / "ln.json") << "{\"op\": \"layer_norm\",\n \"eps\": 1e999}";
  CHECK(dump_error([&] { read_dump(d.string()); }).field == "json");
  std::ofstream(d / "ln.json") << "{\"op\": \"layer_norm\",\n \"x\": " << std::string(100000, '[');
  const DumpError e = dump_error([&] { read_dump(d.string()); });
  CHECK(e.field == "json");
  CHECK(e.line == 2);
}
