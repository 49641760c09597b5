#include "backends/plugin_frames.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "spec/convention.hpp"

namespace normcheck::detail {

namespace {

constexpr unsigned char kGuardByte = 0xA5;

/// Appends plain values and strings to a byte buffer.
struct Writer {
  std::string buf;
  template <class T> void put(const T& v) { buf.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void str(const std::string& s) { put(static_cast<std::uint64_t>(s.size())); buf += s; }
  void bytes(const void* p, std::size_t n) { put(static_cast<std::uint64_t>(n)); buf.append(static_cast<const char*>(p), n); }
};

/// Reads what Writer wrote; throws FrameError on truncation.
struct Reader {
  const std::string& buf;
  std::size_t at = 0;
  template <class T> T get() {
    if (buf.size() - at < sizeof(T)) throw FrameError("truncated request");
    T v;
    std::memcpy(&v, buf.data() + at, sizeof v);
    at += sizeof v;
    return v;
  }
  std::string str(std::size_t max = std::numeric_limits<std::size_t>::max()) {
    const auto n = get<std::uint64_t>();
    if (n > buf.size() - at) throw FrameError("truncated request");
    if (n > max) throw FrameError(fmt::format("a name of {} bytes", n));
    std::string s = buf.substr(at, n);
    at += n;
    return s;
  }
  /// The position and size of a byte string, without copying it.
  std::pair<std::size_t, std::size_t> span() {
    const auto n = get<std::uint64_t>();
    if (n > buf.size() - at) throw FrameError("truncated request");
    const std::size_t from = at;
    at += n;
    return {from, static_cast<std::size_t>(n)};
  }
};

// ---- dtypes ------------------------------------------------------------------------------

constexpr DType kNcDtypes[] = {DType::f64, DType::f32, DType::f16, DType::bf16, DType::fp8_e4m3fn, DType::fp8_e5m2, DType::int8};
static_assert(NC_F64 == 0 && NC_F32 == 1 && NC_F16 == 2 && NC_BF16 == 3 && NC_FP8_E4M3FN == 4 && NC_FP8_E5M2 == 5 && NC_INT8 == 6);

nc_dtype to_nc(DType d) {
  for (std::size_t k = 0; k < std::size(kNcDtypes); ++k)
    if (kNcDtypes[k] == d) return static_cast<nc_dtype>(k);
  return NC_F64;
}
bool valid_nc(std::uint32_t d, std::uint32_t abi) { return d <= (abi == 1 ? NC_BF16 : NC_INT8); }
std::size_t nc_bytes(nc_dtype d) { return format_info(kNcDtypes[d]).bytes; }
std::string_view nc_name(nc_dtype d) { return static_cast<std::uint32_t>(d) < std::size(kNcDtypes) ? dtype_name(kNcDtypes[d]) : "?"; }

std::string message(const char* buf) {
  std::string s(buf, strnlen(buf, kPluginMessageBytes - 1));
  return s.empty() ? std::string("(no message)") : s;
}

/// Elements of a shape, saturating at `cap` + 1 (shapes from the wire).
std::uint64_t count_capped(const std::int64_t* shape, int ndim, std::uint64_t cap) {
  std::uint64_t count = 1;
  for (int d = 0; d < ndim; ++d) {
    const auto e = static_cast<std::uint64_t>(shape[d]);
    count = e == 0 ? 0 : count > cap / e ? cap + 1 : count * e;
  }
  return count;
}

/// Reads a tensor's dtype, rank and shape (extents >= 0), as both ABIs encode them.
void read_shape(Reader& r, nc_tensor& t, const std::string& name, std::uint32_t abi) {
  const auto dt = r.get<std::uint32_t>();
  if (!valid_nc(dt, abi)) throw FrameError(fmt::format("tensor {}: unknown dtype {}", name, dt));
  t.dtype = static_cast<nc_dtype>(dt);
  t.ndim = r.get<std::int32_t>();
  if (t.ndim < 0 || t.ndim > NC_MAX_NDIM) throw FrameError(fmt::format("tensor {}: {} dims", name, t.ndim));
  for (int d = 0; d < t.ndim; ++d) {
    t.shape[d] = r.get<std::int64_t>();
    if (t.shape[d] < 0) throw FrameError(fmt::format("tensor {}: negative extent", name));
  }
}

/// Row-major strides of t's shape; throws FrameError when they overflow.
void dense_strides(nc_tensor& t, const std::string& name) {
  std::int64_t st = 1;  // with a zero extent the others may be large
  for (int d = t.ndim; d-- > 0;) {
    t.strides[d] = st;
    if (__builtin_mul_overflow(st, std::max<std::int64_t>(t.shape[d], 1), &st))
      throw FrameError(fmt::format("tensor {}: extents overflow", name));
  }
}

/// The fill of an output element before the plugin runs: for the binary floating-point
/// dtypes a signaling NaN with a payload (arithmetic only ever yields quiet NaNs, and the
/// inputs' NaNs are quiet), so an element still holding it after the run was never written;
/// a quiet-NaN fill would pass every case whose exact output is NaN (0/0 of a constant row
/// with eps = 0) for a kernel that writes nothing. fp8 (one NaN encoding in e4m3fn) and
/// int8 have no such value: 0xff bytes (NaN, -1), checked by a second run (serve_request:
/// where the first left 0xff bytes, the second fills 0x00, and a byte that follows the fill
/// was never written; false-pass audit: a plugin writing no y passed fp8 cases whose exact
/// output is NaN).
struct Fill {
  std::uint64_t bits = 0xff;
  std::size_t size = 1;
  bool checked = false;
};
Fill fill_of(nc_dtype t) {
  switch (t) {
    case NC_F64: return {0x7ff0badbadbadbadULL, 8, true};
    case NC_F32: return {0x7f8badadULL, 4, true};
    case NC_F16: return {0x7dadULL, 2, true};
    case NC_BF16: return {0x7fadULL, 2, true};
    default: return {0xffffffffffffffffULL, 1, false};
  }
}

/// Output storage with guard zones: [kGuardBytes of kGuardByte][elements of fill_of(dtype)]
/// [kGuardBytes].
struct GuardedBuffer {
  std::vector<unsigned char> buf;
  std::size_t bytes = 0;
  Fill fill;
  GuardedBuffer(std::size_t n, nc_dtype t) : buf(n + 2 * kGuardBytes, kGuardByte), bytes(n), fill(fill_of(t)) { reset(0xff); }
  /// Every element back to the fill; an unchecked (8-bit) dtype's bytes to `byte`.
  void reset(unsigned char byte) {
    if (!fill.checked) {
      std::memset(buf.data() + kGuardBytes, byte, bytes);
      return;
    }
    for (std::size_t i = 0; i + fill.size <= bytes; i += fill.size) std::memcpy(buf.data() + kGuardBytes + i, &fill.bits, fill.size);
  }
  unsigned char* data() { return buf.data() + kGuardBytes; }
  const unsigned char* data() const { return buf.data() + kGuardBytes; }
  /// "before" / "after" and the count of changed guard bytes, or {} when intact.
  std::optional<std::pair<std::string, std::size_t>> breach() const {
    std::size_t before = 0, after = 0;
    for (std::size_t i = 0; i < kGuardBytes; ++i) {
      before += buf[i] != kGuardByte;
      after += buf[kGuardBytes + bytes + i] != kGuardByte;
    }
    if (before) return std::pair<std::string, std::size_t>{"before the start of", before};
    if (after) return std::pair<std::string, std::size_t>{"past the end of", after};
    return std::nullopt;
  }
  /// The index of the first element still holding the fill, or nullopt (every element was
  /// written, or the dtype has no distinguishable fill).
  std::optional<std::size_t> unwritten() const {
    if (!fill.checked) return std::nullopt;
    for (std::size_t i = 0; i + fill.size <= bytes; i += fill.size)
      if (std::memcmp(data() + i, &fill.bits, fill.size) == 0) return i / fill.size;
    return std::nullopt;
  }
};

bool same_descriptor(const nc_tensor& a, const nc_tensor& b) {
  bool same = a.name == b.name && a.dtype == b.dtype && a.ndim == b.ndim && a.data == b.data;
  for (int d = 0; same && d < NC_MAX_NDIM; ++d) same = a.shape[d] == b.shape[d] && a.strides[d] == b.strides[d];
  return same;
}

std::string descriptor_change(const nc_tensor& before, const nc_tensor& after) {
  std::string s = fmt::format("plugin modified the output descriptor {} (dtype {} -> {}, ndim {} -> {}", before.name,
                              nc_name(before.dtype), nc_name(after.dtype), before.ndim, after.ndim);
  if (after.ndim >= 0 && after.ndim <= NC_MAX_NDIM) {
    s += ", shape [";
    for (int d = 0; d < after.ndim; ++d) s += fmt::format("{}{}", d ? ", " : "", after.shape[d]);
    s += "]";
  }
  return s + "): an output keeps the shape and dtype it is given";
}

// ---- ABI 1 --------------------------------------------------------------------------------

std::optional<std::string> abi1_refuses(const Problem& p) {
  if (p.op != Op::layer_norm && p.op != Op::rms_norm)
    return fmt::format("plugin ABI 1 covers layer_norm and rms_norm, not {} (ABI 2 covers every op)", to_string(p.op));
  if (p.conv.direction == Direction::backward) return std::string("plugin ABI 1 is forward only (ABI 2 has backward)");
  if (p.layout != MemoryLayout::contiguous)
    return fmt::format("plugin ABI 1 takes dense tensors only (the {} layout needs ABI 2)", to_string(p.layout));
  // A plugin told nothing of the rounding order would round once: never run it as if it had been told.
  if (p.conv.normalized_dtype) return std::string("plugin ABI 1 has no normalized_dtype (rounding before the affine)");
  if (is_quantized(p.out_dtype)) return fmt::format("plugin ABI 1 has no {} dtype (output)", dtype_name(p.out_dtype));
  for (auto& [name, t] : p.inputs) {
    if (is_quantized(t.dtype())) return fmt::format("plugin ABI 1 has no {} dtype (input {})", dtype_name(t.dtype()), name);
    if (t.shape().size() > NC_MAX_NDIM)
      return fmt::format("plugin ABI: input {} has {} dims (at most {})", name, t.shape().size(), NC_MAX_NDIM);
  }
  return std::nullopt;
}

// The wire carries our enums' values: they are ABI 1's.
static_assert(static_cast<int>(EpsPlacement::clamp_norm) == 3 && static_cast<int>(Variance::unbiased) == 1 &&
              static_cast<int>(Affine::one_plus_w) == 3);

std::string encode_v1(const Problem& p) {
  Writer w;
  w.put(static_cast<std::uint32_t>(p.op == Op::layer_norm ? 0 : 1));
  w.put(p.conv.eps);
  w.put(static_cast<std::uint32_t>(p.conv.eps_placement));
  w.put(static_cast<std::uint32_t>(p.conv.variance));
  w.put(static_cast<std::uint32_t>(p.conv.affine));
  w.put(static_cast<std::int32_t>(p.conv.normalized_shape.size()));
  w.put(static_cast<std::uint32_t>(to_nc(p.conv.acc_dtype)));
  w.put(static_cast<std::uint32_t>(to_nc(p.out_dtype)));
  w.put(static_cast<std::uint32_t>(p.inputs.size()));
  for (auto& [name, t] : p.inputs) {
    w.str(name);
    w.put(static_cast<std::uint32_t>(to_nc(t.dtype())));
    w.put(static_cast<std::int32_t>(t.shape().size()));
    for (auto d : t.shape()) w.put(static_cast<std::int64_t>(d));
    w.bytes(t.data(), t.nbytes());
  }
  return std::move(w.buf);
}

/// A decoded ABI 1 request: the problem and the storage its tensors point into.
struct HostRequestV1 {
  NcProblemV1 p{};
  std::vector<std::string> names;
  std::vector<std::vector<double>> data;  // 8-byte aligned storage for every dtype
  std::vector<nc_tensor> ts;
};

/// Decodes an ABI 1 EVAL payload, checking every field a later step relies on: known enums
/// and dtypes, 0..NC_MAX_NDIM dims of non-negative extents, bytes = elements x dtype size,
/// an x. Throws FrameError naming the first field that is wrong.
void decode_v1(const std::string& payload, HostRequestV1& q) {
  Reader r{payload};
  NcProblemV1& p = q.p;
  p.abi_version = 1;
  const auto op = r.get<std::uint32_t>();
  if (op > 1) throw FrameError(fmt::format("op {} is not in ABI 1", op));
  p.op = static_cast<std::int32_t>(op);
  p.eps = r.get<double>();
  const auto placement = r.get<std::uint32_t>(), variance = r.get<std::uint32_t>(), affine = r.get<std::uint32_t>();
  if (placement > 3 || variance > 1 || affine > 3) throw FrameError("unknown eps_placement, variance or affine");
  p.eps_placement = static_cast<std::int32_t>(placement);
  p.variance = static_cast<std::int32_t>(variance);
  p.affine = static_cast<std::int32_t>(affine);
  p.normalized_ndim = r.get<std::int32_t>();
  const auto acc = r.get<std::uint32_t>(), out = r.get<std::uint32_t>();
  if (!valid_nc(acc, 1) || !valid_nc(out, 1)) throw FrameError("unknown acc_dtype or out_dtype");
  p.acc_dtype = static_cast<std::int32_t>(acc);
  p.out_dtype = static_cast<std::int32_t>(out);
  const auto n = r.get<std::uint32_t>();
  if (n > kMaxRequestTensors) throw FrameError(fmt::format("{} tensors (at most {})", n, kMaxRequestTensors));
  q.names.resize(n);
  q.data.resize(n);
  q.ts.assign(n, nc_tensor{});
  for (std::uint32_t k = 0; k < n; ++k) {
    q.names[k] = r.str();
    nc_tensor& t = q.ts[k];
    read_shape(r, t, q.names[k], 1);
    const std::uint64_t count = count_capped(t.shape, t.ndim, payload.size());
    dense_strides(t, q.names[k]);
    const std::string bytes = r.str();
    if (count > payload.size() || count * nc_bytes(t.dtype) != bytes.size())
      throw FrameError(fmt::format("tensor {}: {} bytes for its shape", q.names[k], bytes.size()));
    q.data[k].resize((bytes.size() + sizeof(double) - 1) / sizeof(double));
    if (!bytes.empty()) std::memcpy(q.data[k].data(), bytes.data(), bytes.size());
  }
  if (r.at != payload.size()) throw FrameError("bytes after the last tensor");
  for (std::uint32_t k = 0; k < n; ++k) {
    q.ts[k].name = q.names[k].c_str();
    q.ts[k].data = q.data[k].data();
    if (q.names[k] == "x") p.x = &q.ts[k];
    else if (q.names[k] == "gamma") p.gamma = &q.ts[k];
    else if (q.names[k] == "beta") p.beta = &q.ts[k];
  }
  if (!p.x) throw FrameError("request without x");
  if (p.normalized_ndim < 1 || p.normalized_ndim > p.x->ndim)
    throw FrameError(fmt::format("normalized_ndim {} for x of {} dims", p.normalized_ndim, p.x->ndim));
}

// ---- ABI 2 --------------------------------------------------------------------------------

/// A parameter's word, number and list, as nc_param carries them.
struct ParamValue {
  std::string text;
  double number = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::int64_t> items;
};

ParamValue param_value(const ConventionValue& v) {
  ParamValue r;
  if (std::holds_alternative<std::monostate>(v)) r.text = "none";
  else if (auto* b = std::get_if<bool>(&v)) r.text = *b ? "true" : "false", r.number = *b ? 1 : 0;
  else if (auto* i = std::get_if<std::int64_t>(&v)) r.text = fmt::format("{}", *i), r.number = static_cast<double>(*i);
  else if (auto* d = std::get_if<double>(&v)) r.text = fmt::format("{:.17g}", *d), r.number = *d;
  else if (auto* s = std::get_if<std::string>(&v)) r.text = *s;
  else if (auto* l = std::get_if<std::vector<std::int64_t>>(&v)) {
    r.items = *l;
    r.text = fmt::format("[{}]", fmt::join(*l, ", "));
  }
  return r;
}

std::string encode_v2(const Problem& p) {
  Writer w;
  w.str(std::string(to_string(p.op)));
  w.str(std::string(to_string(p.conv.direction)));
  w.str(std::string(to_string(p.layout)));
  w.put(static_cast<std::uint32_t>(to_nc(p.out_dtype)));
  const auto conv = write_convention(p.conv, p.op);
  w.put(static_cast<std::uint32_t>(conv.size()));
  for (const auto& [key, v] : conv) {
    const ParamValue pv = param_value(v);
    w.str(std::string(key));
    w.str(pv.text);
    w.put(pv.number);
    w.put(static_cast<std::uint32_t>(pv.items.size()));
    for (auto i : pv.items) w.put(i);
  }
  w.put(static_cast<std::uint32_t>(p.inputs.size()));
  for (const auto& [name, t] : p.inputs) {
    const StridedView v = present(t, p.layout);
    w.str(name);
    w.put(static_cast<std::uint32_t>(to_nc(t.dtype())));
    w.put(static_cast<std::int32_t>(v.shape.size()));
    for (auto d : v.shape) w.put(static_cast<std::int64_t>(d));
    for (auto s : v.strides) w.put(static_cast<std::int64_t>(s));
    w.put(static_cast<std::int64_t>(v.offset));
    w.bytes(v.storage.data(), v.storage.size());
  }
  const auto outs = output_shapes(p);
  w.put(static_cast<std::uint32_t>(outs.size()));
  for (const auto& [name, shape] : outs) {
    w.str(name);
    w.put(static_cast<std::uint32_t>(to_nc(output_dtype(p, name))));
    w.put(static_cast<std::int32_t>(shape.size()));
    for (auto d : shape) w.put(static_cast<std::int64_t>(d));
    w.put(static_cast<std::uint32_t>(is_optional_output(p, name) ? 1 : 0));
  }
  return std::move(w.buf);
}

/// A decoded ABI 2 request: the problem, the storage its tensors point into, and where each
/// input's bytes sit in the payload (to check after the call that the plugin wrote none).
struct HostRequestV2 {
  nc_problem p{};
  std::string op, direction, layout;
  std::vector<std::string> param_names, param_texts;
  std::vector<std::vector<std::int64_t>> param_items;
  std::vector<nc_param> params;
  std::vector<std::string> input_names;
  std::vector<std::vector<double>> input_storage;  // 8-byte aligned, for every dtype
  std::vector<std::pair<std::size_t, std::size_t>> input_bytes;  // (offset, size) in the payload
  std::vector<nc_tensor> inputs;
  std::vector<std::string> output_names;
  std::vector<GuardedBuffer> output_storage;
  std::vector<nc_tensor> outputs;
  std::vector<std::int32_t> optional, written;
};

constexpr std::size_t kMaxName = 256;

/// Decodes an ABI 2 EVAL payload, checking every field a later step relies on: names of at
/// most 256 bytes, known dtypes, 0..NC_MAX_NDIM dims of non-negative extents, non-negative
/// strides and offset with the whole view inside its storage, at most 16 inputs, 16 outputs
/// and 64 parameters, and outputs of at most 256 times the payload's bytes plus 1 MiB (the
/// parent asks for what the op defines: never more than that). Throws FrameError naming the
/// first field that is wrong.
void decode_v2(const std::string& payload, HostRequestV2& q) {
  Reader r{payload};
  q.op = r.str(kMaxName);
  q.direction = r.str(kMaxName);
  q.layout = r.str(kMaxName);
  if (q.direction != "forward" && q.direction != "backward") throw FrameError(fmt::format("direction '{}'", q.direction));
  const auto out = r.get<std::uint32_t>();
  if (!valid_nc(out, 2)) throw FrameError("unknown out_dtype");
  const auto np = r.get<std::uint32_t>();
  if (np > kMaxRequestParams) throw FrameError(fmt::format("{} parameters (at most {})", np, kMaxRequestParams));
  q.param_names.resize(np);
  q.param_texts.resize(np);
  q.param_items.resize(np);
  q.params.assign(np, nc_param{});
  for (std::uint32_t k = 0; k < np; ++k) {
    q.param_names[k] = r.str(kMaxName);
    q.param_texts[k] = r.str(kMaxName * 16);
    q.params[k].number = r.get<double>();
    const auto n = r.get<std::uint32_t>();
    if (n > NC_MAX_NDIM * 4) throw FrameError(fmt::format("parameter {}: {} items", q.param_names[k], n));
    for (std::uint32_t i = 0; i < n; ++i) q.param_items[k].push_back(r.get<std::int64_t>());
  }
  const auto ni = r.get<std::uint32_t>();
  if (ni > kMaxRequestTensors) throw FrameError(fmt::format("{} inputs (at most {})", ni, kMaxRequestTensors));
  q.input_names.resize(ni);
  q.input_storage.resize(ni);
  q.input_bytes.resize(ni);
  q.inputs.assign(ni, nc_tensor{});
  for (std::uint32_t k = 0; k < ni; ++k) {
    const std::string& name = q.input_names[k] = r.str(kMaxName);
    nc_tensor& t = q.inputs[k];
    read_shape(r, t, name, 2);
    for (int d = 0; d < t.ndim; ++d) {
      t.strides[d] = r.get<std::int64_t>();
      if (t.strides[d] < 0) throw FrameError(fmt::format("input {}: negative stride", name));
    }
    const auto offset = r.get<std::int64_t>();
    if (offset < 0) throw FrameError(fmt::format("input {}: negative offset", name));
    const auto [from, size] = r.span();
    const std::size_t es = nc_bytes(t.dtype);
    if (size % es) throw FrameError(fmt::format("input {}: {} bytes of storage for {}-byte elements", name, size, es));
    const auto elements = static_cast<std::uint64_t>(size / es);
    // The host's views never overlap (offset, padded, transposed, channels_last): a view of
    // more elements than its storage holds (a stride 0 under a long extent) is no request
    // of ours, and would have a plugin loop over 2^40 elements of a 2-element storage.
    if (count_capped(t.shape, t.ndim, elements) > elements)
      throw FrameError(fmt::format("input {}: a view of more elements than its storage holds ({})", name, elements));
    // The last element's index, checked against the storage step by step (no overflow).
    if (count_capped(t.shape, t.ndim, elements) > 0) {
      std::uint64_t last = static_cast<std::uint64_t>(offset);
      for (int d = 0; d < t.ndim; ++d) {
        const auto ext = static_cast<std::uint64_t>(t.shape[d] - 1), st = static_cast<std::uint64_t>(t.strides[d]);
        if (ext > 0 && st > (elements - std::min(last, elements)) / ext) throw FrameError(fmt::format("input {}: view past its storage", name));
        last += ext * st;
      }
      if (last >= elements) throw FrameError(fmt::format("input {}: view past its storage", name));
    }
    q.input_bytes[k] = {from, size};
    q.input_storage[k].resize((size + sizeof(double) - 1) / sizeof(double));
    if (size) std::memcpy(q.input_storage[k].data(), payload.data() + from, size);
    // Checked above: a view with elements has its offset inside the storage.
    const bool empty = count_capped(t.shape, t.ndim, elements) == 0;
    t.data = reinterpret_cast<unsigned char*>(q.input_storage[k].data()) + (empty ? 0 : static_cast<std::size_t>(offset) * es);
  }
  const auto no = r.get<std::uint32_t>();
  if (no == 0 || no > kMaxRequestTensors) throw FrameError(fmt::format("{} outputs (1 to {})", no, kMaxRequestTensors));
  q.output_names.resize(no);
  q.outputs.assign(no, nc_tensor{});
  q.optional.assign(no, 0);
  q.written.assign(no, 0);
  const std::uint64_t cap = 256 * static_cast<std::uint64_t>(payload.size()) + (1u << 20);
  std::uint64_t total = 0;
  std::vector<std::size_t> sizes(no);
  for (std::uint32_t k = 0; k < no; ++k) {
    const std::string& name = q.output_names[k] = r.str(kMaxName);
    nc_tensor& t = q.outputs[k];
    read_shape(r, t, name, 2);
    dense_strides(t, name);
    const auto opt = r.get<std::uint32_t>();
    if (opt > 1) throw FrameError(fmt::format("output {}: optional flag {}", name, opt));
    q.optional[k] = static_cast<std::int32_t>(opt);
    const std::uint64_t bytes = count_capped(t.shape, t.ndim, cap) * nc_bytes(t.dtype);
    total += bytes;
    if (bytes > cap || total > cap) throw FrameError(fmt::format("outputs of more than {} bytes", cap));
    sizes[k] = static_cast<std::size_t>(bytes);
  }
  if (r.at != payload.size()) throw FrameError("bytes after the last output");
  q.output_storage.reserve(no);
  for (std::uint32_t k = 0; k < no; ++k) {
    q.output_storage.emplace_back(sizes[k], q.outputs[k].dtype);
    q.outputs[k].name = q.output_names[k].c_str();
    q.outputs[k].data = q.output_storage[k].data();
  }
  for (std::uint32_t k = 0; k < np; ++k) {
    q.params[k].name = q.param_names[k].c_str();
    q.params[k].text = q.param_texts[k].c_str();
    q.params[k].count = static_cast<std::int32_t>(q.param_items[k].size());
    q.params[k].items = q.param_items[k].empty() ? nullptr : q.param_items[k].data();
  }
  for (std::uint32_t k = 0; k < ni; ++k) q.inputs[k].name = q.input_names[k].c_str();
  nc_problem& p = q.p;
  p.abi_version = NC_PLUGIN_ABI_VERSION;
  p.op = q.op.c_str();
  p.direction = q.direction.c_str();
  p.layout = q.layout.c_str();
  p.out_dtype = static_cast<nc_dtype>(out);
  p.num_params = static_cast<std::int32_t>(np);
  p.params = q.params.data();
  p.num_inputs = static_cast<std::int32_t>(ni);
  p.inputs = q.inputs.data();
  p.num_outputs = static_cast<std::int32_t>(no);
  p.outputs = q.outputs.data();
  p.output_optional = q.optional.data();
  p.output_written = q.written.data();
}

/// The bytes of output `name` of p as the reply carries them.
std::size_t output_bytes(const Problem& p, const std::string& name, const Shape& shape) {
  return static_cast<std::size_t>(numel(shape)) * format_info(output_dtype(p, name)).bytes;
}

}  // namespace

Frame read_frame(const std::function<void(void*, std::size_t)>& read_exact, std::size_t max_bytes) {
  Frame f;
  std::uint64_t n = 0;
  read_exact(&f.tag, sizeof f.tag);
  read_exact(&n, sizeof n);
  if (n > max_bytes)
    throw FrameError(fmt::format("plugin worker sent an oversized frame: {} bytes claimed, at most {} expected", n, max_bytes));
  f.payload.assign(static_cast<std::size_t>(n), '\0');
  if (n > 0) read_exact(f.payload.data(), static_cast<std::size_t>(n));
  return f;
}

std::string frame_bytes(std::uint32_t tag, const std::string& payload) {
  Writer w;
  w.put(tag);
  w.put(static_cast<std::uint64_t>(payload.size()));
  w.buf += payload;
  return std::move(w.buf);
}

std::string helo_payload(std::uint32_t abi, const std::string& name) {
  Writer w;
  w.put(abi);
  w.buf += name;
  return std::move(w.buf);
}

std::pair<std::uint32_t, std::string> parse_helo(const std::string& payload) {
  if (payload.size() < sizeof(std::uint32_t)) throw FrameError("a handshake without the plugin's ABI version");
  std::uint32_t abi = 0;
  std::memcpy(&abi, payload.data(), sizeof abi);
  return {abi, payload.substr(sizeof abi)};
}

Request encode_request(const Problem& p, std::uint32_t abi) {
  Request q;
  if (abi == 1) {
    q.skip = abi1_refuses(p);
    if (!q.skip) q.payload = encode_v1(p);
    return q;
  }
  for (const auto& [name, t] : p.inputs)
    if (t.shape().size() > NC_MAX_NDIM) {
      q.skip = fmt::format("plugin ABI: input {} has {} dims (at most {})", name, t.shape().size(), NC_MAX_NDIM);
      return q;
    }
  for (const auto& [name, shape] : output_shapes(p))
    if (shape.size() > NC_MAX_NDIM) {
      q.skip = fmt::format("plugin ABI: output {} has {} dims (at most {})", name, shape.size(), NC_MAX_NDIM);
      return q;
    }
  q.payload = encode_v2(p);
  return q;
}

std::size_t reply_bound(const Problem& p, std::uint32_t abi) {
  std::size_t n = 0;
  if (abi == 1) {
    n = static_cast<std::size_t>(numel(p.x().shape())) * format_info(p.out_dtype).bytes;
  } else {
    n = sizeof(std::uint32_t);
    for (const auto& [name, shape] : output_shapes(p))
      n += 2 * sizeof(std::uint64_t) + name.size() + sizeof(std::uint32_t) + output_bytes(p, name, shape);
  }
  return std::max(n, kTextFrameBytes);
}

PluginReply interpret_plugin_reply(const Frame& f, const Problem& p, const std::string& plugin_name, std::uint32_t abi) {
  PluginReply r;
  Evaluation& e = r.evaluation;
  auto broken = [&](std::string why) {
    e = Evaluation{};
    e.message = std::move(why);
    r.kill_worker = true;
  };
  if (f.tag == kSkip) {
    e.kind = Evaluation::Kind::skip;
    e.message = fmt::format("{}: {}", plugin_name.empty() ? "plugin" : plugin_name, f.payload);
  } else if (f.tag == kErrr) {
    e.message = fmt::format("plugin error: {}", f.payload);
  } else if (f.tag == kOkay && abi == 1) {
    const std::size_t want = static_cast<std::size_t>(numel(p.x().shape())) * format_info(p.out_dtype).bytes;
    if (f.payload.size() != want) {
      broken(fmt::format("plugin worker sent {} bytes for y, expected {}", f.payload.size(), want));
    } else {
      Tensor y(p.out_dtype, p.x().shape());
      if (want > 0) std::memcpy(y.data(), f.payload.data(), want);
      e.kind = Evaluation::Kind::outputs;
      e.outputs["y"] = std::move(y);
    }
  } else if (f.tag == kOkay) {
    try {
      Reader rd{f.payload};
      const auto outs = output_shapes(p);
      if (rd.get<std::uint32_t>() != outs.size()) throw FrameError("a reply with another number of outputs");
      for (const auto& [name, shape] : outs) {
        if (rd.str(kMaxName) != name) throw FrameError(fmt::format("a reply without output {} in its place", name));
        const auto written = rd.get<std::uint32_t>();
        const auto [from, size] = rd.span();
        const std::size_t want = output_bytes(p, name, shape);
        if (written > 1) throw FrameError(fmt::format("output {}: written flag {}", name, written));
        if (size != want) throw FrameError(fmt::format("{} bytes for output {}, expected {}", size, name, want));
        if (!written && is_optional_output(p, name)) continue;  // left out: reported as not returned
        Tensor t(output_dtype(p, name), shape);
        if (want > 0) std::memcpy(t.data(), f.payload.data() + from, want);
        e.outputs[name] = std::move(t);
      }
      if (rd.at != f.payload.size()) throw FrameError("bytes after the last output");
      e.kind = Evaluation::Kind::outputs;
    } catch (const FrameError& ex) {
      broken(fmt::format("plugin worker broke the protocol: {}", ex.what()));
    }
  } else {
    broken("plugin worker sent an unknown frame");
  }
  return r;
}

Frame serve_request_v1(const std::string& payload, NcSupportsV1 supports, NcRunV1 run) {
  HostRequestV1 q;
  try {
    decode_v1(payload, q);
  } catch (const FrameError& ex) {
    return {kErrr, fmt::format("host: malformed request: {}", ex.what())};
  }
  NcProblemV1& p = q.p;
  // y: the shape of x in out_dtype, NaN-filled, with guard zones around it.
  nc_tensor y = *p.x;
  y.name = "y";
  y.dtype = static_cast<nc_dtype>(p.out_dtype);
  std::size_t count = 1;
  for (int d = 0; d < y.ndim; ++d) count *= static_cast<std::size_t>(y.shape[d]);  // <= x's bytes: checked
  GuardedBuffer ybuf(count * nc_bytes(y.dtype), y.dtype);
  y.data = ybuf.data();
  const nc_tensor y_before = y;
  p.y = &y;

  char msg[kPluginMessageBytes] = {0};
  if (!supports(&p, msg, sizeof msg)) return {kSkip, message(msg)};
  msg[0] = 0;
  if (run(&p, msg, sizeof msg) != 0) return {kErrr, message(msg)};
  if (!same_descriptor(y, y_before)) return {kErrr, descriptor_change(y_before, y)};
  if (auto b = ybuf.breach())
    return {kErrr, fmt::format("plugin wrote {} output y ({} of the {} guard bytes changed): y holds {} elements of {} bytes; "
                               "wrong output shape or dtype?",
                               b->first, b->second, kGuardBytes, count, nc_bytes(y.dtype))};
  if (auto i = ybuf.unwritten())
    return {kErrr, fmt::format("plugin left element {} of output y unwritten (it still holds the host's fill, a signaling "
                               "NaN): every element of y must be written", *i)};
  return {kOkay, std::string(reinterpret_cast<const char*>(ybuf.data()), ybuf.bytes)};
}

/// The checks of a run's outputs (descriptors, guard zones, written flags, fills): an error
/// frame for the first that fails, or nullopt.
std::optional<Frame> check_outputs_v2(const HostRequestV2& q, const std::vector<nc_tensor>& before) {
  for (std::size_t k = 0; k < q.outputs.size(); ++k) {
    if (!same_descriptor(q.outputs[k], before[k])) return Frame{kErrr, descriptor_change(before[k], q.outputs[k])};
    if (auto b = q.output_storage[k].breach())
      return Frame{kErrr, fmt::format("plugin wrote {} output {} ({} of the {} guard bytes changed): it holds {} bytes; wrong output "
                                 "shape or dtype?",
                                 b->first, q.output_names[k], b->second, kGuardBytes, q.output_storage[k].bytes)};
    if (q.optional[k] && q.written[k] != 0 && q.written[k] != 1)
      return Frame{kErrr, fmt::format("plugin set output_written of {} to {} (0 or 1)", q.output_names[k], q.written[k])};
    if (q.optional[k] && q.written[k] == 0) continue;
    if (auto i = q.output_storage[k].unwritten())
      return Frame{kErrr, fmt::format("plugin left element {} of output {} unwritten (it still holds the host's fill, a signaling "
                                 "NaN): every element of an output it returns must be written",
                                 *i, q.output_names[k])};
  }
  return std::nullopt;
}

Frame serve_request(const std::string& payload, nc_plugin_supports_fn supports, nc_plugin_run_fn run) {
  HostRequestV2 q;
  try {
    decode_v2(payload, q);
  } catch (const FrameError& ex) {
    return {kErrr, fmt::format("host: malformed request: {}", ex.what())};
  }
  const nc_problem& p = q.p;
  const std::vector<nc_tensor> before = q.outputs;
  char msg[kPluginMessageBytes] = {0};
  if (!supports(&p, msg, sizeof msg)) return {kSkip, message(msg)};
  msg[0] = 0;
  if (run(&p, msg, sizeof msg) != 0) return {kErrr, message(msg)};
  if (auto f = check_outputs_v2(q, before)) return *f;
  // fp8 and int8 outputs have no fill distinct from every value: where the run left 0xff
  // bytes (NaN, -1), run again over 0x00 bytes; a byte that holds each fill in turn was never
  // written. The first run's outputs are the reply.
  std::vector<std::size_t> bytewise;
  for (std::size_t k = 0; k < q.outputs.size(); ++k) {
    const GuardedBuffer& b = q.output_storage[k];
    if (!b.fill.checked && !(q.optional[k] && q.written[k] == 0) && std::memchr(b.data(), 0xff, b.bytes)) bytewise.push_back(k);
  }
  if (!bytewise.empty()) {
    std::vector<std::vector<unsigned char>> first;
    for (const GuardedBuffer& b : q.output_storage) first.emplace_back(b.data(), b.data() + b.bytes);
    const std::vector<std::int32_t> first_written = q.written;
    for (GuardedBuffer& b : q.output_storage) b.reset(0x00);
    std::fill(q.written.begin(), q.written.end(), 0);
    msg[0] = 0;
    if (run(&p, msg, sizeof msg) != 0) return {kErrr, fmt::format("a second run of the same problem failed: {}", message(msg))};
    if (auto f = check_outputs_v2(q, before)) return *f;
    for (std::size_t k : bytewise) {
      const GuardedBuffer& b = q.output_storage[k];
      for (std::size_t i = 0; i < b.bytes; ++i)
        if (first[k][i] == 0xff && b.data()[i] == 0x00)
          return {kErrr, fmt::format("plugin left element {} of output {} unwritten (it held each of the host's fills in turn, "
                                     "0xff and then 0x00, over two runs of the same problem): every element of an output it "
                                     "returns must be written", i, q.output_names[k])};
    }
    for (std::size_t k = 0; k < q.outputs.size(); ++k)
      std::memcpy(q.output_storage[k].data(), first[k].data(), first[k].size());
    q.written = first_written;
  }
  for (std::size_t k = 0; k < q.inputs.size(); ++k) {
    const auto [from, size] = q.input_bytes[k];
    if (size && std::memcmp(q.input_storage[k].data(), payload.data() + from, size) != 0) {
      std::size_t at = 0;
      const auto* now = reinterpret_cast<const unsigned char*>(q.input_storage[k].data());
      while (now[at] == static_cast<unsigned char>(payload[from + at])) ++at;
      return {kErrr, fmt::format("plugin wrote into input {} (its storage changed at byte {} of {}): inputs are read-only",
                                 q.input_names[k], at, size)};
    }
  }
  Writer w;
  w.put(static_cast<std::uint32_t>(q.outputs.size()));
  for (std::size_t k = 0; k < q.outputs.size(); ++k) {
    w.str(q.output_names[k]);
    w.put(static_cast<std::uint32_t>(q.optional[k] ? q.written[k] : 1));
    w.bytes(q.output_storage[k].data(), q.output_storage[k].bytes);
  }
  return {kOkay, std::move(w.buf)};
}

}  // namespace normcheck::detail
