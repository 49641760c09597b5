// .npy exchange of external-process backends: exact round trips in every dtype, NumPy's
// header rules, Fortran order, and clear errors for files a worker got wrong.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>

#include <fmt/format.h>

#include "core/tensor_file.hpp"

using namespace normcheck;

namespace {
std::string tmp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("normcheck_npy_test_" + name)).string();
}
void write_raw(const std::string& path, const std::string& header, const std::string& data) {
  std::string h = header;
  const std::size_t total = 10 + h.size() + 1;
  h.append((64 - total % 64) % 64, ' ');
  h.push_back('\n');
  std::ofstream f(path, std::ios::binary);
  f.write("\x93NUMPY\x01\x00", 8);
  const char len[2] = {static_cast<char>(h.size() & 0xff), static_cast<char>(h.size() >> 8)};
  f.write(len, 2);
  f << h << data;
}
}  // namespace

TEMPLATE_TEST_CASE_SIG("npy: a tensor reloads bit for bit, specials included", "[npy]", ((DType T), T), DType::f64,
                       DType::f32, DType::f16, DType::bf16) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> v = {1.0, -0.0, 0.5, -3.25, inf, -inf, format_info(T).min_subnormal, format_info(T).max_finite};
  const Tensor t = Tensor::from_doubles(T, {2, 4}, v);
  const std::string p = tmp_path("roundtrip.npy");
  write_npy(p, t, NpyBf16::as_f32);
  // bf16 travels as float32 values and comes back as bf16 when declared so.
  const Tensor r = read_npy(p, {.as = T});
  std::remove(p.c_str());
  REQUIRE(r.dtype() == T);
  REQUIRE(r.shape() == Shape{2, 4});
  for (std::int64_t i = 0; i < t.size(); ++i) {
    CHECK(r.get(i) == t.get(i));
    CHECK(std::signbit(r.get(i)) == std::signbit(t.get(i)));
  }
}

