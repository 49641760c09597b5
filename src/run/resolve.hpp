// Stage 2 of `normcheck run`: backend names -> the set of backends, each constructed once.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "backends/registry.hpp"
#include "report/model.hpp"

namespace normcheck {

/// Splits --backend occurrences into backend specs: "a,b" gives a and b, blanks trimmed;
/// an item that starts with cmd: or plugin: takes the rest of its occurrence whole, commas
/// included (a command line or a path may hold commas). Duplicates are dropped. Throws
/// UsageError for an empty item.
std::vector<std::string> split_backend_list(const std::vector<std::string>& occurrences);

/// The backends of a run and their report records (same order).
struct BackendSet {
  std::vector<std::unique_ptr<Backend>> backends;
  std::vector<BackendRecord> records;
};

/// Constructs the named backends (none named: the defaults, reference and cpu, plus every
/// source recorded in the selected cases, which then apply only to the cases that carry
/// them). `recorded`: each recorded source's name with the file:line of a case that holds
/// it. Throws UsageError (exit 2) for an unknown name, a recorded source named like a
/// built-in backend, a plugin file that does not exist, a command that is not executable;
/// BackendError (exit 3) for a plugin or worker that starts but cannot run, or, under
/// `strict`, an unavailable backend.
BackendSet resolve_backends(const std::vector<std::string>& occurrences, const std::map<std::string, std::string>& recorded,
                            const BackendOptions& opt, bool strict);

}  // namespace normcheck
