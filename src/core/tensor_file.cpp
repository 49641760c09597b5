#include "core/tensor_file.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/json_bounded.hpp"

namespace normcheck {

DumpError::DumpError(std::string file_, int line_, std::string field_, const std::string& msg)
    : std::runtime_error(line_ > 0 ? fmt::format("{}:{}: {}: {}", file_, line_, field_, msg)
                                   : fmt::format("{}: {}: {}", file_, field_, msg)),
      file(std::move(file_)), line(line_), field(std::move(field_)) {}

static_assert(sizeof(float) == 4 && sizeof(double) == 8, "IEEE binary32/64 expected");

namespace {

namespace fs = std::filesystem;

bool little_endian() {
  const std::uint16_t one = 1;
  unsigned char b;
  std::memcpy(&b, &one, 1);
  return b == 1;
}

/// Up to 80 bytes of untrusted text for an error message, non-printable bytes as \xNN.
std::string excerpt(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size() && i < 80; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f) out += static_cast<char>(c);
    else out += fmt::format("\\x{:02x}", c);
  }
  if (s.size() > 80) out += "...";
  return out;
}

/// Bytes of a tensor file, from memory or from disk, read by offset. Every read is
/// bounds-checked here again, whatever the caller checked before.
class Source {
 public:
  explicit Source(std::string name) : name_(std::move(name)) {}
  virtual ~Source() = default;
  const std::string& name() const { return name_; }
  virtual std::uint64_t size() const = 0;
  /// Copies n bytes at offset `off` into dst; throws DumpError(field) if they are not there.
  void read(std::uint64_t off, void* dst, std::size_t n, const char* field) {
    if (off > size() || n > size() - off)
      throw DumpError(name_, 0, field, fmt::format("{} bytes at offset {} are beyond the end of the {}-byte file", n, off, size()));
    if (n) read_raw(off, dst, n, field);
  }
  std::string read_string(std::uint64_t off, std::size_t n, const char* field) {
    std::string s(n, '\0');
    read(off, s.data(), n, field);
    return s;
  }

 protected:
  virtual void read_raw(std::uint64_t off, void* dst, std::size_t n, const char* field) = 0;
  std::string name_;
};

class MemorySource final : public Source {
 public:
  MemorySource(std::string_view bytes, std::string name) : Source(std::move(name)), bytes_(bytes) {}
  std::uint64_t size() const override { return bytes_.size(); }

 private:
  void read_raw(std::uint64_t off, void* dst, std::size_t n, const char*) override {
    std::memcpy(dst, bytes_.data() + off, n);
  }
  std::string_view bytes_;
};

class FileSource final : public Source {
 public:
  explicit FileSource(const std::string& path) : Source(path) {
    std::error_code ec;
    const auto st = fs::status(path, ec);
    if (ec || !fs::exists(st)) throw DumpError(path, 0, "file", "cannot open (missing file?)");
    // A FIFO or a device would block or never end: tensor files are regular files.
    if (!fs::is_regular_file(st)) throw DumpError(path, 0, "file", "cannot open: not a regular file");
    f_.open(path, std::ios::binary);
    if (!f_) throw DumpError(path, 0, "file", "cannot open (permissions?)");
    size_ = fs::file_size(path, ec);
    if (ec) throw DumpError(path, 0, "file", fmt::format("cannot read its size: {}", ec.message()));
  }
  std::uint64_t size() const override { return size_; }

 private:
  void read_raw(std::uint64_t off, void* dst, std::size_t n, const char* field) override {
    f_.clear();
    f_.seekg(static_cast<std::streamoff>(off));
    f_.read(static_cast<char*>(dst), static_cast<std::streamsize>(n));
    if (!f_ || static_cast<std::size_t>(f_.gcount()) != n)
      throw DumpError(name_, 0, field, fmt::format("read of {} bytes at offset {} failed (the file changed?)", n, off));
  }
  std::ifstream f_;
  std::uint64_t size_ = 0;
};

