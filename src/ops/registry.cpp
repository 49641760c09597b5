// The op table. Adding an op: its folder under src/ops/ (OpDef, reference, CPU kernel,
// mutants), its cases and tests, and one line below.
#include "ops/registry.hpp"

#include <set>

namespace normcheck {

namespace ops {
extern const OpDef layer_norm_def, rms_norm_def, group_norm_def, instance_norm_def, batch_norm_def, l2_normalize_def,
    scale_norm_def, ada_layer_norm_def, ada_rms_norm_def, qk_norm_def;
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
  static const std::vector<Op> table{
      Op{&layer_norm_def},
      Op{&rms_norm_def},
      Op{&group_norm_def},
      Op{&instance_norm_def},
      Op{&batch_norm_def},
      Op{&l2_normalize_def},
      Op{&scale_norm_def},
      Op{&ada_layer_norm_def},
      Op{&ada_rms_norm_def},
      Op{&qk_norm_def},
  };
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
    return v;
  }();
  return list;
}

const MutantDef* find_mutant(std::string_view name) {
  for (const MutantDef* m : mutants())
    if (m->name == name) return m;
  return nullptr;
}

}  // namespace ops
}  // namespace normcheck
