// libFuzzer harness: both ends of the plugin worker protocol (backends/plugin_frames.hpp)
// without a process. The first byte picks the end and the problem (plugin_frame_problem.hpp:
// its bits 0-3); the rest is what the other end sent.
//  - bit 7 clear, the parent: the bytes are the worker's stdout: a handshake frame (at most
//    kTextFrameBytes), then reply frames to EVALs of the problem, each read with
//    reply_bound. Contract: read_frame throws only FrameError (or the end of the bytes)
//    and allocates at most its bound; interpret_plugin_reply never throws, and outputs
//    are exactly y with the shape of x in out_dtype.
//  - bit 7 set, the worker: the bytes are an EVAL payload served with a well-behaved
//    plugin (fills y through its descriptor). Contract: serve_request answers OKAY with y's
//    bytes for x's shape, or ERRR "host: malformed request"; never crashes, never writes
//    past y.
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

int supports_all(const nc_problem*, char*, size_t) { return 1; }

/// A correct plugin: writes every element of y through its descriptor and strides.
int fill_y(const nc_problem* p, char*, size_t) {
  nc_tensor* y = p->y;
  const std::size_t bytes = y->dtype == NC_F64 ? 8 : y->dtype == NC_F32 ? 4 : 2;
  const std::size_t n = elements(*y);
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t off = 0, rest = i;
    for (int d = y->ndim; d-- > 0;) {
      const auto e = static_cast<std::size_t>(y->shape[d]);
      off += (rest % e) * static_cast<std::size_t>(y->strides[d]);
      rest /= e;
    }
    std::memset(static_cast<char*>(y->data) + off * bytes, 0x3c, bytes);
  }
  return 0;
}

void parent(const std::string& bytes, const Problem& p) {
  std::size_t at = 0;
  auto read = [&](void* d, std::size_t n) {
    if (bytes.size() - at < n) throw EndOfBytes{};
    std::memcpy(d, bytes.data() + at, n);
    at += n;
  };
  try {
    (void)read_frame(read, kTextFrameBytes);
    for (int k = 0; k < 8; ++k) {
      const Frame f = read_frame(read, reply_bound(p));
      if (f.payload.size() > reply_bound(p)) std::abort();
      const PluginReply r = interpret_plugin_reply(f, p, "fuzz");
      const Evaluation& e = r.evaluation;
      if (e.kind == Evaluation::Kind::outputs) {
        if (e.outputs.size() != 1 || !e.outputs.count("y")) std::abort();
        const Tensor& y = e.outputs.at("y");
        if (y.shape() != p.x().shape() || y.dtype() != p.out_dtype) std::abort();
      } else if (e.message.empty()) {
        std::abort();  // a SKIP or ERROR always says why
      }
      if (r.kill_worker) return;  // out of step: the parent restarts the worker
    }
  } catch (const FrameError&) {
  } catch (const EndOfBytes&) {
  }
}

void worker(const std::string& payload) {
  const Frame f = serve_request(payload, supports_all, fill_y);
  if (f.tag == kOkay) return;
  if (f.tag != kErrr || f.payload.rfind("host: malformed request", 0) != 0) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] & 0x80) worker(rest);
  else parent(rest, fuzz::plugin_frame_problem(data[0]));
  return 0;
}
