#include "checks/dump.hpp"

#include <cctype>
#include <filesystem>

#include <fmt/format.h>

#include "core/tensor_file.hpp"

namespace normcheck {

ResultObserver failure_dumper(std::string dir_root) {
  return [root = std::move(dir_root)](CaseResult& r, const Evaluation* e) {
    if (!e || r.status != Status::failed) return;
    const Problem& p = *e->problem;
    namespace fs = std::filesystem;
    std::string bn = fmt::format("{}__{}", e->cs.name, r.backend);
    for (char& ch : bn)
      if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_' && ch != '-' && ch != '.') ch = '_';
    const fs::path dir = fs::path(root) / bn;
    const std::string primary = primary_output(p);
    try {
      fs::remove_all(dir);
      fs::create_directories(dir);
      for (auto& [name, t] : p.inputs) write_npy((dir / (name + ".npy")).string(), t.to_doubles(), t.shape());
      const Tensor& y = e->outputs.at(primary);
      const ExactOutput& ry = e->exact.at(primary);
      write_npy((dir / (primary + ".npy")).string(), y.to_doubles(), y.shape());  // y.npy (dx.npy backward)
      write_npy((dir / "exact.npy").string(), ry.exact_f64(), y.shape());
      write_npy((dir / "exact_rounded.npy").string(), ry.rounded().to_doubles(), y.shape());
      for (auto& [name, ro] : e->exact) {  // the other outputs: out_<name>.npy, out_<name>_exact.npy
        if (name == primary || !e->outputs.count(name)) continue;  // an optional output not returned
        const Tensor& t = e->outputs.at(name);
        write_npy((dir / ("out_" + name + ".npy")).string(), t.to_doubles(), t.shape());
        write_npy((dir / ("out_" + name + "_exact.npy")).string(), ro.exact_f64(), t.shape());
      }
    } catch (const std::exception& ex) {
      r.checks.push_back({"dump", Status::skipped, fmt::format("could not write {}: {}", dir.string(), ex.what())});
    }
  };
}

}  // namespace normcheck
