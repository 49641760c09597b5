// Writing a file so that a reader never sees it half-written.
#pragma once

#include <string>

namespace normcheck {

/// Writes `text` to `path` atomically: a temporary file created exclusively (mkstemp, never
/// a planted file or symlink) in the target's folder, flushed to disk, then renamed over the
/// target. The target gets the permissions a plain open would give it. Throws
/// std::runtime_error naming the path; nothing is left behind on failure.
void write_atomically(const std::string& path, const std::string& text);

}  // namespace normcheck
