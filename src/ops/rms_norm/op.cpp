// rms_norm: y = gamma x / D(mean(x^2)) (no centering: the denominator is the raw second
// moment, RMS^2 = var + mean^2). Reference: ops/common/row_norm.hpp; CPU: cpu.cpp.
#include "ops/common/cpu_kernels.hpp"
#include "ops/common/row_op.hpp"
#include "ops/common/row_reference.hpp"
#include "ops/registry.hpp"

namespace normcheck::ops {

extern const OpDef rms_norm_def{
    .name = "rms_norm",
    .formula = "y = gamma x / sqrt(mean(x^2) + eps) over normalized_shape",
    .centers = false,
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
      if (p->conv.direction == Direction::backward) kernels::cpu::rms_norm_backward(*p, o);
      else kernels::cpu::rms_norm_forward(*p, o);
    },
    .mutants = rows::mutants(),
    .sample = rows::sample,
};

}  // namespace normcheck::ops
