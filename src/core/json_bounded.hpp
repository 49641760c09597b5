// Parsing JSON that comes from outside (reports, worker replies, .safetensors headers,
// dump sidecars) with a nesting limit.
//
// nlohmann's parser is iterative, but copying, comparing and dumping a json value recurse
// once per nesting level, so a 300,000-deep "[[[[..." from a file or a worker would
// overflow the stack later. A pre-scan (outside strings, '[' and '{' open a level) rejects
// such text before nlohmann builds anything.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace normcheck {

/// Deepest nesting of arrays and objects accepted by parse_json_bounded: far above any
/// file normcheck reads (a report nests 5 levels), far below what the stack survives.
inline constexpr int kMaxJsonDepth = 512;

/// JSON text that does not parse or nests too deeply. what() is "<what>: <detail>";
/// `detail` alone (nlohmann's message or the depth) and `byte`, the 0-based offset of the
/// offending byte, let a caller name a line.
struct JsonError : std::runtime_error {
  JsonError(const std::string& what_, std::string detail_, std::size_t byte_);
  std::string detail;
  std::size_t byte;
};

/// Parses untrusted JSON `text`. `what` names its source in error messages (a file path,
/// "worker reply"). Rejects text nesting arrays/objects deeper than `max_depth` before
/// parsing, and every nlohmann error (syntax, invalid UTF-8, a number overflowing binary64,
/// which nlohmann reports as out_of_range, not parse_error). Throws JsonError only.
nlohmann::json parse_json_bounded(std::string_view text, const std::string& what, int max_depth = kMaxJsonDepth);

}  // namespace normcheck
