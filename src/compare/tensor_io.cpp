#include "compare/tensor_io.hpp"

#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <xtensor/xadapt.hpp>
#include <xtensor/xnpy.hpp>

namespace normcheck {

DumpError::DumpError(std::string file_, int line_, std::string field_, const std::string& msg)
    : std::runtime_error(line_ > 0 ? fmt::format("{}:{}: {}: {}", file_, line_, field_, msg)
                                   : fmt::format("{}: {}: {}", file_, field_, msg)),
      file(std::move(file_)), line(line_), field(std::move(field_)) {}

static_assert(sizeof(float) == 4 && sizeof(double) == 8, "IEEE binary32/64 expected");

namespace {

bool little_endian() {
  const std::uint16_t one = 1;
  unsigned char b;
  std::memcpy(&b, &one, 1);
  return b == 1;
}

}  // namespace

Tensor read_npy(const std::string& path) {
  if (!little_endian()) throw DumpError(path, 0, "data", "big-endian hosts are not supported");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DumpError(path, 0, "file", "cannot open");
  xt::detail::npy_file f = [&] {
    try {
      return xt::detail::load_npy_file(in);
    } catch (const std::exception& e) {
      throw DumpError(path, 0, "header", fmt::format("not a readable .npy file: {}", e.what()));
    }
  }();
  if (f.m_fortran_order) throw DumpError(path, 0, "fortran_order", "Fortran-order arrays are not read; save with C order");
  const std::string& ts = f.m_typestring;  // e.g. "<f4"
  DType t;
  if (ts == "<f2") t = DType::f16;
  else if (ts == "<f4") t = DType::f32;
  else if (ts == "<f8") t = DType::f64;
  else throw DumpError(path, 0, "descr", fmt::format("dtype '{}' not read (<f2 | <f4 | <f8; bf16 goes in .safetensors)", ts));
  Shape s(f.m_shape.begin(), f.m_shape.end());
  Tensor out = [&] {
    try {
      return Tensor(t, s);
    } catch (const std::exception& e) {
      throw DumpError(path, 0, "shape", e.what());
    }
  }();
  if (out.nbytes() != f.m_n_bytes)
    throw DumpError(path, 0, "data", fmt::format("{} bytes for shape {} of {}", f.m_n_bytes, shape_str(s), ts));
  if (!in) throw DumpError(path, 0, "data", "file is shorter than its header says");
  if (out.nbytes()) std::memcpy(out.data(), f.ptr(), out.nbytes());
  return out;
}

void write_npy(const std::string& path, const Tensor& t) {
  const std::vector<std::size_t> s(t.shape().begin(), t.shape().end());
  const std::size_t n = static_cast<std::size_t>(t.size());
  std::string bytes;
  try {
    switch (t.dtype()) {
      case DType::f64: bytes = xt::dump_npy(xt::adapt(t.as<double>(), n, xt::no_ownership(), s)); break;
      case DType::f32: bytes = xt::dump_npy(xt::adapt(t.as<float>(), n, xt::no_ownership(), s)); break;
      case DType::f16: bytes = xt::dump_npy(xt::adapt(t.as<std::uint16_t>(), n, xt::no_ownership(), s)); break;
      case DType::bf16: throw DumpError(path, 0, "dtype", "numpy has no bfloat16: write .safetensors");
    }
  } catch (const DumpError&) {
    throw;
  } catch (const std::exception& e) {
    throw DumpError(path, 0, "write", e.what());
  }
  if (t.dtype() == DType::f16) {
    // xnpy writes binary16 bits as '<u2'; the descr of IEEE half is '<f2' (same length).
    const auto at = bytes.find("'<u2'");
    if (at == std::string::npos) throw DumpError(path, 0, "descr", "unexpected xnpy header");
    bytes.replace(at, 5, "'<f2'");
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw DumpError(path, 0, "write", "cannot write");
}

namespace {

std::optional<DType> st_dtype(const std::string& s) {
  if (s == "F64") return DType::f64;
  if (s == "F32") return DType::f32;
  if (s == "F16") return DType::f16;
  if (s == "BF16") return DType::bf16;
  return std::nullopt;
}

std::string st_name(DType t) {
  switch (t) {
    case DType::f64: return "F64";
    case DType::f32: return "F32";
    case DType::f16: return "F16";
    case DType::bf16: return "BF16";
  }
  return "?";
}

}  // namespace

std::map<std::string, Tensor> read_safetensors(const std::string& path) {
  if (!little_endian()) throw DumpError(path, 0, "data", "big-endian hosts are not supported");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DumpError(path, 0, "file", "cannot open");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() < 8) throw DumpError(path, 0, "header_size", fmt::format("file of {} bytes has no 8-byte header size", bytes.size()));
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[static_cast<std::size_t>(i)]);
  if (n > bytes.size() - 8) throw DumpError(path, 0, "header_size", fmt::format("header of {} bytes in a file of {} bytes", n, bytes.size()));
  const std::string header = bytes.substr(8, n);
  const std::size_t base = 8 + n, buffer = bytes.size() - base;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(header);
  } catch (const nlohmann::json::parse_error& e) {
    throw DumpError(path, 0, "header", fmt::format("JSON header does not parse: {}", e.what()));
  }
  if (!j.is_object()) throw DumpError(path, 0, "header", "JSON header is not an object");
  std::map<std::string, Tensor> out;
  for (auto& [name, e] : j.items()) {
    if (name == "__metadata__") continue;
    if (!e.is_object() || !e.contains("dtype") || !e.contains("shape") || !e.contains("data_offsets"))
      throw DumpError(path, 0, name, "needs dtype, shape and data_offsets");
    if (!e["dtype"].is_string()) throw DumpError(path, 0, name + ".dtype", "expected a string");
    const auto t = st_dtype(e["dtype"].get<std::string>());
    if (!t) throw DumpError(path, 0, name + ".dtype", fmt::format("dtype '{}' not read (F64 | F32 | F16 | BF16)", e["dtype"].get<std::string>()));
    Shape s;
    if (!e["shape"].is_array()) throw DumpError(path, 0, name + ".shape", "expected an array of integers");
    for (auto& d : e["shape"]) {
      if (!d.is_number_unsigned()) throw DumpError(path, 0, name + ".shape", "expected non-negative integers");
      s.push_back(d.get<std::int64_t>());
    }
    const auto& off = e["data_offsets"];
    if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() || !off[1].is_number_unsigned())
      throw DumpError(path, 0, name + ".data_offsets", "expected [begin, end]");
    const std::uint64_t b = off[0].get<std::uint64_t>(), en = off[1].get<std::uint64_t>();
    Tensor x(*t, s);
    if (en < b || en > buffer)
      throw DumpError(path, 0, name + ".data_offsets", fmt::format("[{}, {}] outside the {}-byte buffer", b, en, buffer));
    if (en - b != x.nbytes())
      throw DumpError(path, 0, name + ".data_offsets",
                      fmt::format("{} bytes for shape {} of {} ({} expected)", en - b, shape_str(s), e["dtype"].get<std::string>(), x.nbytes()));
    if (x.nbytes()) std::memcpy(x.data(), bytes.data() + base + b, x.nbytes());
    out.emplace(name, std::move(x));
  }
  return out;
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
  std::uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[static_cast<std::size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
  out += header;
  for (auto& [name, t] : tensors) out.append(static_cast<const char*>(t.data()), t.nbytes());
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(out.data(), static_cast<std::streamsize>(out.size()));
  if (!f) throw DumpError(path, 0, "write", "cannot write");
}

}  // namespace normcheck
