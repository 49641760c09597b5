#include "ops/common/layout_mutants.hpp"

namespace normcheck::ops {

namespace {

/// The problem with every input read from its view (present(input, layout)) the wrong way:
/// from storage element 0 (ignore_offset), or with the dense row-major strides of its shape
/// (dense_strides). Then the op's own CPU kernel.
template <bool IgnoreOffset, bool DenseStrides>
Outputs misread(const ValidProblem& vp) {
  Problem q = *vp;
  for (auto& [name, t] : q.inputs) {
    StridedView v = present(t, q.layout);
    if (IgnoreOffset) v.offset = 0;
    if (DenseStrides) {
      std::int64_t s = 1;
      for (std::size_t k = v.shape.size(); k-- > 0;) v.strides[k] = s, s *= v.shape[k];
    }
    t = gather(v);  // within the storage: a dense extent is no larger than the view's
  }
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
       "ln_offset_view", has_cpu, misread<true, false>},
      {"view_strides_ignored",
       "every input read as dense row-major from its offset (a kernel that assumes contiguous rows: padded or permuted views)",
       "ln_padded_view", has_cpu, misread<false, true>},
  };
  return v;
}

}  // namespace normcheck::ops
