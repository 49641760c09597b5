// instance_norm: group_norm with one group per channel (G = C): per (n, c) over the spatial
// axes. Same reference, kernel and rules as group_norm (group_norm.hpp).
#include "ops/common/channel_op.hpp"
#include "ops/group_norm/group_norm.hpp"
#include "ops/registry.hpp"

namespace normcheck::ops {

extern const OpDef instance_norm_def{
    .name = "instance_norm",
    .formula = "y = gamma_c (x - mean) / sqrt(var + eps) + beta_c per (n, c) over the spatial axes",
    .centers = true,
    .validate = group_norms::validate,
    .outputs = group_norms::outputs,
    .optional_outputs = group_norms::saved_statistics,
    .output_dtypes = group_norms::saved_statistics_dtypes,
    .groups = group_norms::groups,
    .group_size = group_norms::group_size,
    .backward_outputs = channels::backward_outputs,
    .param_reduction = channels::param_reduction,
    .reference = group_norms::reference_exact,
    .reference_double = group_norms::reference_double,
    .cpu = group_norms::cpu,
    .sample = group_norms::sample,
};

}  // namespace normcheck::ops
