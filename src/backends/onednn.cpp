// oneDNN as a backend: layer_normalization_forward on the CPU engine (README "oneDNN").
//
// Convention mapping (oneDNN 2.6 computes y = gamma (x - mean) / sqrt(var + eps) + beta over
// the last logical dim, mean and biased variance in f32, for f32 and bf16 data):
// - layer_norm with inside_sqrt, biased variance: expressed. x is viewed as [rows, m]
//   (normalized_shape flattened: dense row-major, so this is the same reduction).
// - eps: oneDNN takes a binary32 epsilon. A case's binary64 eps is rounded to binary32;
//   that perturbs the output by a relative <= 2^-25 eps / (var + eps) < 2^-25, which is
//   below ulp(y)/2 of binary32 and bfloat16 (so it adds < 1 to stab), the only output
//   types offered. An eps that overflows binary32 is SKIPPED.
// - affine none: no flags; gamma: use_scale; gamma_beta: use_scale | use_shift, with scale
//   and shift in f32 (oneDNN's type for them; gamma/beta values that are not binary32 values
//   are SKIPPED rather than rounded). one_plus_w: passed as scale = 1 + w when every 1 + w is
//   a binary32 value, which gives exactly the numerics of a kernel that forms 1 + w in f32;
//   otherwise SKIPPED (passing a rounded 1 + w would test our rounding, not oneDNN).
// - rms_norm: SKIPPED (oneDNN 2.6 has no RMS normalization; the rms_norm flag came in 3.x).
// - outside_sqrt, clamp_var, clamp_norm, unbiased variance: SKIPPED, not expressible.
// - f64, f16, dst type != src type, accumulation other than f32: SKIPPED.
// - batch_norm: TODO(families) once Op::batch_norm has cases and a reference: map training /
//   eval forward to batch_normalization_forward (forward_training with batch statistics;
//   forward_inference + use_global_stats for eval), scale/shift as above, and return the
//   running statistics oneDNN does not update itself (it outputs mean and variance only).
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "backends/external.hpp"
#include "spec/layout.hpp"

#ifdef NORMCHECK_HAVE_ONEDNN
#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace normcheck {

namespace {

#ifdef NORMCHECK_HAVE_ONEDNN

/// f32 copy of a parameter (gamma, beta, or 1 + gamma), or nullopt if some value is not a
/// binary32 value (the reason then says which).
std::optional<std::vector<float>> f32_params(const Tensor& t, bool one_plus, std::string& why) {
  std::vector<float> v(static_cast<std::size_t>(t.size()));
  for (std::int64_t i = 0; i < t.size(); ++i) {
    const double w = t.get(i);
    const double s = one_plus ? 1.0 + w : w;
    // TwoSum (Knuth): the rounding error of 1 + w is exactly (1 - (s - bb)) + (w - bb).
    const double bb = s - 1.0;
    const bool exact_sum = !one_plus || ((1.0 - (s - bb)) + (w - bb) == 0.0);
    if (!exact_sum || !representable(DType::f32, s)) {
      why = fmt::format("{} at [{}] = {:.9g} is not a binary32 value", one_plus ? "1 + gamma" : "the parameter", i, s);
      return std::nullopt;
    }
    v[static_cast<std::size_t>(i)] = static_cast<float>(s);
  }
  return v;
}

class OneDnnBackend final : public Backend {
 public:
  explicit OneDnnBackend(bool poison_y) : eng_(dnnl::engine::kind::cpu, 0), stream_(eng_), poison_y_(poison_y) {}
  std::string name() const override { return "onednn"; }
  std::string identity() const override {
    const dnnl_version_t* v = dnnl_version();
    return fmt::format("oneDNN {}.{}.{}", v->major, v->minor, v->patch);
  }
  std::string description() const override {
    const dnnl_version_t* v = dnnl_version();
    return fmt::format("oneDNN {}.{}.{} layer_normalization_forward, CPU engine (f32, bf16)", v->major, v->minor, v->patch);
  }
  std::optional<std::string> unsupported(const ValidProblem& vp, const Recorded&) const override {
    const Problem& p = *vp;
    const Convention& c = p.conv;
    if (p.op == Op::rms_norm) return "onednn: oneDNN 2.6 has no RMS normalization (normalization_flags::rms_norm came in 3.x)";
    // TODO(families): Op::batch_norm -> batch_normalization_forward (see the top of this file).
    if (p.op != Op::layer_norm) return fmt::format("onednn: {} not wired to a oneDNN primitive", to_string(p.op));
    if (c.eps_placement != EpsPlacement::inside_sqrt)
      return fmt::format("onednn: eps_placement {} not expressible (oneDNN divides by sqrt(var + eps))", to_string(c.eps_placement));
    if (c.variance != Variance::biased) return "onednn: unbiased variance not expressible (oneDNN uses 1/m)";
    if (c.normalized_dtype) return "onednn: normalized_dtype not expressible (oneDNN rounds once, at dst)";
    const DType dt = p.x().dtype();
    if (dt != DType::f32 && dt != DType::bf16)
      return fmt::format("onednn: layer normalization on {} not offered by oneDNN 2.6 (f32, bf16)", dtype_name(dt));
    if (p.out_dtype != dt)
      return fmt::format("onednn: output {} differs from input {} (oneDNN 2.6 gives dst the type of src)", dtype_name(p.out_dtype), dtype_name(dt));
    if (c.acc_dtype != DType::f32)
      return fmt::format("onednn: accumulates in f32; the case expects {} accumulation", dtype_name(c.acc_dtype));
    if (!(static_cast<float>(c.eps) <= std::numeric_limits<float>::max()))
      return fmt::format("onednn: eps = {:g} overflows oneDNN's binary32 epsilon", c.eps);
    std::string why;
    if (const Tensor* g = p.input("gamma"); g && !f32_params(*g, c.affine == Affine::one_plus_w, why))
      return fmt::format("onednn: scale is f32 and {}", why);
    if (const Tensor* b = p.input("beta"); b && !f32_params(*b, false, why)) return fmt::format("onednn: shift is f32 and {}", why);
    try {
      (void)primitive_desc(p);
    } catch (const dnnl::error& e) {
      return fmt::format("onednn: no implementation for this problem ({})", e.what());
    }
    return std::nullopt;
  }