/// Element count of `s`: the product of its dimensions, or 0 if one is 0. Throws
/// DumpError(field) when a dimension is negative or the nonzero dimensions multiply to
/// more than max_elements (checked before each multiplication: no overflow).
std::int64_t checked_count(const Shape& s, std::int64_t max_elements, const std::string& file, const std::string& field) {
  const std::int64_t limit = std::clamp<std::int64_t>(max_elements, 0, kMaxTensorFileElements);
  std::int64_t count = 1;
  bool zero = false;
  for (const auto d : s) {
    if (d < 0) throw DumpError(file, 0, field, fmt::format("dimension {} is negative", d));
    if (d == 0) {
      zero = true;
      continue;
    }
    if (count > limit / d)
      throw DumpError(file, 0, field, fmt::format("shape {} declares more than {} elements (the limit)", shape_str(s), limit));
    count *= d;
  }
  return zero ? 0 : count;
}

// ---- .npy ---------------------------------------------------------------------------------

constexpr unsigned char kNpyMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
constexpr std::int64_t kMaxDim = std::int64_t{1} << 62;

struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  Shape shape;
};

/// Parser of the header's Python dict literal: {'descr': '<f4', 'fortran_order': False,
/// 'shape': (2, 3), } with any whitespace between tokens, either quote, a trailing comma.
/// Every access checks pos_ < h_.size() first.
class NpyHeaderParser {
 public:
  NpyHeaderParser(std::string_view h, const std::string& path) : h_(h), path_(path) {}

  NpyHeader parse() {
    NpyHeader out;
    bool seen_descr = false, seen_fortran = false, seen_shape = false;
    skip_ws();
    expect('{', "header", "the header is not a dict literal '{...}'");
    for (;;) {
      skip_ws();
      if (peek() == '}') {
        ++pos_;
        break;
      }
      const std::string key = string_literal("header", "expected a quoted key");
      skip_ws();
      expect(':', "header", fmt::format("expected ':' after key '{}'", key));
      skip_ws();
      auto once = [&](bool& seen) {
        if (seen) fail(key, "the key appears twice in the npy header");
        seen = true;
      };
      if (key == "descr") {
        once(seen_descr);
        if (peek() != '\'' && peek() != '"')
          fail("descr", "expected a dtype string such as '<f4' (structured dtypes are not read)");
        out.descr = string_literal("descr", "expected a dtype string such as '<f4'");
      } else if (key == "fortran_order") {
        once(seen_fortran);
        if (word("True")) out.fortran_order = true;
        else if (word("False")) out.fortran_order = false;
        else fail("fortran_order", "expected True or False");
      } else if (key == "shape") {
        once(seen_shape);
        out.shape = tuple();
      } else {
        fail("header", fmt::format("unexpected key '{}' (an npy header holds exactly descr, fortran_order and shape)", excerpt(key)));
      }
      skip_ws();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      expect('}', "header", "expected ',' or '}' after a value");
      break;
    }
    skip_ws();
    if (pos_ < h_.size()) fail("header", "bytes other than padding after the dict");
    if (!seen_descr) fail("descr", "missing from the npy header");
    if (!seen_fortran) fail("fortran_order", "missing from the npy header");
    if (!seen_shape) fail("shape", "missing from the npy header");
    return out;
  }

