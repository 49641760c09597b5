// Model files for `normcheck trace` (cases/traces/*.trace.toml): a residual stack of
// normalization sites with seeded random linear branches (DESIGN.md "trace").
// Schema: README.md "Traces"; the parser is model.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "spec/op.hpp"

namespace normcheck::trace {

/// Where the norms sit in each residual block (x: the residual stream, F: the branch):
///   pre_norm   x <- x + F(N(x))                 (GPT-2, LLaMA)
///   post_norm  x <- N(x + F(x))                 (original Transformer, BERT)
///   sandwich   x <- x + N_post(F(N_pre(x)))     (Gemma 2/3; Gemma 3 also has QK-norm,
///                                                not modelled here)
enum class Placement { pre_norm, post_norm, sandwich };
std::string_view to_string(Placement) noexcept;
std::optional<Placement> parse_placement(std::string_view) noexcept;

/// The residual branch F: R^d -> R^d applied per row (token), in binary32 on the CPU with
/// identical code for the backend's and the reference's stack:
///   linear       F(h) = W h
///   linear_gelu  F(h) = gelu(W h), gelu(z) = z/2 (1 + erf(z / sqrt 2)) (exact-erf GELU, BERT)
/// W: d x d, entries N(0, (scale/sqrt(d))^2) drawn from a per-block seed, stored in the
/// activation dtype.
enum class Branch { linear, linear_gelu };
std::string_view to_string(Branch) noexcept;

/// A seeded normal distribution of a parameter vector (gains, biases).
struct Dist {
  double mean = 0;
  double std = 0;
};

/// The op and convention of one kind of norm site, and how its parameters are drawn.
/// gain: gamma (affine gamma, gamma_beta) or w (affine one_plus_w, y = (1 + w) n);
/// bias: beta (gamma_beta only). Parameters are stored in the activation dtype.
struct NormSpec {
  Op op = Op::rms_norm;
  Convention conv;          ///< normalized_shape is set to [d] by the parser
  Dist gain{1.0, 0.0};
  Dist bias{0.0, 0.0};
};

/// A parsed model file. Rows are tokens: the activations are [tokens, d] in `dtype`.
struct Model {
  std::string file;
  std::string name;
  std::string note;
  std::int64_t d = 0;
  std::int64_t tokens = 0;
  std::int64_t blocks = 0;
  Placement placement = Placement::pre_norm;
  DType dtype = DType::f32;
  std::uint64_t seed = 0;
  Dist input{0.0, 1.0};              ///< x0 entries ~ N(mean, std^2), rounded to dtype
  Branch branch = Branch::linear;
  double branch_scale = 1.0;         ///< W entries ~ N(0, (branch_scale/sqrt(d))^2)
  std::vector<std::int64_t> quiet_rows;  ///< eps-sensitive tokens (see stack.hpp)
  double quiet_scale = 1.0;          ///< tau of the quiet rows
  NormSpec norm;                     ///< every site (pre_norm, post_norm, sandwich N_pre)
  NormSpec norm_post;                ///< sandwich N_post (defaults: norm)
  std::optional<NormSpec> final_norm;  ///< an extra site after the last block
};

/// Parses a model file. Throws CaseError ("file:line: field: message", cases/case.hpp) on
/// a TOML syntax error, an unknown key, a wrong type or an invalid value (d, tokens,
/// blocks >= 1; quiet rows within [0, tokens); eps finite >= 0; stds >= 0; a
/// convention the op does not accept).
Model parse_model_file(const std::string& path);

}  // namespace normcheck::trace
