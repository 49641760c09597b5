// The one table of backends.
#include <unistd.h>

#include <fmt/format.h>

#include "backends/cuda_backend.hpp"
#include "backends/registry.hpp"
#include "ops/common/cpu_rows_fast.hpp"
#include "ops/reference.hpp"
#include "ops/registry.hpp"
#include "backends/external.hpp"  // plugin:, cmd:, onednn

namespace normcheck {

namespace {

/// The exact reference rounded once to the output dtype (<= 0.5 ULP): the run's ground truth
/// itself (evaluate_exact keeps it in the ValidProblem), so it is evaluated once per case.
class ReferenceBackend final : public Backend {
 public:
  std::string name() const override { return "reference"; }
  std::string identity() const override { return "normcheck " NORMCHECK_VERSION; }
  std::string description() const override { return "exact reference (MPFR >= 256 bits; certified double-double where it decides), rounded once to the output dtype"; }
  std::optional<std::string> unsupported(const ValidProblem&, const Recorded&) const override { return std::nullopt; }
  bool supports_backward() const override { return true; }
  // The exact result of the values a view shows does not depend on where they lie.
  bool takes_views() const override { return true; }
  Outputs run(const ValidProblem& p, const Recorded&) override {
    Outputs o;
    for (auto& [k, v] : reference::evaluate_exact(p)) o[k] = v.rounded();
    return o;
  }
};

/// The project's optimized CPU kernels: each op's `cpu` (src/ops/<op>/cpu*.cpp).
class CpuBackend final : public Backend {
 public:
  std::string name() const override { return "cpu"; }
  // With the row kernel's instruction-set choices (NORMCHECK_CPU_TIER and the CPU decide
  // them; a report then says which code ran).
  std::string identity() const override { return "normcheck " NORMCHECK_VERSION " (row kernel " + kernels::cpu::detail::cpu_row_kernel_summary() + ")"; }
  std::string description() const override { return "normcheck CPU kernels: two-pass, f32 accumulation (f64 for f64), OpenMP rows"; }
  std::optional<std::string> unsupported(const ValidProblem& p, const Recorded&) const override {
    if (p->conv.acc_dtype != DType::f32 && p->conv.acc_dtype != DType::f64)
      return fmt::format("cpu: accumulation in {} not offered", dtype_name(p->conv.acc_dtype));
    if (!p->op.def().cpu) return fmt::format("cpu: no kernel for {}", p->op.name());
    return std::nullopt;
  }
  bool supports_backward() const override { return true; }
  bool takes_views() const override { return true; }
  Outputs run(const ValidProblem& p, const Recorded&) override {
    Outputs o;
    if (p->layout == MemoryLayout::contiguous) {
      p->op.def().cpu(p, o);
      return o;
    }
    // Handed views: each input is read through its view into a dense tensor first (what a
    // strided entry point such as PyTorch's .contiguous() does), then the kernels run.
    Problem q = *p;
    for (auto& [name, t] : q.inputs) t = gather(present(t, q.layout));
    q.layout = MemoryLayout::contiguous;
    p->op.def().cpu(validate(std::move(q)), o);
    return o;
  }
};

/// Outputs recorded by another source and stored in the case file.
class RecordedBackend final : public Backend {
 public:
  explicit RecordedBackend(std::string n) : name_(std::move(n)) {}
  std::string name() const override { return name_; }
  std::string description() const override { return "outputs recorded in the case files under this name"; }
  bool applies(const ValidProblem&, const Recorded& rec) const override { return rec.count(name_) != 0; }
  std::optional<std::string> unsupported(const ValidProblem&, const Recorded& rec) const override {
    if (!rec.count(name_)) return fmt::format("{}: no recorded output for this case", name_);
    return std::nullopt;
  }
  bool supports_backward() const override { return true; }  // whatever the case recorded
  Outputs run(const ValidProblem&, const Recorded& rec) override { return rec.at(name_); }

