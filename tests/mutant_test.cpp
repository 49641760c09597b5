// The bundled cases must kill every mutant (a deliberately wrong kernel fails at least one
// case under the default gates) and pass the reference and cpu backends.
#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "checks/runner.hpp"
#include "test_util.hpp"
#include "backends/registry.hpp"

using namespace normcheck;

namespace {
const std::vector<Case>& bundled() {
  static const std::vector<Case> cases = [] {
    std::vector<Case> all;
    for (const auto& f : find_case_files({test::source_path("cases")}))
      for (auto& c : parse_case_file(f)) all.push_back(std::move(c));
    return all;
  }();
  return cases;
}

std::set<std::string> failing_cases(const std::string& backend, const std::string& only = "") {
  std::vector<std::unique_ptr<Backend>> bs;
  bs.push_back(make_backend(backend));
  std::vector<Case> selected;
  for (const auto& c : bundled())
    if (only.empty() || c.name == only) selected.push_back(c);
  std::set<std::string> failed;
  for (const auto& r : run_cases(selected, bs, {}))
    if (r.status == Status::failed || r.status == Status::error) failed.insert(r.cs->name);
  return failed;
}
}  // namespace

TEST_CASE("bundled cases: reference and cpu pass every case", "[mutant][bundled]") {
  for (const char* b : {"reference", "cpu"}) {
    INFO(b);
    const auto failed = failing_cases(b);
    CHECK(failed.empty());
    for (auto& f : failed) UNSCOPED_INFO("failed: " << f);
  }
}

TEST_CASE("bundled cases: each mutant fails the case aimed at its fault", "[mutant][bundled]") {
  // fault -> a case that must catch it, by construction of the case.
  const std::map<std::string, std::string> aimed = {
      {"eps_outside_sqrt", "ln_var1e-12_eps1e-5_inside"},  // gain 90909 instead of 316
      {"one_pass_variance", "ln_shift_1e4_d4097"},         // mean 1e4, std 1: cancellation
      {"f16_accumulation", "layer_norm_random_f16_d4096"},
      {"eps_missing", "ln_constant_row_eps1e-5"},
      {"wrong_eps", "ln_var1e-12_eps1e-5_inside"},
      {"unbiased_variance", "ln_123"},
      {"no_sqrt", "ln_123"},
      {"rms_subtracts_mean", "rms_invariance_int_rows"},   // changes_under shift
      {"ln_no_centering", "ln_11_13"},
      {"stats_over_sequence", "layer_norm_random_f32_d64"},
      {"gamma_wrong_axis", "ln_affine_gamma_beta"},
      {"w_not_one_plus_w", "rms_one_plus_w"},
      {"tail_unnormalized", "layer_norm_random_f32_d17"},
      {"bn_biased_running_var", "bn_13_train_momentum1"},  // running_var 1 instead of 2
      {"bn_stats_over_batch_only", "bn_nchw_train"},
      {"bn_eval_batch_stats", "bn_13_eval"},                // running var 2: [-0.707, 0.707], not [-1, 1]
      {"gn_interleaved_groups", "gn_two_groups"},
      {"l2_eps_added", "l2_clamped_below_eps"},
      {"ada_broadcast_over_batch", "adaln_tokens_and_batch"},
      {"qk_norm_across_heads", "qk_rms_heads"},
      {"dgamma_wrong_axis", "ln_bwd_affine_rows"},          // row sums [-1.22, 0] laid into dgamma: slot 2 gets -1.22, not 0
      {"ln_dx_no_mean_term", "ln_bwd_123_dy100"},           // dx[1] = 0 instead of -0.408
      {"bn_backward_constant_stats", "bn_bwd_train_123"},   // dx = dy / D = (1.22, 0, 0) instead of (0.204, -0.408, 0.204)
  };
  for (const auto& name : mutant_names()) {
    INFO("mutant:" << name);
    REQUIRE(aimed.count(name));
    CHECK(failing_cases("mutant:" + name, aimed.at(name)).count(aimed.at(name)) == 1);
  }
}
