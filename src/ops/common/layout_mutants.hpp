// Deliberately wrong readers of strided views (issue 13): kernels that are right on dense
// tensors and wrong on the views a framework hands them. They take every op (the reading is
// the fault, the op's own CPU kernel does the rest), so they are registered once in the op
// table (ops/registry.cpp) rather than with one op. Test-only: backend mutant:<name>.
#pragma once

#include <vector>

#include "spec/op_def.hpp"

namespace normcheck::ops {

/// view_offset_ignored: every input read from the start of its storage, not from its
/// storage offset (a kernel given the base pointer of a sliced tensor);
/// view_strides_ignored: every input read as dense row-major from its offset (a kernel that
/// assumes a contiguous tensor: padded rows and permuted layouts read the wrong elements).
/// Both are correct on contiguous problems; the layouts' cases kill them.
const std::vector<MutantDef>& layout_mutants();

}  // namespace normcheck::ops