 private:
  std::string name_;
};

/// Deliberately wrong kernels (each op's OpDef::mutants): test-only, never run by default.
class MutantBackend final : public Backend {
 public:
  explicit MutantBackend(const MutantDef& m) : m_(m) {}
  std::string name() const override { return "mutant:" + std::string(m_.name); }
  std::string identity() const override { return "normcheck " NORMCHECK_VERSION; }
  std::string description() const override { return std::string(m_.description); }
  std::optional<std::string> unsupported(const ValidProblem& p, const Recorded&) const override {
    if (!m_.supports(*p)) return fmt::format("{}: no {} kernel for {}", name(), to_string(p->conv.direction), p->op.name());
    return std::nullopt;
  }
  bool supports_backward() const override { return true; }  // per mutant: unsupported()
  // Each mutant reads the inputs' views correctly (the values) but for the layout mutants,
  // whose fault is the reading (ops/common/layout_mutants.cpp).
  bool takes_views() const override { return true; }
  Outputs run(const ValidProblem& p, const Recorded&) override { return m_.run(p); }

 private:
  const MutantDef& m_;
};

}  // namespace

std::uint64_t default_backend_memory() noexcept {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return 8ULL << 30;  // unknown: 8 GiB
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) / 2;
}

std::unique_ptr<Backend> make_backend(const std::string& name) { return make_backend(name, BackendOptions{}); }

bool is_backend_spec(const std::string& name) {
  for (const char* prefix : {"mutant:", "plugin:", "cmd:"})
    if (name.rfind(prefix, 0) == 0) return true;
  return false;
}

std::unique_ptr<Backend> make_backend(const std::string& name, const BackendOptions& opt) {
  if (name.rfind("plugin:", 0) == 0) return make_plugin_backend(name.substr(7), opt);
  if (name.rfind("cmd:", 0) == 0) return make_cmd_backend(name.substr(4), opt);
  if (name == "onednn") return make_onednn_backend();
  if (name == "reference") return std::make_unique<ReferenceBackend>();
  if (name == "cpu") return std::make_unique<CpuBackend>();
  if (name == "cuda") return make_cuda_backend();
  if (name.rfind("mutant:", 0) == 0) {
    const std::string f = name.substr(7);
    if (const MutantDef* m = ops::find_mutant(f)) return std::make_unique<MutantBackend>(*m);
    throw std::invalid_argument(fmt::format("unknown mutant '{}' (known: {})", f, fmt::join(mutant_names(), ", ")));
  }
  if (name.empty() || name.find_first_of(" \t/") != std::string::npos)
    throw std::invalid_argument(fmt::format("invalid backend name '{}'", name));
  return std::make_unique<RecordedBackend>(name);
}

std::string named_backend_choices() {
  std::string s;
  for (auto& [n, d] : builtin_backends())
    if (n.rfind("mutant:", 0) != 0) s += (s.empty() ? "" : ", ") + n;
  return s + ", mutant:<fault>";
}

std::unique_ptr<Backend> make_named_backend(const std::string& name, const BackendOptions& opt) {
  bool known = is_backend_spec(name);
  for (auto& [n, d] : builtin_backends()) known = known || n == name;
  if (!known) throw std::invalid_argument(fmt::format("unknown backend '{}' (built in: {})", name, named_backend_choices()));
  return make_backend(name, opt);
}

bool is_reserved_backend_name(const std::string& name) {
  if (name.find(':') != std::string::npos) return true;
  for (auto& [n, d] : builtin_backends())
    if (n == name) return true;
  return false;
}

std::vector<std::string> default_backends() { return {"reference", "cpu"}; }

std::vector<std::string> mutant_names() {
  std::vector<std::string> v;
  for (const MutantDef* m : ops::mutants()) v.emplace_back(m->name);
  return v;
}

std::vector<std::pair<std::string, std::string>> builtin_backends() {
  std::vector<std::pair<std::string, std::string>> v;
  for (auto& n : default_backends()) v.emplace_back(n, make_backend(n)->description());
  v.emplace_back("cuda", make_backend("cuda")->description());  // not default: needs a device
  for (auto& n : mutant_names()) v.emplace_back("mutant:" + n, make_backend("mutant:" + n)->description());
  v.emplace_back("onednn", make_backend("onednn")->description());
  v.emplace_back("plugin:PATH", "a C-ABI plugin (normcheck_plugin.h), run in a worker process");
  v.emplace_back("cmd:COMMAND", "an external worker process speaking JSON lines + .npy files (README)");
  return v;
}

}  // namespace normcheck