  Outputs run(const ValidProblem& vp, const Recorded&) override {
    const Problem& p = *vp;
    using dnnl::memory;
    try {
      const auto pd = primitive_desc(p);
      const RowLayout l = row_layout(p);
      // oneDNN's memory takes a mutable handle; forward inference only reads src, so x is
      // not copied (the copy was a read and a write of x inside every timed run of bench).
      const Tensor& x = p.x();
      Tensor y(p.out_dtype, x.shape(), Tensor::Uninitialized{});
      if (poison_y_) y.poison();
      memory src(pd.src_desc(), eng_, const_cast<void*>(x.data()));
      memory dst(pd.dst_desc(), eng_, y.data());
      std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
      std::vector<float> scale, shift;
      const memory::desc pmd({l.m}, memory::data_type::f32, memory::format_tag::a);
      std::string why;
      if (const Tensor* g = p.input("gamma")) {
        scale = *f32_params(*g, p.conv.affine == Affine::one_plus_w, why);
        args.emplace(DNNL_ARG_SCALE, memory(pmd, eng_, scale.data()));
      }
      if (const Tensor* b = p.input("beta")) {
        shift = *f32_params(*b, false, why);
        args.emplace(DNNL_ARG_SHIFT, memory(pmd, eng_, shift.data()));
      }
      memory mean(pd.mean_desc(), eng_), var(pd.variance_desc(), eng_);
      if (pd.mean_desc().get_size()) args.emplace(DNNL_ARG_MEAN, mean);
      if (pd.variance_desc().get_size()) args.emplace(DNNL_ARG_VARIANCE, var);
      if (pd.workspace_desc().get_size()) args.emplace(DNNL_ARG_WORKSPACE, memory(pd.workspace_desc(), eng_));
      if (pd.scratchpad_desc().get_size()) args.emplace(DNNL_ARG_SCRATCHPAD, memory(pd.scratchpad_desc(), eng_));
      dnnl::layer_normalization_forward(pd).execute(stream_, args);
      stream_.wait();
      return {{"y", std::move(y)}};
    } catch (const dnnl::error& e) {
      throw BackendError(fmt::format("oneDNN: {}", e.what()));
    }
  }

 private:
  dnnl::layer_normalization_forward::primitive_desc primitive_desc(const Problem& p) const {
    using dnnl::memory;
    const RowLayout l = row_layout(p);
    const auto dt = p.x().dtype() == DType::bf16 ? memory::data_type::bf16 : memory::data_type::f32;
    const memory::desc data_md({l.rows, l.m}, dt, memory::format_tag::ab);
    auto flags = dnnl::normalization_flags::none;
    if (p.conv.affine != Affine::none) flags = flags | dnnl::normalization_flags::use_scale;
    if (p.conv.affine == Affine::gamma_beta) flags = flags | dnnl::normalization_flags::use_shift;
    const dnnl::layer_normalization_forward::desc d(dnnl::prop_kind::forward_inference, data_md,
                                                    static_cast<float>(p.conv.eps), flags);
    return dnnl::layer_normalization_forward::primitive_desc(d, eng_);
  }

  dnnl::engine eng_;
  dnnl::stream stream_;
  bool poison_y_;
};

#else  // built without oneDNN

#ifndef NORMCHECK_ONEDNN_REASON
#define NORMCHECK_ONEDNN_REASON "oneDNN was not configured"
#endif

class OneDnnBackend final : public Backend {
 public:
  explicit OneDnnBackend(bool /*poison_y*/) {}
  static const char* reason() { return NORMCHECK_ONEDNN_REASON; }
  std::string name() const override { return "onednn"; }
  std::string description() const override { return fmt::format("oneDNN layer normalization (not built: {})", reason()); }
  std::optional<std::string> unavailable() const override {
    return fmt::format("onednn unavailable: normcheck was built without oneDNN ({}; install libdnnl-dev, rerun cmake)", reason());
  }
  std::optional<std::string> unsupported(const ValidProblem&, const Recorded&) const override { return unavailable(); }
  Outputs run(const ValidProblem&, const Recorded&) override { throw BackendError(*unavailable()); }
};

#endif

}  // namespace

std::unique_ptr<Backend> make_onednn_backend(bool poison_y) { return std::make_unique<OneDnnBackend>(poison_y); }

}  // namespace normcheck
