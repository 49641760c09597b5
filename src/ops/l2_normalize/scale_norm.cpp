// scale_norm: y = g x / max(||x||_2, eps) with one learned scalar g (Nguyen & Salazar 2019).
// l2_normalize's reference, kernel and rules (l2_normalize.hpp) with the input g.
#include "ops/l2_normalize/l2_normalize.hpp"
#include "ops/registry.hpp"

namespace normcheck::ops {

extern const OpDef scale_norm_def{
    .name = "scale_norm",
    .formula = "y = g x / max(||x||_2, eps) over axes, g a learned scalar",
    .params = {&l2::axes_key},
    .defaults = [](Convention& c) { c.eps_placement = EpsPlacement::clamp_norm; },
    .validate = l2::validate,
    .outputs = l2::outputs,
    .groups = l2::groups,
    .group_size = l2::group_size,
    .backward_outputs = l2::backward_outputs,
    .param_reduction = l2::param_reduction,
    .reference = l2::reference_exact,
    .reference_double = l2::reference_double,
    .cpu = l2::cpu,
    .mutants = l2::mutants(),
    .sample = l2::sample,
};

}  // namespace normcheck::ops
