// Writing a file so that a reader never sees it half-written.
#pragma once

#include <string>

namespace normcheck {

/// Writes `text` to `path` atomically: an unnamed file (O_TMPFILE) in the target's folder,
/// flushed to disk, given a fresh name (never a planted file or symlink) and renamed over
/// the target; where the file system has no O_TMPFILE, a file created exclusively by
/// mkstemp. The target gets the permissions a plain open would give it. Throws
/// std::runtime_error naming the path; nothing is left behind on failure, nor (O_TMPFILE)
/// when the process is killed while writing.
void write_atomically(const std::string& path, const std::string& text);

}  // namespace normcheck
