// The op table: every op, registered once (registry.cpp). Everything that must handle
// "every op" iterates it; everything op-specific is in the op's OpDef.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spec/op.hpp"
#include "spec/convention.hpp"
#include "spec/op_def.hpp"

namespace normcheck::ops {

/// Every op, in table order.
const std::vector<Op>& all();
/// The op named `name` ("layer_norm"), or nullopt.
std::optional<Op> find(std::string_view name);
/// "layer_norm | rms_norm | ...", for messages.
std::string choices();
/// Every mutant of every op, each once (by name), in table order.
const std::vector<const MutantDef*>& mutants();
/// The ops a mutant is registered with: those whose OpDef lists it, or every op for the
/// mutants of the whole table (ops/common/layout_mutants.hpp).
std::vector<Op> mutant_ops(const MutantDef& m);
/// The mutant named `name`, or nullptr.
const MutantDef* find_mutant(std::string_view name);

}  // namespace normcheck::ops

namespace normcheck {

/// Shorthands over the table for code that asks one question of an op.
inline bool centers(Op op) { return op.def().centers; }
inline std::string_view primary_input(Op op) { return op.def().primary_input; }
inline std::optional<Op> parse_op(std::string_view name) { return ops::find(name); }
inline std::string choices_op() { return ops::choices(); }

}  // namespace normcheck
