#include "backends/plugin_frames.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include <fmt/format.h>

namespace normcheck::detail {

namespace {

constexpr std::size_t kGuardBytes = 4096;  // after y: catches writes past its end
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
  std::string str() {
    const auto n = get<std::uint64_t>();
    if (n > buf.size() - at) throw FrameError("truncated request");
    std::string s = buf.substr(at, n);
    at += n;
    return s;
  }
};

nc_dtype to_nc(DType d) {
  switch (d) {
    case DType::f64: return NC_F64;
    case DType::f32: return NC_F32;
    case DType::f16: return NC_F16;
    case DType::bf16: return NC_BF16;
    case DType::fp8_e4m3fn:
    case DType::fp8_e5m2:
    case DType::int8: break;  // not in ABI 1: encode_request skips such problems first
  }
  return NC_F64;
}

bool valid_nc(std::uint32_t d) { return d <= NC_BF16; }
std::size_t nc_bytes(nc_dtype d) { return d == NC_F64 ? 8 : d == NC_F32 ? 4 : 2; }
const char* nc_name(nc_dtype d) {
  return d == NC_F64 ? "f64" : d == NC_F32 ? "f32" : d == NC_F16 ? "f16" : d == NC_BF16 ? "bf16" : "?";
}

std::string message(const char* buf) {
  std::string s(buf, strnlen(buf, kPluginMessageBytes - 1));
  return s.empty() ? std::string("(no message)") : s;
}

/// A decoded EVAL request: the problem and the storage its tensors point into.
struct HostRequest {
  nc_problem p{};
  std::vector<std::string> names;
  std::vector<std::vector<double>> data;  // 8-byte aligned storage for every dtype
  std::vector<nc_tensor> ts;
};

/// Decodes an EVAL payload, checking every field a later step relies on: known enums and
/// dtypes, 0..NC_MAX_NDIM dims of non-negative extents, bytes = elements x dtype size,
/// an x. Throws FrameError naming the first field that is wrong.
void decode_request(const std::string& payload, HostRequest& q) {
  Reader r{payload};
  nc_problem& p = q.p;
  p.abi_version = NC_PLUGIN_ABI_VERSION;
  const auto op = r.get<std::uint32_t>();
  if (op != NC_LAYER_NORM && op != NC_RMS_NORM) throw FrameError(fmt::format("op {} is not in ABI 1", op));
  p.op = static_cast<nc_op>(op);
  p.eps = r.get<double>();
  const auto placement = r.get<std::uint32_t>(), variance = r.get<std::uint32_t>(), affine = r.get<std::uint32_t>();
  if (placement > NC_EPS_CLAMP_NORM || variance > NC_VAR_UNBIASED || affine > NC_AFFINE_ONE_PLUS_W)
    throw FrameError("unknown eps_placement, variance or affine");
  p.eps_placement = static_cast<nc_eps_placement>(placement);
  p.variance = static_cast<nc_variance>(variance);
  p.affine = static_cast<nc_affine>(affine);
  p.normalized_ndim = r.get<std::int32_t>();
  const auto acc = r.get<std::uint32_t>(), out = r.get<std::uint32_t>();
  if (!valid_nc(acc) || !valid_nc(out)) throw FrameError("unknown acc_dtype or out_dtype");
  p.acc_dtype = static_cast<nc_dtype>(acc);
  p.out_dtype = static_cast<nc_dtype>(out);
  const auto n = r.get<std::uint32_t>();
  if (n > kMaxRequestTensors) throw FrameError(fmt::format("{} tensors (at most {})", n, kMaxRequestTensors));
  q.names.resize(n);
  q.data.resize(n);
  q.ts.assign(n, nc_tensor{});
  for (std::uint32_t k = 0; k < n; ++k) {
    q.names[k] = r.str();
    nc_tensor& t = q.ts[k];
    const auto dt = r.get<std::uint32_t>();
    if (!valid_nc(dt)) throw FrameError(fmt::format("tensor {}: unknown dtype {}", q.names[k], dt));
    t.dtype = static_cast<nc_dtype>(dt);
    t.ndim = r.get<std::int32_t>();
    if (t.ndim < 0 || t.ndim > NC_MAX_NDIM) throw FrameError(fmt::format("tensor {}: {} dims", q.names[k], t.ndim));
    std::uint64_t count = 1;
    for (int d = 0; d < t.ndim; ++d) {
      t.shape[d] = r.get<std::int64_t>();
      if (t.shape[d] < 0) throw FrameError(fmt::format("tensor {}: negative extent", q.names[k]));
      const auto e = static_cast<std::uint64_t>(t.shape[d]);
      count = e == 0 ? 0 : count > payload.size() / e ? payload.size() + 1 : count * e;  // saturates past the payload
    }
    std::int64_t st = 1;  // strides of the dense layout; with a zero extent the others may be large
    for (int d = t.ndim; d-- > 0;) {
      t.strides[d] = st;
      if (__builtin_mul_overflow(st, std::max<std::int64_t>(t.shape[d], 1), &st))
        throw FrameError(fmt::format("tensor {}: extents overflow", q.names[k]));
    }
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

// The wire carries our enums' values: they are the ABI's.
static_assert(static_cast<int>(EpsPlacement::clamp_norm) == NC_EPS_CLAMP_NORM && static_cast<int>(Variance::unbiased) == NC_VAR_UNBIASED &&
              static_cast<int>(Affine::one_plus_w) == NC_AFFINE_ONE_PLUS_W);

Request encode_request(const Problem& p) {
  Request q;
  if (p.op != Op::layer_norm && p.op != Op::rms_norm) {  // the fields of the other ops come with ABI 2
    q.skip = fmt::format("plugin ABI {} covers layer_norm and rms_norm, not {}", NC_PLUGIN_ABI_VERSION, to_string(p.op));
    return q;
  }
  if (p.conv.normalized_dtype) {  // a plugin told nothing of it would round once: never run it as if it had been told
    q.skip = fmt::format("plugin ABI {} has no normalized_dtype (rounding before the affine)", NC_PLUGIN_ABI_VERSION);
    return q;
  }
  if (is_quantized(p.out_dtype)) {
    q.skip = fmt::format("plugin ABI {} has no {} dtype (output)", NC_PLUGIN_ABI_VERSION, dtype_name(p.out_dtype));
    return q;
  }
  for (auto& [name, t] : p.inputs) {
    if (is_quantized(t.dtype())) {
      q.skip = fmt::format("plugin ABI {} has no {} dtype (input {})", NC_PLUGIN_ABI_VERSION, dtype_name(t.dtype()), name);
      return q;
    }
    if (t.shape().size() > NC_MAX_NDIM) {
      q.skip = fmt::format("plugin ABI: input {} has {} dims (at most {})", name, t.shape().size(), NC_MAX_NDIM);
      return q;
    }
  }
  Writer w;
  w.put(static_cast<std::uint32_t>(p.op == Op::layer_norm ? NC_LAYER_NORM : NC_RMS_NORM));
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
  q.payload = std::move(w.buf);
  return q;
}

std::size_t reply_bound(const Problem& p) {
  const std::size_t y_bytes = static_cast<std::size_t>(numel(p.x().shape())) * format_info(p.out_dtype).bytes;
  return std::max(y_bytes, kTextFrameBytes);
}

PluginReply interpret_plugin_reply(const Frame& f, const Problem& p, const std::string& plugin_name) {
  PluginReply r;
  Evaluation& e = r.evaluation;
  if (f.tag == kSkip) {
    e.kind = Evaluation::Kind::skip;
    e.message = fmt::format("{}: {}", plugin_name.empty() ? "plugin" : plugin_name, f.payload);
  } else if (f.tag == kErrr) {
    e.message = fmt::format("plugin error: {}", f.payload);
  } else if (f.tag == kOkay) {
    const std::size_t want = static_cast<std::size_t>(numel(p.x().shape())) * format_info(p.out_dtype).bytes;
    if (f.payload.size() != want) {
      e.message = fmt::format("plugin worker sent {} bytes for y, expected {}", f.payload.size(), want);
      r.kill_worker = true;
    } else {
      Tensor y(p.out_dtype, p.x().shape());
      if (want > 0) std::memcpy(y.data(), f.payload.data(), want);
      e.kind = Evaluation::Kind::outputs;
      e.outputs["y"] = std::move(y);
    }
  } else {
    e.message = "plugin worker sent an unknown frame";
    r.kill_worker = true;
  }
  return r;
}

Frame serve_request(const std::string& payload, nc_plugin_supports_fn supports, nc_plugin_run_fn run) {
  HostRequest q;
  try {
    decode_request(payload, q);
  } catch (const FrameError& ex) {
    return {kErrr, fmt::format("host: malformed request: {}", ex.what())};
  }
  nc_problem& p = q.p;
  // y: the shape of x in out_dtype, NaN-filled, with a guard zone after it.
  nc_tensor y = *p.x;
  y.name = "y";
  y.dtype = p.out_dtype;
  std::size_t count = 1;
  for (int d = 0; d < y.ndim; ++d) count *= static_cast<std::size_t>(y.shape[d]);  // <= x's bytes: checked
  const std::size_t ybytes = count * nc_bytes(p.out_dtype);
  std::vector<unsigned char> ybuf(ybytes + kGuardBytes, kGuardByte);
  std::memset(ybuf.data(), 0xff, ybytes);
  y.data = ybuf.data();
  const nc_tensor y_before = y;
  p.y = &y;

  char msg[kPluginMessageBytes] = {0};
  if (!supports(&p, msg, sizeof msg)) return {kSkip, message(msg)};
  msg[0] = 0;
  if (run(&p, msg, sizeof msg) != 0) return {kErrr, message(msg)};
  bool same = y.name == y_before.name && y.dtype == y_before.dtype && y.ndim == y_before.ndim && y.data == y_before.data;
  for (int d = 0; same && d < NC_MAX_NDIM; ++d) same = y.shape[d] == y_before.shape[d] && y.strides[d] == y_before.strides[d];
  if (!same) {
    std::string s = fmt::format("plugin modified the output descriptor y (dtype {} -> {}, ndim {} -> {}", nc_name(y_before.dtype),
                                nc_name(y.dtype), y_before.ndim, y.ndim);
    if (y.ndim >= 0 && y.ndim <= NC_MAX_NDIM) {
      s += ", shape [";
      for (int d = 0; d < y.ndim; ++d) s += fmt::format("{}{}", d ? ", " : "", y.shape[d]);
      s += "]";
    }
    return {kErrr, s + "): the output must keep the shape of x and dtype out_dtype"};
  }
  std::size_t bad = 0, last = 0;
  for (std::size_t i = 0; i < kGuardBytes; ++i)
    if (ybuf[ybytes + i] != kGuardByte) ++bad, last = i;
  if (bad)
    return {kErrr, fmt::format("plugin wrote past the end of output y ({} of the {} bytes after it changed, the last at "
                               "byte +{}): y holds {} elements of {} bytes; wrong output shape or dtype?",
                               bad, kGuardBytes, last, count, nc_bytes(p.out_dtype))};
  return {kOkay, std::string(reinterpret_cast<const char*>(ybuf.data()), ybytes)};
}

}  // namespace normcheck::detail