 private:
  [[noreturn]] void fail(const std::string& field, const std::string& msg) const {
    throw DumpError(path_, 0, field, fmt::format("{} (header: \"{}\")", msg, excerpt(h_)));
  }
  /// The byte at the cursor, or '\0' at the end (never a valid token start).
  char peek() const { return pos_ < h_.size() ? h_[pos_] : '\0'; }
  void skip_ws() {
    while (pos_ < h_.size() && (h_[pos_] == ' ' || h_[pos_] == '\t' || h_[pos_] == '\n' || h_[pos_] == '\r')) ++pos_;
  }
  void expect(char c, const char* field, const std::string& msg) {
    if (peek() != c) fail(field, msg);
    ++pos_;
  }
  bool word(std::string_view w) {
    if (h_.substr(pos_, w.size()) != w) return false;
    const std::size_t end = pos_ + w.size();
    if (end < h_.size() && (std::isalnum(static_cast<unsigned char>(h_[end])) || h_[end] == '_')) return false;
    pos_ = end;
    return true;
  }
  /// 'text' or "text" without escapes (no key or dtype of ours needs one).
  std::string string_literal(const char* field, const char* msg) {
    const char q = peek();
    if (q != '\'' && q != '"') fail(field, msg);
    const std::size_t start = pos_ + 1;
    std::size_t end = start;
    while (end < h_.size() && h_[end] != q) {
      if (h_[end] == '\\' || h_[end] == '\n') fail(field, "escapes and line breaks in strings are not read");
      ++end;
    }
    if (end >= h_.size()) fail(field, "unterminated string");
    pos_ = end + 1;
    return std::string(h_.substr(start, end - start));
  }
  /// A Python tuple of non-negative integers: (), (3,), (2, 3), (2, 3,). "(3)" is the
  /// integer 3 in Python, and NumPy refuses it; so do we.
  Shape tuple() {
    expect('(', "shape", "expected a tuple of integers such as (2, 3)");
    Shape s;
    skip_ws();
    if (peek() == ')') {
      ++pos_;
      return s;
    }
    for (;;) {
      skip_ws();
      if (!std::isdigit(static_cast<unsigned char>(peek()))) fail("shape", "expected a non-negative integer");
      std::int64_t v = 0;
      while (std::isdigit(static_cast<unsigned char>(peek()))) {
        const int digit = peek() - '0';
        if (v > (kMaxDim - digit) / 10) fail("shape", "a dimension beyond 2^62");  // before v * 10 can overflow
        v = v * 10 + digit;
        ++pos_;
      }
      s.push_back(v);
      skip_ws();
      if (peek() == ',') {
        ++pos_;
        skip_ws();
        if (peek() == ')') {
          ++pos_;
          return s;
        }
        continue;
      }
      if (peek() == ')') {
        ++pos_;
        if (s.size() == 1) fail("shape", "'(n)' is not a tuple: a 1-d shape is written (n,)");
        return s;
      }
      fail("shape", "expected ',' or ')' in the shape tuple");
    }
  }

  std::string_view h_;
  const std::string& path_;
  std::size_t pos_ = 0;
};

