// Dynamic Tanh (reference.hpp has the formula, its condition magnitudes and its source):
// the entries its OpDef (op.cpp) registers.
#pragma once

#include "spec/op.hpp"

namespace normcheck::ops::dyt {

/// The CPU kernel, forward (y) or backward (dx, dalpha, dgamma, dbeta): cpu.cpp.
void cpu(const ValidProblem& p, Outputs& out);

}  // namespace normcheck::ops::dyt
