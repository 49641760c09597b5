// .npy exchange of external-process backends: exact round trips in every dtype, NumPy's
// header rules, Fortran order, and clear errors for files a worker got wrong.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>

#include "backends/npy.hpp"

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
  write_npy_tensor(p, t);
  // bf16 travels as float32 values and comes back as bf16 when declared so.
  const Tensor r = read_npy_tensor(p, T);
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
  write_npy_tensor(p, Tensor::from_doubles(DType::f16, {3}, {1, 2, 3}));
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
  const Tensor t = read_npy_tensor(p);
  std::remove(p.c_str());
  CHECK(t.to_doubles() == std::vector<double>{1, 2, 3, 4, 5, 6});
}

TEST_CASE("npy: a declared dtype must hold every value exactly", "[npy]") {
  const std::string p = tmp_path("declared.npy");
  write_npy_tensor(p, Tensor::from_doubles(DType::f32, {2}, {1.0, 0.1}));
  CHECK_THROWS_WITH(read_npy_tensor(p, DType::bf16), Catch::Contains("declared bf16 but element [1] = 0.10000000149011612"));
  CHECK(read_npy_tensor(p, DType::f64).get(1) == static_cast<double>(0.1f));
  std::remove(p.c_str());
}

TEST_CASE("npy: unusable files are errors that name the file and the problem", "[npy]") {
  const std::string p = tmp_path("bad.npy");
  CHECK_THROWS_WITH(read_npy_tensor(p), Catch::Contains("cannot open"));
  { std::ofstream(p) << "not numpy"; }
  CHECK_THROWS_WITH(read_npy_tensor(p), Catch::Contains(p) && Catch::Contains("bad magic"));
  write_raw(p, "{'descr': '<i4', 'fortran_order': False, 'shape': (1,), }", std::string(4, '\0'));
  CHECK_THROWS_WITH(read_npy_tensor(p), Catch::Contains("unsupported npy dtype '<i4'"));
  write_raw(p, "{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }", std::string(16, '\0'));
  CHECK_THROWS_WITH(read_npy_tensor(p), Catch::Contains("truncated npy data"));
  std::remove(p.c_str());
}