Tensor read_npy_from(Source& src, const NpyReadOptions& opt) {
  const std::string& path = src.name();
  if (!little_endian()) throw DumpError(path, 0, "data", "big-endian hosts are not supported");
  const std::uint64_t size = src.size();
  unsigned char pre[12] = {};
  if (size < 6) throw DumpError(path, 0, "magic", fmt::format("not a .npy file (bad magic: a file of {} bytes)", size));
  src.read(0, pre, 6, "magic");
  if (std::memcmp(pre, kNpyMagic, 6) != 0) throw DumpError(path, 0, "magic", "not a .npy file (bad magic)");
  if (size < 8) throw DumpError(path, 0, "version", "truncated npy header: no version bytes");
  src.read(6, pre + 6, 2, "version");
  const unsigned major = pre[6], minor = pre[7];
  if (major < 1 || major > 3 || minor != 0)
    throw DumpError(path, 0, "version", fmt::format("unsupported npy format version {}.{} (1.0, 2.0, 3.0)", major, minor));
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  if (size < 8 + len_bytes) throw DumpError(path, 0, "header_len", "truncated npy header: no header length");
  src.read(8, pre + 8, len_bytes, "header_len");
  std::uint32_t hl = pre[8] | (pre[9] << 8);
  if (len_bytes == 4) hl |= (static_cast<std::uint32_t>(pre[10]) << 16) | (static_cast<std::uint32_t>(pre[11]) << 24);
  const std::uint64_t data_at = 8 + len_bytes + std::uint64_t{hl};
  if (data_at > size)
    throw DumpError(path, 0, "header_len",
                    fmt::format("truncated npy header: {} header bytes declared, {} in the file", hl, size - 8 - len_bytes));
  if (hl > kMaxNpyHeaderBytes)
    throw DumpError(path, 0, "header_len", fmt::format("npy header of {} bytes is longer than {}", hl, kMaxNpyHeaderBytes));
  const std::string header = src.read_string(8 + len_bytes, hl, "header");
  const NpyHeader h = NpyHeaderParser(header, path).parse();

  const std::string& d = h.descr;
  const bool le = d.size() == 3 && (d[0] == '<' || d[0] == '=' || d[0] == '|') && d[1] == 'f';
  DType dt;
  const bool i1 = d == "|i1" || d == "<i1" || d == "=i1";
  if (le && d[2] == '8') dt = DType::f64;
  else if (le && d[2] == '4') dt = DType::f32;
  else if (le && d[2] == '2') dt = DType::f16;
  else if (i1) dt = DType::int8;
  else
    throw DumpError(path, 0, "descr",
                    fmt::format("unsupported npy dtype '{}' (expected '<f8', '<f4', '<f2' or '|i1'; bf16 goes in .safetensors)",
                                excerpt(d)));
  const std::size_t eb = format_info(dt).bytes;
  const std::int64_t n = checked_count(h.shape, opt.max_elements, path, "shape");
  const std::uint64_t want = static_cast<std::uint64_t>(n) * eb, have = size - data_at;
  if (have < want)
    throw DumpError(path, 0, "data",
                    fmt::format("truncated npy data: expected {} bytes for shape {} of '{}', the file has {}", want,
                                shape_str(h.shape), d, have));
  if (have > want)
    throw DumpError(path, 0, "data",
                    fmt::format("{} bytes after the data: shape {} of '{}' takes {} bytes, the file has {}", have - want,
                                shape_str(h.shape), d, want, have));
  Tensor t(dt, h.shape);
  src.read(data_at, t.data(), static_cast<std::size_t>(want), "data");
  if (h.fortran_order && h.shape.size() > 1 && n > 0) {
    // Column-major data: coordinates c sit at sum_k c_k * fstride_k, fstride_k = prod_{j<k}
    // shape_j. Walk the row-major coordinates like an odometer, updating that offset.
    const std::size_t nd = h.shape.size();
    std::vector<std::int64_t> c(nd, 0), fstride(nd, 1);
    for (std::size_t k = 1; k < nd; ++k) fstride[k] = fstride[k - 1] * h.shape[k - 1];
    Tensor r(dt, h.shape);
    const auto* s = static_cast<const unsigned char*>(t.data());
    auto* o = static_cast<unsigned char*>(r.data());
    std::int64_t off = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      std::memcpy(o + i * eb, s + off * eb, eb);
      for (std::size_t k = nd; k-- > 0;) {
        off += fstride[k];
        if (++c[k] < h.shape[k]) break;
        off -= fstride[k] * h.shape[k];
        c[k] = 0;
      }
    }
    t = std::move(r);
  }
  if (opt.as && *opt.as != dt) {
    Tensor r(*opt.as, h.shape);
    for (std::int64_t i = 0; i < t.size(); ++i) {
      const double v = t.get(i);
      if (!representable(*opt.as, v))
        throw DumpError(path, 0, "data",
                        fmt::format("declared {} but element {} = {:.17g} is not a {} value", dtype_name(*opt.as),
                                    shape_str(unravel(h.shape, i)), v, dtype_name(*opt.as)));
      r.set(i, v);
    }
    t = std::move(r);
  }
  return t;
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw DumpError(path, 0, "write", "cannot open for writing");
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  f.close();
  if (!f) throw DumpError(path, 0, "write", "write failed");
}

// ---- .safetensors -------------------------------------------------------------------------

std::optional<DType> st_dtype(const std::string& s) {
  if (s == "F64") return DType::f64;
  if (s == "F32") return DType::f32;
  if (s == "F16") return DType::f16;
  if (s == "BF16") return DType::bf16;
  if (s == "F8_E4M3") return DType::fp8_e4m3fn;  // the safetensors names
  if (s == "F8_E5M2") return DType::fp8_e5m2;
  if (s == "I8") return DType::int8;
  return std::nullopt;
}

std::string st_name(DType t) {
  switch (t) {
    case DType::f64: return "F64";
    case DType::f32: return "F32";
    case DType::f16: return "F16";
    case DType::bf16: return "BF16";
    case DType::fp8_e4m3fn: return "F8_E4M3";
    case DType::fp8_e5m2: return "F8_E5M2";
    case DType::int8: return "I8";
  }
  return "?";
}

