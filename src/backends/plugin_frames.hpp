// The bytes of the plugin worker protocol (plugin.cpp), apart from the processes that
// exchange them, so that both ends can be tested and fuzzed without a process
// (tests/fuzz/fuzz_plugin_frame.cpp).
//
//   frame = u32 tag, u64 payload length, payload (native byte order: same machine, same binary)
//   worker -> parent after loading: HELO name | FAIL message
//   parent -> worker: EVAL problem (convention fields, then named tensors with their bytes)
//   worker -> parent: OKAY y bytes | SKIP reason | ERRR message
//
// Neither end trusts the other's bytes: the parent reads a reply only up to what the
// request can need, and the worker checks a request's shapes against its bytes before
// allocating the output.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "backends/isolated.hpp"
#include "backends/normcheck_plugin.h"
#include "spec/op.hpp"

namespace normcheck::detail {

constexpr std::uint32_t frame_tag(const char (&s)[5]) {
  return static_cast<std::uint32_t>(s[0]) | static_cast<std::uint32_t>(s[1]) << 8 |
         static_cast<std::uint32_t>(s[2]) << 16 | static_cast<std::uint32_t>(s[3]) << 24;
}
inline constexpr std::uint32_t kHelo = frame_tag("HELO"), kFail = frame_tag("FAIL"), kEval = frame_tag("EVAL"),
                               kOkay = frame_tag("OKAY"), kSkip = frame_tag("SKIP"), kErrr = frame_tag("ERRR");
/// The largest text frame (HELO name, FAIL/SKIP/ERRR message) the parent accepts: the host
/// writes at most kPluginMessageBytes of the plugin's text plus its own short wording.
inline constexpr std::size_t kTextFrameBytes = 64 * 1024;
/// The reason / error buffers the host hands to the plugin (bytes, with the final NUL).
inline constexpr std::size_t kPluginMessageBytes = 4096;
/// The most tensors one EVAL request names (x, gamma, beta and room for ABI growth).
inline constexpr std::uint32_t kMaxRequestTensors = 16;

/// One frame's tag and payload.
struct Frame {
  std::uint32_t tag = 0;
  std::string payload;
};

/// A frame that breaks the protocol: a header claiming more than the reader accepts, a
/// truncated or inconsistent payload.
struct FrameError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Reads one frame with `read_exact(dst, n)` (reads exactly n bytes or throws), accepting at
/// most `max_bytes` of payload: a header claiming more throws FrameError before anything is
/// allocated. Other exceptions come from read_exact.
Frame read_frame(const std::function<void(void*, std::size_t)>& read_exact, std::size_t max_bytes);
/// The bytes of a frame: header then payload.
std::string frame_bytes(std::uint32_t tag, const std::string& payload);

/// The EVAL payload for `p`, or the reason ABI 1 cannot express it (ops other than
/// layer_norm/rms_norm, quantized dtypes, more than NC_MAX_NDIM dims): the case is SKIPPED.
struct Request {
  std::string payload;
  std::optional<std::string> skip;
};
Request encode_request(const Problem& p);

/// The largest reply payload an EVAL of `p` can need: y's bytes (the shape of x in
/// out_dtype) or a text frame.
std::size_t reply_bound(const Problem& p);

/// The parent's reading of the worker's reply `f` to an EVAL of `p`. Never throws: a reply
/// that breaks the protocol (wrong y size, unknown tag) is Kind::error with kill_worker set
/// (the worker is out of step and is restarted). `plugin_name`: its HELO name, for SKIP.
struct PluginReply {
  Evaluation evaluation;
  bool kill_worker = false;
};
PluginReply interpret_plugin_reply(const Frame& f, const Problem& p, const std::string& plugin_name);

/// Serves one EVAL payload in the worker with the plugin's functions and returns the reply
/// frame: OKAY with y's bytes, SKIP/ERRR with a message (the plugin's, or "host: ..." for a
/// malformed request, an output descriptor the plugin modified or a write past y's end).
/// Throws nothing the plugin does not throw.
Frame serve_request(const std::string& payload, nc_plugin_supports_fn supports, nc_plugin_run_fn run);

}  // namespace normcheck::detail
