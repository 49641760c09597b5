#include "backends/npy.hpp"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace normcheck {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw std::runtime_error(fmt::format("{}: {}", path, what));
}

/// Value of key `key` in the header dict literal, as raw text up to the next top-level
/// comma or closing brace ("'<f4'", "False", "(2, 3)").
std::string dict_value(const std::string& path, const std::string& h, const std::string& key) {
  std::size_t k = h.find("'" + key + "'");
  if (k == std::string::npos) k = h.find("\"" + key + "\"");
  if (k == std::string::npos) fail(path, fmt::format("npy header has no '{}': {}", key, h));
  std::size_t c = h.find(':', k);
  if (c == std::string::npos) fail(path, "malformed npy header: " + h);
  std::size_t a = c + 1;
  while (a < h.size() && h[a] == ' ') ++a;
  std::size_t b = a;
  int depth = 0;
  for (; b < h.size(); ++b) {
    const char ch = h[b];
    if (ch == '(' || ch == '[') ++depth;
    else if (ch == ')' || ch == ']') --depth;
    else if ((ch == ',' || ch == '}') && depth == 0) break;
  }
  std::string v = h.substr(a, b - a);
  while (!v.empty() && v.back() == ' ') v.pop_back();
  return v;
}

}  // namespace

void write_npy_tensor(const std::string& path, const Tensor& t) {
  const char* descr = "<f8";
  Tensor f32;  // bf16 goes out as float32 values
  const Tensor* src = &t;
  switch (t.dtype()) {
    case DType::f64: descr = "<f8"; break;
    case DType::f32: descr = "<f4"; break;
    case DType::f16: descr = "<f2"; break;
    case DType::bf16: descr = "<f4"; f32 = t.cast(DType::f32); src = &f32; break;
  }
  // "()", "(3,)", "(2, 3)": a Python tuple literal.
  std::string shape = fmt::format("{}", fmt::join(t.shape(), ", "));
  if (t.shape().size() == 1) shape += ",";
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", descr, shape);
  // magic(6) + version(2) + len(2) + header + '\n', padded to a multiple of 64.
  const std::size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  std::ofstream f(path, std::ios::binary);
  if (!f) fail(path, "cannot open for writing");
  const std::uint16_t hl = static_cast<std::uint16_t>(header.size());
  const unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, static_cast<unsigned char>(hl & 0xff),
                                 static_cast<unsigned char>(hl >> 8)};
  f.write(reinterpret_cast<const char*>(pre), 10);
  f.write(header.data(), static_cast<std::streamsize>(header.size()));
  f.write(static_cast<const char*>(src->data()), static_cast<std::streamsize>(src->nbytes()));
  if (!f) fail(path, "write failed");
}

Tensor read_npy_tensor(const std::string& path, std::optional<DType> as) {
  std::ifstream f(path, std::ios::binary);
  if (!f) fail(path, "cannot open (missing file?)");
  unsigned char pre[8];
  if (!f.read(reinterpret_cast<char*>(pre), 8) || std::memcmp(pre, "\x93NUMPY", 6) != 0)
    fail(path, "not a .npy file (bad magic)");
  std::uint32_t hl = 0;
  if (pre[6] == 1) {
    unsigned char b[2];
    if (!f.read(reinterpret_cast<char*>(b), 2)) fail(path, "truncated npy header");
    hl = b[0] | (b[1] << 8);
  } else if (pre[6] == 2 || pre[6] == 3) {
    unsigned char b[4];
    if (!f.read(reinterpret_cast<char*>(b), 4)) fail(path, "truncated npy header");
    hl = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<std::uint32_t>(b[3]) << 24);
  } else {
    fail(path, fmt::format("unsupported npy format version {}.{}", pre[6], pre[7]));
  }
  if (hl > (1u << 20)) fail(path, "npy header too long");
  std::string h(hl, '\0');
  if (!f.read(h.data(), hl)) fail(path, "truncated npy header");
  std::string descr = dict_value(path, h, "descr");
  if (descr.size() >= 2 && (descr.front() == '\'' || descr.front() == '"')) descr = descr.substr(1, descr.size() - 2);
  DType dt;
  if (descr == "<f8" || descr == "=f8") dt = DType::f64;
  else if (descr == "<f4" || descr == "=f4") dt = DType::f32;
  else if (descr == "<f2" || descr == "=f2") dt = DType::f16;
  else fail(path, fmt::format("unsupported npy dtype '{}' (expected '<f8', '<f4' or '<f2')", descr));
  const std::string fo = dict_value(path, h, "fortran_order");
  if (fo != "False" && fo != "True") fail(path, "malformed fortran_order in npy header: " + fo);
  const std::string sh = dict_value(path, h, "shape");
  if (sh.size() < 2 || sh.front() != '(' || sh.back() != ')') fail(path, "malformed shape in npy header: " + sh);
  Shape shape;
  {
    std::size_t i = 1;
    while (i < sh.size() - 1) {
      while (i < sh.size() - 1 && (sh[i] == ' ' || sh[i] == ',')) ++i;
      if (i >= sh.size() - 1) break;
      std::size_t j = i;
      while (j < sh.size() - 1 && sh[j] >= '0' && sh[j] <= '9') ++j;
      if (j == i) fail(path, "malformed shape in npy header: " + sh);
      shape.push_back(std::stoll(sh.substr(i, j - i)));
      i = j;
    }
  }
  Tensor t(dt, shape);
  if (!f.read(static_cast<char*>(t.data()), static_cast<std::streamsize>(t.nbytes())))
    fail(path, fmt::format("truncated npy data: expected {} bytes for shape {}", t.nbytes(), shape_str(shape)));
  if (fo == "True" && shape.size() > 1) {
    // Column-major data: element with coordinates c sits at sum c_k * prod_{j<k} shape_j.
    Tensor r(dt, shape);
    const std::size_t eb = format_info(dt).bytes;
    const auto* s = static_cast<const unsigned char*>(t.data());
    auto* d = static_cast<unsigned char*>(r.data());
    for (std::int64_t i = 0; i < t.size(); ++i) {
      const auto c = unravel(shape, i);
      std::int64_t off = 0, stride = 1;
      for (std::size_t k = 0; k < c.size(); ++k) { off += c[k] * stride; stride *= shape[k]; }
      std::memcpy(d + i * eb, s + off * eb, eb);
    }
    t = std::move(r);
  }
  if (as && *as != dt) {
    Tensor r(*as, shape);
    for (std::int64_t i = 0; i < t.size(); ++i) {
      const double v = t.get(i);
      if (!representable(*as, v))
        fail(path, fmt::format("declared {} but element {} = {:.17g} is not a {} value", dtype_name(*as),
                               shape_str(unravel(shape, i)), v, dtype_name(*as)));
      r.set(i, v);
    }
    t = std::move(r);
  }
  return t;
}

}  // namespace normcheck