std::map<std::string, Tensor> read_safetensors_from(Source& src, std::int64_t max_elements) {
  const std::string& path = src.name();
  if (!little_endian()) throw DumpError(path, 0, "data", "big-endian hosts are not supported");
  const std::uint64_t size = src.size();
  if (size < 8) throw DumpError(path, 0, "header_size", fmt::format("file of {} bytes has no 8-byte header size", size));
  unsigned char nb[8];
  src.read(0, nb, 8, "header_size");
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | nb[i];
  if (n > size - 8) throw DumpError(path, 0, "header_size", fmt::format("header of {} bytes in a file of {} bytes", n, size));
  if (n > kMaxSafetensorsHeaderBytes)
    throw DumpError(path, 0, "header_size", fmt::format("header of {} bytes is longer than {}", n, kMaxSafetensorsHeaderBytes));
  const std::string header = src.read_string(8, static_cast<std::size_t>(n), "header");
  const std::uint64_t base = 8 + n, buffer = size - base;
  nlohmann::json j;
  try {
    j = parse_json_bounded(header, path);
  } catch (const JsonError& e) {
    throw DumpError(path, 0, "header", fmt::format("JSON header does not parse: {}", e.detail));
  }
  if (!j.is_object()) throw DumpError(path, 0, "header", "JSON header is not an object");
  struct Entry {
    std::string name;
    DType dtype;
    Shape shape;
    std::uint64_t begin, end;
  };
  std::vector<Entry> entries;
  for (const auto& [name, e] : j.items()) {
    if (name == "__metadata__") continue;
    if (!e.is_object() || !e.contains("dtype") || !e.contains("shape") || !e.contains("data_offsets"))
      throw DumpError(path, 0, name, "needs dtype, shape and data_offsets");
    const auto& jd = e.at("dtype");
    if (!jd.is_string()) throw DumpError(path, 0, name + ".dtype", "expected a string");
    const std::string dname = jd.get<std::string>();
    const auto t = st_dtype(dname);
    if (!t) throw DumpError(path, 0, name + ".dtype", fmt::format("dtype '{}' not read (F64 | F32 | F16 | BF16)", excerpt(dname)));
    const auto& js = e.at("shape");
    if (!js.is_array()) throw DumpError(path, 0, name + ".shape", "expected an array of integers");
    Shape s;
    for (const auto& d : js) {
      if (!d.is_number_unsigned()) throw DumpError(path, 0, name + ".shape", "expected non-negative integers");
      const auto v = d.get<std::uint64_t>();
      if (v > static_cast<std::uint64_t>(kMaxDim)) throw DumpError(path, 0, name + ".shape", "a dimension beyond 2^62");
      s.push_back(static_cast<std::int64_t>(v));
    }
    const std::int64_t count = checked_count(s, max_elements, path, name + ".shape");
    const auto& off = e.at("data_offsets");
    if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() || !off[1].is_number_unsigned())
      throw DumpError(path, 0, name + ".data_offsets", "expected [begin, end]");
    const std::uint64_t b = off[0].get<std::uint64_t>(), en = off[1].get<std::uint64_t>();
    if (en < b || en > buffer)
      throw DumpError(path, 0, name + ".data_offsets", fmt::format("[{}, {}] outside the {}-byte buffer", b, en, buffer));
    const std::uint64_t want = static_cast<std::uint64_t>(count) * format_info(*t).bytes;
    if (en - b != want)
      throw DumpError(path, 0, name + ".data_offsets",
                      fmt::format("{} bytes for shape {} of {} ({} expected)", en - b, shape_str(s), dname, want));
    entries.push_back({name, *t, std::move(s), b, en});
  }
  // The reference implementation's rule: the tensors tile the buffer, without overlap or
  // gaps. It also bounds what we allocate by the file's size (overlapping entries could
  // otherwise each claim the whole buffer).
  std::vector<const Entry*> order;
  for (const auto& e : entries) order.push_back(&e);
  std::sort(order.begin(), order.end(), [](const Entry* a, const Entry* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  std::uint64_t at = 0;
  for (const Entry* e : order) {
    if (e->begin != at)
      throw DumpError(path, 0, e->name + ".data_offsets",
                      fmt::format("begins at {} where the previous tensor ends at {} (tensors must tile the buffer: no "
                                  "overlap, no gap)",
                                  e->begin, at));
    at = e->end;
  }
  if (at != buffer)
    throw DumpError(path, 0, "header", fmt::format("the tensors cover {} bytes of the {}-byte buffer", at, buffer));
  std::map<std::string, Tensor> out;
  for (const auto& e : entries) {
    Tensor x(e.dtype, e.shape);
    src.read(base + e.begin, x.data(), x.nbytes(), "data");
    out.emplace(e.name, std::move(x));
  }
  return out;
}

}  // namespace

