// The host's side of the cmd: worker protocol that needs no process: parsing a reply line
// and turning a reply into outputs (process.cpp's CmdBackend uses it; so do the fuzzing
// harness tests/fuzz/fuzz_worker_reply.cpp and the tests). Protocol: process.cpp's header.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "spec/backend.hpp"

namespace normcheck::detail {

/// The "run" request of problem p with id `id` for a worker speaking `protocol` (1 or 2;
/// process.cpp's header): op, out_dtype, layout (protocol 2), every convention key, inputs
/// {name: {dtype, shape}} and outputs {name: {dtype, shape[, optional]}}. The transport adds
/// where the tensors are: each input's and output's "path" for cmd: (a .npy file), nothing
/// for the in-process Python backend (src/python), which hands the arrays over directly.
nlohmann::json worker_request(const Problem& p, long id, int protocol);

/// Protocol 2's form of input t in `layout`: its storage as a 1-D tensor (core/view.hpp
/// present: NaN outside the view), with "strides" and "offset" (in elements) set in the
/// request's `entry` for that input.
Tensor view_storage(const Tensor& t, MemoryLayout layout, nlohmann::json& entry);

/// One line a worker printed, parsed as JSON (nesting at most kMaxJsonDepth). Throws
/// std::runtime_error "a reply line that is not JSON: '<first 200 bytes>' (...)" otherwise:
/// the worker broke the protocol.
nlohmann::json parse_worker_line(const std::string& line);

/// What a worker's reply to request `id` means.
struct WorkerReply {
  enum class Kind {
    outputs,   ///< every output named in "outputs" was read: `outputs`
    skip,      ///< {"skip": reason}: `message` is the reason
    error,     ///< {"error": message}: `message` is the worker's message
    wrong_id,  ///< not an object, or its "id" is not `id` (the worker is out of step)
    unusable,  ///< "outputs" missing or malformed, or an output file unreadable: `message`
  } kind = Kind::unusable;
  std::string message;
  Outputs outputs;
  /// The output paths the reply named (read or not), so the host can delete its own files.
  std::vector<std::string> paths;
};

/// Interprets a parsed reply (parse_worker_line) to request `id`:
///   {"id": 7, "outputs": {"y": {"path": ".../7_y.npy", "dtype": "f16"}}}
///   | {"id": 7, "skip": "reason"} | {"id": 7, "error": "message"}
/// Each output's .npy file is read with read_npy (as "dtype" when given, which must name a
/// dtype: a bf16 output travels as float32 values). Never throws for any reply: every
/// malformed field becomes Kind::unusable with a message naming it (or Kind::wrong_id).
WorkerReply interpret_worker_reply(const nlohmann::json& rep, long id);

}  // namespace normcheck::detail
