#include "ops/common/layout_mutants.hpp"

namespace normcheck::ops {

namespace {

/// The problem with every input read from its view (present(input, layout)) the wrong way R
/// (core/view.hpp read_view), then the op's own CPU kernel.
template <ViewReading R>
Outputs misread(const ValidProblem& vp) {
  Problem q = *vp;
  for (auto& [name, t] : q.inputs) t = read_view(t, q.layout, R);
  q.layout = MemoryLayout::contiguous;
  Outputs o;
  q.op.def().cpu(validate(std::move(q)), o);
  return o;
}

bool has_cpu(const Problem& p) { return p.op.def().cpu != nullptr; }

}  // namespace

const std::vector<MutantDef>& layout_mutants() {
  static const std::vector<MutantDef> v{
      {"view_offset_ignored",
       "every input read from the start of its storage, not its storage offset (the base pointer of a sliced tensor)",
       "ln_offset_view", has_cpu, misread<ViewReading::offset_ignored>},
      {"view_strides_ignored",
       "every input read as dense row-major from its offset (a kernel that assumes contiguous rows: padded or permuted views)",
       "ln_padded_view", has_cpu, misread<ViewReading::strides_ignored>},
  };
  return v;
}

}  // namespace normcheck::ops