TEST_CASE("npy: the data starts at a multiple of 64 bytes, 1-d shapes are tuples '(n,)'", "[npy]") {
  const std::string p = tmp_path("header.npy");
  write_npy(p, Tensor::from_doubles(DType::f16, {3}, {1, 2, 3}));
  std::ifstream f(p, std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::remove(p.c_str());
  const std::size_t data_at = all.size() - 3 * 2;
  CHECK(data_at % 64 == 0);
  CHECK(all[data_at - 1] == '\n');
  CHECK(all.find("'descr': '<f2'") != std::string::npos);
  CHECK(all.find("'shape': (3,)") != std::string::npos);
}

TEST_CASE("npy: Fortran-order files are read in row-major order", "[npy]") {
  const std::string p = tmp_path("fortran.npy");
  // The 2 x 3 matrix [[1, 2, 3], [4, 5, 6]] stored column by column.
  const double col[6] = {1, 4, 2, 5, 3, 6};
  write_raw(p, "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }", std::string(reinterpret_cast<const char*>(col), 48));
  const Tensor t = read_npy(p);
  std::remove(p.c_str());
  CHECK(t.to_doubles() == std::vector<double>{1, 2, 3, 4, 5, 6});
}

TEST_CASE("npy: a declared dtype must hold every value exactly", "[npy]") {
  const std::string p = tmp_path("declared.npy");
  write_npy(p, Tensor::from_doubles(DType::f32, {2}, {1.0, 0.1}));
  CHECK_THROWS_WITH(read_npy(p, {.as = DType::bf16}), Catch::Contains("declared bf16 but element [1] = 0.10000000149011612"));
  CHECK(read_npy(p, {.as = DType::f64}).get(1) == static_cast<double>(0.1f));
  std::remove(p.c_str());
}

TEST_CASE("npy: unusable files are errors that name the file and the problem", "[npy]") {
  const std::string p = tmp_path("bad.npy");
  CHECK_THROWS_WITH(read_npy(p), Catch::Contains("cannot open"));
  { std::ofstream(p) << "not numpy"; }
  CHECK_THROWS_WITH(read_npy(p), Catch::Contains(p) && Catch::Contains("bad magic"));
  write_raw(p, "{'descr': '<i4', 'fortran_order': False, 'shape': (1,), }", std::string(4, '\0'));
  CHECK_THROWS_WITH(read_npy(p), Catch::Contains("unsupported npy dtype '<i4'"));
  write_raw(p, "{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }", std::string(16, '\0'));
  CHECK_THROWS_WITH(read_npy(p), Catch::Contains("truncated npy data"));
  std::remove(p.c_str());
}

// ---- Hostile files (issue 18 section 5, issue 19): every one a DumpError naming the file
// and the field, found before anything is allocated. Each input below crashed, hit undefined
// behaviour, threw another exception type or allocated gigabytes before the codec was
// unified (tests/fuzz/ finds such inputs; the corpus keeps them).

namespace {
/// A .npy file of any version with a raw header (no padding added) and data.
std::string npy_raw(int major, const std::string& header, const std::string& data, int minor = 0) {
  std::string s("\x93NUMPY", 6);
  s += static_cast<char>(major);
  s += static_cast<char>(minor);
  const std::size_t n = header.size();
  for (int i = 0; i < (major == 1 ? 2 : 4); ++i) s += static_cast<char>((n >> (8 * i)) & 0xff);
  return s + header + data;
}
DumpError npy_error(const std::string& bytes, const NpyReadOptions& opt = {}) {
  try {
    parse_npy(bytes, "hostile.npy", opt);
  } catch (const DumpError& e) {
    CHECK(std::string(e.what()).rfind("hostile.npy: ", 0) == 0);
    return e;
  }
  FAIL("no DumpError");
  return DumpError("", 0, "", "");
}
std::string f64_bytes(std::initializer_list<double> v) {
  std::string s;
  for (double x : v) s.append(reinterpret_cast<const char*>(&x), 8);
  return s;
}
}  // namespace

TEST_CASE("npy: a zero header length is an error, not an empty-string access", "[npy][hostile]") {
  // xtensor's xnpy called std::string::back() on the empty header here.
  CHECK(npy_error(std::string("\x93NUMPY\x01\x00\x00\x00", 10)).field == "header");
  CHECK(npy_error(npy_raw(2, "", "")).field == "header");
}

TEST_CASE("npy: a header length beyond the file is refused before reading it", "[npy][hostile]") {
  // Version 2.0, header length 0x7ffffff0, in a 14-byte file.
  const DumpError e = npy_error(std::string("\x93NUMPY\x02\x00\xf0\xff\xff\x7f{}", 14));
  CHECK(e.field == "header_len");
  CHECK(std::string(e.what()).find("truncated npy header") != std::string::npos);
  CHECK(npy_error(std::string("\x93NUMPY\x01\x00\x05", 9)).field == "header_len");
  CHECK(npy_error(std::string("\x93NUMPY\x01", 7)).field == "version");
  CHECK(npy_error("\x93NUM").field == "magic");
  CHECK(npy_error("").field == "magic");
}

TEST_CASE("npy: a shape whose data is not in the file allocates nothing", "[npy][hostile]") {
  // 2^35 f64 (256 GiB) threw std::bad_alloc; 2^30 allocated 8 GiB before noticing.
  for (const char* dims : {"(34359738368,)", "(1073741824,)", "(65536, 65536, 65536)"}) {
    const DumpError e = npy_error(npy_raw(1, fmt::format("{{'descr': '<f8', 'fortran_order': False, 'shape': {}, }}\n", dims), ""));
    CHECK(e.field == (std::string(dims) == "(65536, 65536, 65536)" ? "shape" : "data"));
  }
  // A dimension beyond int64 (std::stoll threw std::out_of_range) and 2^64 elements.
  CHECK(npy_error(npy_raw(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999,), }", "")).field == "shape");
  // Found by fuzz_npy (tests/fuzz/corpus/npy/regress_dim_overflow_times_10.npy): the digit
  // loop multiplied 3922337203685477580 by 10 before comparing with 2^62, a signed
  // overflow (UBSan; tools/sanitize.sh runs this test with it).
  CHECK(npy_error(npy_raw(1, "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 39223372036854775807), }", "")).field == "shape");
  CHECK(npy_error(npy_raw(1, "{'descr': '<f2', 'fortran_order': False, 'shape': (4611686018427387905,), }", "")).field == "shape");
  CHECK(npy_error(npy_raw(1, "{'descr': '<f2', 'fortran_order': False, 'shape': (4611686018427387904, 0), }", "")).field == "shape");
  CHECK(npy_error(npy_raw(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", std::string(24, '\0')))
            .field == "shape");
  // The caller's element limit.
  NpyReadOptions small;
  small.max_elements = 2;
  CHECK(npy_error(npy_raw(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", f64_bytes({1, 2, 3})), small).field == "shape");
}

TEST_CASE("npy: malformed header dicts name the field", "[npy][hostile]") {
  const std::string d = f64_bytes({1, 2});
  auto field = [&](const std::string& h) { return npy_error(npy_raw(1, h, d)).field; };
  CHECK(field("{'descr': '<f8', 'fortran_order': False, 'shape': (") == "shape");
  CHECK(field("{'descr': '<f8', 'fortran_order': False, 'shape': (2)}") == "shape");  // an int, not a tuple
  CHECK(field("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), 'extra': 1}") == "header");
  CHECK(field("{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (2,)}") == "descr");
  CHECK(field("{'descr': '<f8', 'shape': (2,)}") == "fortran_order");
  CHECK(field("{'descr': '<f8', 'fortran_order': maybe, 'shape': (2,)}") == "fortran_order");
  CHECK(field("{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (2,)}") == "descr");
  CHECK(field("{'descr': '>f8', 'fortran_order': False, 'shape': (2,)}") == "descr");
  CHECK(field("{'descr': '<f8', 'fortran_order': False, 'shape': (-2,)}") == "shape");
  CHECK(field("{'descr': '<f8', 'fortran_order': False, 'shape': (2,)} junk") == "header");
  CHECK(field("{'descr: '<f8'}") == "header");
  CHECK(field("[1, 2]") == "header");
  CHECK(npy_error(npy_raw(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,)}", d, 1)).field == "version");
  CHECK(npy_error(npy_raw(4, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,)}", d)).field == "version");
  // Bytes after the data are an error too (a shape that lies the other way).
  CHECK(npy_error(npy_raw(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,)}", d)).field == "data");
}

TEST_CASE("npy: versions 2.0 and 3.0, byte orders '=' and '|', 0-d and Fortran 3-d arrays", "[npy]") {
  const std::string h = "{'descr': '=f8', 'fortran_order': False, 'shape': (2,), }";
  for (int v : {1, 2, 3}) CHECK(parse_npy(npy_raw(v, h, f64_bytes({1, 2})), "v.npy").to_doubles() == std::vector<double>{1, 2});
  const Tensor s = parse_npy(npy_raw(1, "{\"descr\": \"|f8\", \"fortran_order\": False, \"shape\": ()}", f64_bytes({7})), "s.npy");
  CHECK(s.shape() == Shape{});
  CHECK(s.get(0) == 7);
  // A 2 x 3 x 2 array whose element (i, j, k) is 100 i + 10 j + k, stored column-major.
  std::string col;
  for (int k = 0; k < 2; ++k)
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 2; ++i) col += f64_bytes({100.0 * i + 10.0 * j + k});
  const Tensor f = parse_npy(npy_raw(3, "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3, 2)}", col), "f.npy");
  REQUIRE(f.shape() == Shape{2, 3, 2});
  for (std::int64_t i = 0; i < f.size(); ++i) {
    const auto c = unravel(f.shape(), i);
    CHECK(f.get(i) == 100.0 * c[0] + 10.0 * c[1] + c[2]);
  }
  // Zero-element arrays need no data, whatever their other dimensions.
  CHECK(parse_npy(npy_raw(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (0, 5)}", ""), "z.npy").size() == 0);
}

TEST_CASE("npy: our writer's files read back through the file and the memory readers alike", "[npy]") {
  const Tensor t = Tensor::from_doubles(DType::f32, {2, 1, 3}, {1, 2, 3, 4, 5, 6});
  const std::string bytes = npy_bytes(t);
  CHECK(bytes.size() % 64 == 24);  // 64-aligned data: 6 floats after the header
  CHECK(parse_npy(bytes, "m.npy").to_doubles() == t.to_doubles());
  const std::string p = tmp_path("rw.npy");
  write_npy(p, t);
  CHECK(read_npy(p).to_doubles() == t.to_doubles());
  write_npy(p, std::vector<double>{0.5, 0.25}, Shape{2, 1});  // --dump-failures arrays
  CHECK(read_npy(p).dtype() == DType::f64);
  CHECK(read_npy(p).shape() == Shape{2, 1});
  CHECK_THROWS_AS(write_npy(p, std::vector<double>{0.5}, Shape{2}), DumpError);
  std::remove(p.c_str());
  CHECK_THROWS_WITH(read_npy(std::filesystem::temp_directory_path().string()), Catch::Contains("not a regular file"));
}
