// ada_rms_norm: ada_layer_norm with the RMS denominator and no centering (ada_norm.hpp).
#include "ops/ada_layer_norm/ada_norm.hpp"
#include "ops/registry.hpp"

namespace normcheck::ops {

extern const OpDef ada_rms_norm_def{
    .name = "ada_rms_norm",
    .formula = "y = (1 + scale_b) x / sqrt(mean(x^2) + eps) + shift_b per row of d; gated: h = x + gate_b y",
    .centers = false,
    .params = {&ada::gated_key},
    .validate = ada::validate,
    .outputs = ada::outputs,
    .groups = ada::groups,
    .group_size = ada::group_size,
    .backward_outputs = ada::backward_outputs,
    .validate_backward = ada::validate_backward,
    .param_reduction = ada::param_reduction,
    .reference = ada::reference_exact,
    .reference_double = ada::reference_double,
    .cpu = ada::cpu,
    .mutants = ada::mutants(),
    .sample = ada::sample,
};

}  // namespace normcheck::ops
