// The op table. Adding an op: its folder under src/ops/<name>/ defining ops::<name>_def
// (OpDef, reference, CPU kernel, mutants), its cases and tests, and one X(<name>) line here.
#include "ops/registry.hpp"

#include <set>

#include "ops/common/layout_mutants.hpp"

// clang-format off
#define NORMCHECK_OPS(X) \
  X(layer_norm)          \
  X(rms_norm)            \
  X(group_norm)          \
  X(instance_norm)       \
  X(batch_norm)          \
  X(l2_normalize)        \
  X(scale_norm)          \
  X(ada_layer_norm)      \
  X(ada_rms_norm)        \
  X(qk_norm)             \
  X(dyt)                 \
  X(fused_add_rms_norm)  \
  X(fused_add_layer_norm)\
  X(rms_norm_quant)      \
  X(layer_norm_quant)
// clang-format on

namespace normcheck {

namespace ops {
#define NORMCHECK_DECLARE_OP(name) extern const OpDef name##_def;
NORMCHECK_OPS(NORMCHECK_DECLARE_OP)
#undef NORMCHECK_DECLARE_OP
}  // namespace ops

// The bundled ops by name (spec/op.hpp): addresses only, so constant-initialized.
constinit const Op Op::layer_norm{&ops::layer_norm_def};
constinit const Op Op::rms_norm{&ops::rms_norm_def};
constinit const Op Op::group_norm{&ops::group_norm_def};
constinit const Op Op::instance_norm{&ops::instance_norm_def};
constinit const Op Op::batch_norm{&ops::batch_norm_def};
constinit const Op Op::l2_normalize{&ops::l2_normalize_def};
constinit const Op Op::scale_norm{&ops::scale_norm_def};
constinit const Op Op::ada_layer_norm{&ops::ada_layer_norm_def};
constinit const Op Op::ada_rms_norm{&ops::ada_rms_norm_def};
constinit const Op Op::qk_norm{&ops::qk_norm_def};

namespace ops {

const std::vector<Op>& all() {
#define NORMCHECK_OP_ENTRY(name) Op{&name##_def},
  static const std::vector<Op> table{NORMCHECK_OPS(NORMCHECK_OP_ENTRY)};
#undef NORMCHECK_OP_ENTRY
  return table;
}

std::optional<Op> find(std::string_view name) {
  for (Op op : all())
    if (op.name() == name) return op;
  return std::nullopt;
}

std::string choices() {
  std::string s;
  for (Op op : all()) s += (s.empty() ? "" : " | ") + std::string(op.name());
  return s;
}

const std::vector<const MutantDef*>& mutants() {
  static const std::vector<const MutantDef*> list = [] {
    std::vector<const MutantDef*> v;
    std::set<std::string_view> seen;
    for (Op op : all())
      for (const MutantDef& m : op.def().mutants)
        if (seen.insert(m.name).second) v.push_back(&m);
    for (const MutantDef& m : layout_mutants())  // every op's (the reading of views is the fault)
      if (seen.insert(m.name).second) v.push_back(&m);
    return v;
  }();
  return list;
}

std::vector<Op> mutant_ops(const MutantDef& m) {
  for (const MutantDef& l : layout_mutants())
    if (&l == &m) return all();
  std::vector<Op> v;
  for (Op op : all())
    for (const MutantDef& d : op.def().mutants)
      if (d.name == m.name) {
        v.push_back(op);
        break;
      }
  return v;
}

const MutantDef* find_mutant(std::string_view name) {
  for (const MutantDef* m : mutants())
    if (m->name == name) return m;
  return nullptr;
}

}  // namespace ops
}  // namespace normcheck
