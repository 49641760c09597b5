// libFuzzer harness: both ends of the plugin worker protocol (backends/plugin_frames.hpp)
// without a process. The first byte picks the end, the ABI (bit 6: ABI 2, else 1) and the
// problem (plugin_frame_problem.hpp: its bits 0-5); the rest is what the other end sent.
//  - bit 7 clear, the parent: the bytes are the worker's stdout: a handshake frame (at most
//    kTextFrameBytes), then reply frames to EVALs of the problem, each read with
//    reply_bound. Contract: read_frame throws only FrameError (or the end of the bytes)
//    and allocates at most its bound; interpret_plugin_reply never throws, and outputs
//    are outputs of the problem in their shape and dtype, every required one present
//    (ABI 1: exactly y).
//  - bit 7 set, the worker: the bytes are an EVAL payload served with a well-behaved
//    plugin (fills every output through its descriptor). Contract: serve_request answers
//    OKAY, or ERRR "host: malformed request"; never crashes, never writes outside an output.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "backends/plugin_frames.hpp"
#include "plugin_frame_problem.hpp"

namespace {

using namespace normcheck;
using namespace normcheck::detail;

struct EndOfBytes {};

std::size_t elements(const nc_tensor& t) {
  std::size_t n = 1;
  for (int d = 0; d < t.ndim; ++d) n *= static_cast<std::size_t>(t.shape[d]);
  return n;
}

/// Writes every element of t through its descriptor and strides.
void fill(nc_tensor* t) {
  const std::size_t bytes = t->dtype == NC_F64 ? 8 : t->dtype == NC_F32 ? 4 : t->dtype <= NC_BF16 ? 2 : 1;
  const std::size_t n = elements(*t);
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t off = 0, rest = i;
    for (int d = t->ndim; d-- > 0;) {
      const auto e = static_cast<std::size_t>(t->shape[d]);
      off += (rest % e) * static_cast<std::size_t>(t->strides[d]);
      rest /= e;
    }
    std::memset(static_cast<char*>(t->data) + off * bytes, 0x3c, bytes);
  }
}

/// Reads every element of an input view (a view past its storage would show under ASan).
unsigned char touch(const nc_tensor& t) {
  const std::size_t bytes = t.dtype == NC_F64 ? 8 : t.dtype == NC_F32 ? 4 : t.dtype <= NC_BF16 ? 2 : 1;
  unsigned char acc = 0;
  for (std::size_t i = 0; i < elements(t); ++i) {
    std::size_t off = 0, rest = i;
    for (int d = t.ndim; d-- > 0;) {
      const auto e = static_cast<std::size_t>(t.shape[d]);
      off += (rest % e) * static_cast<std::size_t>(t.strides[d]);
      rest /= e;
    }
    for (std::size_t b = 0; b < bytes; ++b) acc ^= static_cast<const unsigned char*>(t.data)[off * bytes + b];
  }
  return acc;
}

int supports_all(const nc_problem*, char*, size_t) { return 1; }
int supports_all_v1(const NcProblemV1*, char*, size_t) { return 1; }

/// Correct plugins: every input read, every output written (optional ones marked written).
int fill_outputs(const nc_problem* p, char*, size_t) {
  volatile unsigned char sink = 0;
  for (int k = 0; k < p->num_inputs; ++k) sink = static_cast<unsigned char>(sink ^ touch(p->inputs[k]));
  for (int k = 0; k < p->num_outputs; ++k) {
    fill(&p->outputs[k]);
    p->output_written[k] = p->output_optional[k];
  }
  return 0;
}
int fill_y_v1(const NcProblemV1* p, char*, size_t) {
  fill(p->y);
  return 0;
}

void parent(const std::string& bytes, const Problem& p, std::uint32_t abi) {
  std::size_t at = 0;
  auto read = [&](void* d, std::size_t n) {
    if (bytes.size() - at < n) throw EndOfBytes{};
    std::memcpy(d, bytes.data() + at, n);
    at += n;
  };
  try {
    (void)read_frame(read, kTextFrameBytes);
    for (int k = 0; k < 8; ++k) {
      const Frame f = read_frame(read, reply_bound(p, abi));
      if (f.payload.size() > reply_bound(p, abi)) std::abort();
      const PluginReply r = interpret_plugin_reply(f, p, "fuzz", abi);
      const Evaluation& e = r.evaluation;
      if (e.kind == Evaluation::Kind::outputs) {
        if (abi == 1 && (e.outputs.size() != 1 || !e.outputs.count("y"))) std::abort();
        const auto shapes = output_shapes(p);
        for (const auto& [name, t] : e.outputs)
          if (!shapes.count(name) || t.shape() != shapes.at(name) || t.dtype() != output_dtype(p, name)) std::abort();
        for (const auto& [name, shape] : shapes)
          if (!is_optional_output(p, name) && !e.outputs.count(name)) std::abort();
      } else if (e.message.empty()) {
        std::abort();  // a SKIP or ERROR always says why
      }
      if (r.kill_worker) return;  // out of step: the parent restarts the worker
    }
  } catch (const FrameError&) {
  } catch (const EndOfBytes&) {
  }
}

void worker(const std::string& payload, std::uint32_t abi) {
  const Frame f = abi == 1 ? serve_request_v1(payload, supports_all_v1, fill_y_v1) : serve_request(payload, supports_all, fill_outputs);
  if (f.tag == kOkay) return;
  if (f.tag != kErrr || f.payload.rfind("host: malformed request", 0) != 0) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::uint32_t abi = data[0] & 0x40 ? 2 : 1;
  if (data[0] & 0x80) worker(rest, abi);
  // The host sends an ABI 1 plugin dense forward problems only (encode_request skips the
  // rest), so its replies are read against those: bits 4-5 (padded, backward) are ABI 2's.
  else parent(rest, fuzz::plugin_frame_problem(abi == 1 ? data[0] & 0x0f : data[0]), abi);
  return 0;
}
