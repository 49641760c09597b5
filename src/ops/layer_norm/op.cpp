// layer_norm: y = gamma (x - mean) / D(var) + beta over the trailing dims normalized_shape
// (D per eps_placement; var with 1/m or 1/(m-1)). Reference: ops/common/row_norm.hpp;
// CPU kernel: cpu.cpp (two-pass, f32 accumulation, row scaling), cpu_backward.cpp.
#include "ops/common/cpu_kernels.hpp"
#include "ops/common/row_op.hpp"
#include "ops/common/row_reference.hpp"
#include "ops/registry.hpp"

namespace normcheck::ops {

extern const OpDef layer_norm_def{
    .name = "layer_norm",
    .formula = "y = gamma (x - mean) / sqrt(var + eps) + beta over normalized_shape",
    .centers = true,
    .params = {&rows::kNormalizedDtype},
    .validate = rows::validate,
    .outputs = rows::outputs,
    .optional_outputs = rows::saved_statistics,
    .output_dtypes = rows::saved_statistics_dtypes,
    .groups = rows::groups,
    .group_size = rows::group_size,
    .backward_outputs = rows::backward_outputs,
    .param_reduction = rows::param_reduction,
    .reference = reference::row_reference,
    .reference_double = reference::row_reference_double,
    .cpu = [](const ValidProblem& p, Outputs& o) {
      if (p->conv.direction == Direction::backward) kernels::cpu::layer_norm_backward(*p, o);
      else kernels::cpu::layer_norm_forward(*p, o);
    },
    .mutants = rows::mutants(),
    .sample = rows::sample,
};

}  // namespace normcheck::ops