Tensor read_npy(const std::string& path, const NpyReadOptions& opt) {
  FileSource src(path);
  return read_npy_from(src, opt);
}

Tensor parse_npy(std::string_view bytes, const std::string& name, const NpyReadOptions& opt) {
  MemorySource src(bytes, name);
  return read_npy_from(src, opt);
}

std::string npy_bytes(const Tensor& t, NpyBf16 bf16, const std::string& name) {
  if (!little_endian()) throw DumpError(name, 0, "data", "big-endian hosts are not supported");
  const char* descr = "<f8";
  Tensor f32;
  const Tensor* src = &t;
  switch (t.dtype()) {
    case DType::f64: descr = "<f8"; break;
    case DType::f32: descr = "<f4"; break;
    case DType::f16: descr = "<f2"; break;
    case DType::bf16:
    case DType::fp8_e4m3fn:
    case DType::fp8_e5m2:
      if (bf16 == NpyBf16::refuse)
        throw DumpError(name, 0, "descr", fmt::format("numpy has no {}: write .safetensors", dtype_name(t.dtype())));
      descr = "<f4";  // exact: every bf16 and fp8 value is a binary32 value
      f32 = t.cast(DType::f32);
      src = &f32;
      break;
    case DType::int8: descr = "|i1"; break;
  }
  // "()", "(3,)", "(2, 3)": a Python tuple literal.
  std::string shape = fmt::format("{}", fmt::join(t.shape(), ", "));
  if (t.shape().size() == 1) shape += ",";
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", descr, shape);
  // magic(6) + version(2) + length(2 or 4) + header + '\n', padded to a multiple of 64.
  const bool v2 = header.size() + 1 + 63 > 0xffff;  // the padded length must fit 16 bits
  const std::size_t pre = v2 ? 12 : 10;
  header.append((64 - (pre + header.size() + 1) % 64) % 64, ' ');
  header.push_back('\n');
  const std::size_t hl = header.size();
  std::string out(reinterpret_cast<const char*>(kNpyMagic), 6);
  out += static_cast<char>(v2 ? 2 : 1);
  out += '\0';
  for (std::size_t i = 0; i < (v2 ? 4u : 2u); ++i) out += static_cast<char>((hl >> (8 * i)) & 0xff);
  out += header;
  out.append(static_cast<const char*>(src->data()), src->nbytes());
  return out;
}

void write_npy(const std::string& path, const Tensor& t, NpyBf16 bf16) {
  write_bytes(path, npy_bytes(t, bf16, path));
}

void write_npy(const std::string& path, const std::vector<double>& values, const Shape& shape) {
  if (static_cast<std::int64_t>(values.size()) != checked_count(shape, kMaxTensorFileElements, path, "shape"))
    throw DumpError(path, 0, "shape", fmt::format("{} values for shape {}", values.size(), shape_str(shape)));
  Tensor t(DType::f64, shape);
  if (!values.empty()) std::memcpy(t.data(), values.data(), t.nbytes());
  write_npy(path, t);
}

std::map<std::string, Tensor> read_safetensors(const std::string& path, std::int64_t max_elements) {
  FileSource src(path);
  return read_safetensors_from(src, max_elements);
}

std::map<std::string, Tensor> parse_safetensors(std::string_view bytes, const std::string& name, std::int64_t max_elements) {
  MemorySource src(bytes, name);
  return read_safetensors_from(src, max_elements);
}

void write_safetensors(const std::string& path, const std::map<std::string, Tensor>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  nlohmann::json j = nlohmann::json::object();
  if (!metadata.empty()) j["__metadata__"] = metadata;
  std::uint64_t off = 0;
  for (auto& [name, t] : tensors) {
    j[name] = {{"dtype", st_name(t.dtype())}, {"shape", t.shape()}, {"data_offsets", {off, off + t.nbytes()}}};
    off += t.nbytes();
  }
  std::string header = j.dump();
  while (header.size() % 8) header += ' ';
  std::string out(8, '\0');
  const std::uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[static_cast<std::size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
  out += header;
  for (auto& [name, t] : tensors) out.append(static_cast<const char*>(t.data()), t.nbytes());
  write_bytes(path, out);
}

}  // namespace normcheck
