// The bytes of the plugin worker protocol (plugin.cpp), apart from the processes that
// exchange them, so that both ends can be tested and fuzzed without a process
// (tests/fuzz/fuzz_plugin_frame.cpp).
//
//   frame = u32 tag, u64 payload length, payload (native byte order: same machine, same binary)
//   worker -> parent after loading: HELO u32 abi version, name | FAIL message
//   parent -> worker: EVAL problem in the plugin's ABI (1: convention fields, then x, gamma,
//                     beta with their bytes; 2: op, direction, layout, the named parameters,
//                     the inputs as views with their storage, the outputs requested)
//   worker -> parent: OKAY outputs (1: y's bytes; 2: per output, whether written and its
//                     bytes) | SKIP reason | ERRR message
//
// Neither end trusts the other's bytes: the parent reads a reply only up to what the
// request can need, and the worker checks a request's shapes, strides and offsets against its
// bytes before allocating the outputs.
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
/// The most tensors (inputs, outputs) and parameters one EVAL request names.
inline constexpr std::uint32_t kMaxRequestTensors = 16, kMaxRequestParams = 64;
/// The guard bytes before and after each output of an ABI 2 request.
inline constexpr std::size_t kGuardBytes = 4096;

/// The ABI versions the host loads.
inline constexpr std::uint32_t kOldestAbi = 1;

/// ABI 1's problem (the normcheck_plugin.h of version 1, kept here so that its plugins load):
/// layer_norm / rms_norm forward on dense tensors, the convention as enums.
struct NcProblemV1 {
  std::uint32_t abi_version;
  std::int32_t op;  // 0 layer_norm, 1 rms_norm
  double eps;
  std::int32_t eps_placement, variance, affine;
  std::int32_t normalized_ndim;
  std::int32_t acc_dtype, out_dtype;  // nc_dtype, f64..bf16
  const nc_tensor *x, *gamma, *beta;
  nc_tensor* y;
};
using NcSupportsV1 = int (*)(const NcProblemV1*, char*, std::size_t);
using NcRunV1 = int (*)(const NcProblemV1*, char*, std::size_t);

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

/// The HELO payload (the plugin's ABI version, then its name) and its reading; the reading
/// throws FrameError for a payload shorter than the version.
std::string helo_payload(std::uint32_t abi, const std::string& name);
std::pair<std::uint32_t, std::string> parse_helo(const std::string& payload);

/// The EVAL payload for `p` in ABI `abi`, or the reason that ABI cannot express it (the
/// case is SKIPPED). ABI 2 expresses every problem of the op table (at most NC_MAX_NDIM dims);
/// ABI 1 forward layer_norm / rms_norm on contiguous f64/f32/f16/bf16 tensors without
/// normalized_dtype only.
struct Request {
  std::string payload;
  std::optional<std::string> skip;
};
Request encode_request(const Problem& p, std::uint32_t abi);

/// The largest reply payload an EVAL of `p` in ABI `abi` can need: its outputs' bytes (ABI 2:
/// with their names and flags) or a text frame.
std::size_t reply_bound(const Problem& p, std::uint32_t abi);

/// The parent's reading of the worker's reply `f` to an EVAL of `p`. Never throws: a reply
/// that breaks the protocol (an output of the wrong size or name, an unknown tag) is
/// Kind::error with kill_worker set (the worker is out of step and is restarted).
/// `plugin_name`: its HELO name, for SKIP. ABI 2 outputs: every required output, and each
/// optional one the plugin marked written.
struct PluginReply {
  Evaluation evaluation;
  bool kill_worker = false;
};
PluginReply interpret_plugin_reply(const Frame& f, const Problem& p, const std::string& plugin_name, std::uint32_t abi);

/// Serves one EVAL payload in the worker with the plugin's functions and returns the reply
/// frame: OKAY with the outputs, SKIP/ERRR with a message (the plugin's, or "host: ..." for a
/// malformed request, an output descriptor the plugin modified, a write outside an output or
/// into an input). Throws nothing the plugin does not throw. ABI 2 and ABI 1 plugins.
Frame serve_request(const std::string& payload, nc_plugin_supports_fn supports, nc_plugin_run_fn run);
Frame serve_request_v1(const std::string& payload, NcSupportsV1 supports, NcRunV1 run);

}  // namespace normcheck::detail
