#include "core/json_bounded.hpp"

#include <fmt/format.h>

namespace normcheck {

JsonError::JsonError(const std::string& what_, std::string detail_, std::size_t byte_)
    : std::runtime_error(fmt::format("{}: {}", what_, detail_)), detail(std::move(detail_)), byte(byte_) {}

nlohmann::json parse_json_bounded(std::string_view text, const std::string& what, int max_depth) {
  // Nesting outside string literals; a '\' in a string escapes the next byte. Malformed
  // text may count wrong here, but then the parser below rejects it anyway.
  int depth = 0;
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth)
        throw JsonError(what, fmt::format("not valid JSON: nested deeper than {} levels at byte {}", max_depth, i), i);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    throw JsonError(what, fmt::format("not valid JSON: {}", e.what()), e.byte > 0 ? e.byte - 1 : 0);
  } catch (const nlohmann::json::exception& e) {  // out_of_range 406: a number beyond binary64
    throw JsonError(what, fmt::format("not valid JSON: {}", e.what()), 0);
  }
}

}  // namespace normcheck
