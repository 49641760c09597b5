#include "cli/bench_command.hpp"

#include <omp.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backends/external.hpp"  // make_onednn_backend (the peer)
#include "cli/backend_options.hpp"
#include "ops/common/cpu_rows_fast.hpp"
#include "ops/reference.hpp"
#include "ops/registry.hpp"
#include "run/resolve.hpp"
#include "spec/sample.hpp"

namespace normcheck::cli {

struct BenchCommand {
  CLI::App* sub = nullptr;
  std::vector<std::string> backend;
  std::string op = "layer_norm", dtype = "f32", shape = "4096x4096", format = "table", reference_path = "auto";
  int threads = 0, warmup = 2, repeats = 10;
  bool reference = false;
  BackendOptions limits = [] {
    BackendOptions o;
    o.timeout_s = 600;
    return o;
  }();
};

std::shared_ptr<BenchCommand> add_bench_command(CLI::App& app) {
  auto b = std::make_shared<BenchCommand>();
  b->sub = app.add_subcommand("bench", "throughput of a backend (GB/s, and the ratio to a copy of the same bytes in the same run) or of the reference (elements per CPU-second)");
  b->sub->add_option("--backend,-b", b->backend, "the backend to time (default cpu): any of `normcheck backends`, plugin:PATH, cmd:COMMAND")->allow_extra_args(false);
  b->sub->add_option("--op", b->op, "the op (default layer_norm); a comma-separated list measures each");
  b->sub->add_option("--dtype", b->dtype, "data, parameter and output dtype (default f32); a comma-separated list measures each");
  b->sub->add_option("--shape", b->shape, "ROWSxWIDTH: normalization groups and values per group (default 4096x4096); a comma-separated list measures each");
  b->sub->add_option("--threads", b->threads, "OpenMP threads for the built-in kernels, oneDNN and the copy (default: OpenMP's default)")->check(CLI::Range(1, 1024));
  b->sub->add_option("--warmup", b->warmup, "untimed runs first (default 2)")->check(CLI::Range(0, 1000));
  b->sub->add_option("--repeats", b->repeats, "timed runs; min and median reported (default 10)")->check(CLI::Range(1, 100000));
  b->sub->add_flag("--reference", b->reference, "time the exact reference instead (elements per CPU-second, rows left to MPFR)");
  b->sub->add_option("--reference-path", b->reference_path, "with --reference: auto (the certified fast path, MPFR where it cannot decide) | mpfr");
  add_backend_options(b->sub, b->limits);
  b->sub->add_option("--format", b->format, "table | json");
  return b;
}

namespace {

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

/// Wall and CPU seconds of each timed run of f, after `warmup` untimed ones.
struct Timing {
  std::vector<double> wall, cpu;
  double min() const { return *std::min_element(wall.begin(), wall.end()); }
  double median() const {
    std::vector<double> w = wall;
    std::sort(w.begin(), w.end());
    return w.size() % 2 ? w[w.size() / 2] : 0.5 * (w[w.size() / 2 - 1] + w[w.size() / 2]);
  }
  double cpu_median() const {
    std::vector<double> c = cpu;
    std::sort(c.begin(), c.end());
    return c[c.size() / 2];
  }
};

Timing time_runs(int warmup, int repeats, const std::function<void()>& f) {
  for (int i = 0; i < warmup; ++i) f();
  Timing t;
  for (int i = 0; i < repeats; ++i) {
    const double c0 = cpu_seconds();
    const auto w0 = std::chrono::steady_clock::now();
    f();
    t.wall.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count());
    t.cpu.push_back(cpu_seconds() - c0);
  }
  return t;
}

/// The bytes a backend moves for p: every input read once, every required output written once.
std::size_t bytes_moved(const Problem& p, const Outputs& out) {
  std::size_t n = 0;
  for (const auto& [name, t] : p.inputs) n += t.nbytes();
  for (const auto& [name, t] : out)
    if (!is_optional_output(p, name)) n += t.nbytes();
  return n;
}

/// Elements of the required outputs that are NaN (finite inputs give finite outputs).
std::int64_t nan_elements(const Problem& p, const Outputs& out) {
  std::int64_t bad = 0;
  for (const auto& [name, t] : out)
    if (!is_optional_output(p, name))
      for (std::int64_t i = 0; i < t.size(); ++i) bad += std::isnan(t.get(i));
  return bad;
}

int fail(const std::string& msg, int rc) {
  fmt::print(stderr, "normcheck: bench: {}\n", msg);
  return rc;
}


/// The comma-separated items of a list option ("a,b,c"), each without surrounding blanks;
/// an empty item is an error.
std::optional<std::vector<std::string>> items_of(const std::string& list) {
  std::vector<std::string> v;
  for (std::size_t i = 0; i <= list.size();) {
    const std::size_t e = std::min(list.find(',', i), list.size());
    std::string item = list.substr(i, e - i);
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (item.empty()) return std::nullopt;
    v.push_back(std::move(item));
    i = e + 1;
  }
  return v;
}

/// One measurement: the op, dtype and shape of one combination of the lists.
struct Point {
  Op op;
  DType dt;
  std::string op_name, dtype_name, shape;
  std::int64_t rows = 0, width = 0;
};

/// Measures one point with backend `be` (null with --reference): prints its table lines
/// (format table) and fills j (a failure's message in j["error"] too); the exit code as
/// run_bench_command's.
/// pt's problem (the op's default convention, normal data) with `rows` rows; UsageError
/// where the op cannot be drawn at that dtype and width.
ValidProblem draw_point(const Point& pt, std::int64_t rows) {
  Dims dims;
  dims.rows = rows;
  dims.width = pt.width;
  dims.x = dims.param = pt.dt;
  dims.default_convention = true;
  try {
    return draw_problem(pt.op, dims);
  } catch (const SpecError& e) {
    throw UsageError(fmt::format("bench: {} cannot be drawn at {} {}: {}", pt.op_name, pt.dtype_name, pt.shape, e.what()));
  }
}

int bench_one(const BenchCommand& b, const Point& pt, Backend* be_ptr, nlohmann::json& j) {
  ValidProblem vp = draw_point(pt, pt.rows);
  const Problem& p = *vp;
  const int threads = b.threads > 0 ? b.threads : omp_get_max_threads();
  const std::int64_t elements = p.x().size();
  j = {{"op", pt.op_name}, {"dtype", pt.dtype_name}, {"shape", shape_str(p.x().shape())}, {"threads", threads},
       {"warmup", b.warmup}, {"repeats", b.repeats}};

  if (b.reference) {
    reference::set_fast_path(b.reference_path == "auto");
    const auto before = reference::fast_path_counts();
    // The op's reference itself, not evaluate_exact (which keeps the result in vp).
    const Timing t = time_runs(0, b.repeats, [&] { (void)p.op.def().reference(vp); });
    const auto after = reference::fast_path_counts();
    const double per_run = static_cast<double>(b.repeats);
    const double certified = static_cast<double>(after.certified - before.certified) / per_run,
                 recomputed = static_cast<double>(after.recomputed - before.recomputed) / per_run;
    const double eps_cpu = static_cast<double>(elements) / t.cpu_median();
    j["reference"] = {{"path", b.reference_path}, {"elements", elements}, {"wall_s_min", t.min()}, {"wall_s_median", t.median()},
                      {"cpu_s_median", t.cpu_median()}, {"elements_per_cpu_s", eps_cpu},
                      {"rows_certified", certified}, {"rows_recomputed_mpfr", recomputed}};
    if (b.format != "json") {
      fmt::print("reference ({}) {} {} {}: {:.3g} elements per CPU-second ({:.3g} CPU-s, {:.3g} s wall median of {})\n", b.reference_path,
                 pt.op_name, pt.dtype_name, shape_str(p.x().shape()), eps_cpu, t.cpu_median(), t.median(), b.repeats);
      if (certified + recomputed > 0)
        fmt::print("  rows: {:.0f} decided by the certified double-double path, {:.0f} recomputed in MPFR\n", certified, recomputed);
    }
    return 0;
  }

  Backend& be = *be_ptr;
  auto failed = [&](const std::string& msg, int rc) {
    j["error"] = msg;
    return fail(fmt::format("{} {} {}: {}", pt.op_name, pt.dtype_name, pt.shape, msg), rc);
  };
  if (auto why = be.unsupported(vp, {})) return failed(fmt::format("{} does not run this problem: {}", be.name(), *why), 3);

  // One run first, checked: a timing of a kernel that leaves NaN in its output means nothing.
  Outputs out;
  try {
    out = be.run(vp, {});
  } catch (const std::exception& e) {
    return failed(fmt::format("{}: {}", be.name(), e.what()), 3);
  }
  const std::int64_t bad = nan_elements(p, out);
  const std::size_t bytes = bytes_moved(p, out);
  auto time_backend = [&](Backend& bk) {
    return time_runs(b.warmup, b.repeats, [&] { out = bk.run(vp, {}); });
  };
  Timing tk;
  try {
    tk = time_backend(be);
  } catch (const std::exception& e) {
    return failed(fmt::format("{} (in a timed run): {}", be.name(), e.what()), 3);
  }

  // The peer in the same run: a copy of bytes / 2 into another buffer (reads and writes the
  // same number of bytes as the backend), on the same threads, in 1 MiB chunks.
  const std::size_t half = bytes / 2;
  std::vector<unsigned char> src(half, 1), dst(half, 0);
  const std::int64_t chunk = 1 << 20, chunks = static_cast<std::int64_t>((half + chunk - 1) / chunk);
  const Timing tc = time_runs(b.warmup, b.repeats, [&] {
#pragma omp parallel for schedule(static)
    for (std::int64_t c = 0; c < chunks; ++c) {
      const std::size_t off = static_cast<std::size_t>(c * chunk), n = std::min<std::size_t>(chunk, half - off);
      std::memcpy(dst.data() + off, src.data() + off, n);
    }
  });
  auto gbs = [](std::size_t by, double s) { return static_cast<double>(by) / s / 1e9; };
  j["backend"] = {{"name", be.name()}, {"identity", be.identity()}, {"bytes", bytes}, {"wall_s_min", tk.min()},
                  {"wall_s_median", tk.median()}, {"cpu_s_median", tk.cpu_median()}, {"gb_per_s", gbs(bytes, tk.min())},
                  {"nan_outputs", bad}};
  j["copy"] = {{"bytes", 2 * half}, {"wall_s_min", tc.min()}, {"gb_per_s", gbs(2 * half, tc.min())}};
  j["ratio_to_copy"] = tc.min() / tk.min();
  // What the timing depends on where the fast row kernel runs (layer_norm/rms_norm with
  // f32/bf16/f16 data; NORMCHECK_CPU_TIER and the NORMCHECK_NO_* switches change it).
  if (be.name() == "cpu" && (p.op == Op::layer_norm || p.op == Op::rms_norm) && p.conv.direction == Direction::forward &&
      kernels::cpu::detail::fast_rows_take(p)) {
    namespace k = kernels::cpu::detail;
    j["cpu_row_kernel"] = {{"tier", k::cpu_tier_name()}, {"f16_conversion", k::half_conversion_name()},
                           {"bf16_conversion", k::bf16_conversion_instruction_available() ? "AVX512-BF16" : "integer formula"},
                           {"streaming_stores", k::stream_stores_available()}, {"summary", k::cpu_row_kernel_summary()}};
  }

  // oneDNN's layer normalization on the same problem and threads, when built in and it runs it.
  std::optional<double> onednn_ratio;
  if (be.name() != "onednn" && p.op == Op::layer_norm) {
    // Timed as the cpu backend is: y allocated, not filled with poison (make_onednn_backend).
    auto dnnl = make_onednn_backend(false);
    if (dnnl && !dnnl->unavailable() && !dnnl->unsupported(vp, {})) {
      try {
        const Timing td = time_backend(*dnnl);
        onednn_ratio = td.min() / tk.min();
        j["onednn"] = {{"identity", dnnl->identity()}, {"wall_s_min", td.min()}, {"gb_per_s", gbs(bytes, td.min())}};
        j["ratio_to_onednn"] = *onednn_ratio;
      } catch (const std::exception& e) {  // the peer's failure leaves the backend's figures standing
        j["onednn"] = {{"identity", dnnl->identity()}, {"error", e.what()}};
        fmt::print(stderr, "normcheck: bench: {} {} {}: oneDNN: {}\n", pt.op_name, pt.dtype_name, pt.shape, e.what());
      }
    }
  }
  if (b.format != "json") {
    fmt::print("{} {} {} {} on {} thread{}: {:.3g} GB/s (min {:.3g} ms, median {:.3g} ms, {:.3g} CPU-ms; {} bytes)\n", be.name(),
               pt.op_name, pt.dtype_name, shape_str(p.x().shape()), threads, threads == 1 ? "" : "s", gbs(bytes, tk.min()), 1e3 * tk.min(),
               1e3 * tk.median(), 1e3 * tk.cpu_median(), bytes);
    fmt::print("  copy of the same bytes: {:.3g} GB/s; ratio to copy {:.3f}\n", gbs(2 * half, tc.min()), tc.min() / tk.min());
    if (j.contains("cpu_row_kernel")) {
      fmt::print("  cpu row kernel: {}\n", j["cpu_row_kernel"]["summary"].get<std::string>());
    }
    if (onednn_ratio) fmt::print("  oneDNN ({}): {:.3g} GB/s; ratio to oneDNN {:.3f}\n", j["onednn"]["identity"].get<std::string>(), gbs(bytes, j["onednn"]["wall_s_min"].get<double>()), *onednn_ratio);
  }
  if (bad) return failed(fmt::format("{}: {} output elements are NaN for finite inputs: the timing describes a broken kernel", be.name(), bad), 1);
  return 0;
}

}  // namespace

std::optional<int> run_bench_command(const BenchCommand& b) {
  if (!b.sub || !*b.sub) return std::nullopt;
  if (b.format != "table" && b.format != "json") return fail(fmt::format("--format: unknown '{}' (table | json)", b.format), 2);
  if (b.reference_path != "auto" && b.reference_path != "mpfr")
    return fail(fmt::format("--reference-path: unknown '{}' (auto | mpfr)", b.reference_path), 2);
  // Every item of every list is checked before anything is measured.
  const auto op_names = items_of(b.op), dtype_names = items_of(b.dtype), shapes = items_of(b.shape);
  if (!op_names) return fail(fmt::format("--op: '{}' has an empty item (OP[,OP...])", b.op), 2);
  if (!dtype_names) return fail(fmt::format("--dtype: '{}' has an empty item (DTYPE[,DTYPE...])", b.dtype), 2);
  if (!shapes) return fail(fmt::format("--shape: '{}' has an empty item (ROWSxWIDTH[,ROWSxWIDTH...])", b.shape), 2);
  std::vector<Point> points;
  for (const std::string& on : *op_names) {
    const auto op = ops::find(on);
    if (!op) return fail(fmt::format("--op: unknown op '{}' ({})", on, ops::choices()), 2);
    for (const std::string& dn : *dtype_names) {
      const auto dt = parse_dtype(dn);
      if (!dt) return fail(fmt::format("--dtype: unknown dtype '{}'", dn), 2);
      for (const std::string& sh : *shapes) {
        long long rows = 0, width = 0;
        char x = 0, extra = 0;
        if (std::sscanf(sh.c_str(), "%lld%c%lld%c", &rows, &x, &width, &extra) != 3 || (x != 'x' && x != 'X') || rows < 1 || width < 1)
          return fail(fmt::format("--shape: '{}' is not ROWSxWIDTH with both >= 1 (e.g. 8192x4096)", sh), 2);
        if (rows > (std::int64_t{1} << 36) / width)  // Tensor's limit (core/tensor.cpp)
          return fail(fmt::format("--shape: '{}' has more than 2^36 elements", sh), 2);
        points.push_back(Point{*op, *dt, on, dn, sh, rows, width});
        (void)draw_point(points.back(), std::min<std::int64_t>(rows, 4));  // a point the op cannot be drawn at: exit 2 now, not midway
      }
    }
  }
  std::optional<BackendSet> bs;
  Backend* be = nullptr;
  if (!b.reference) {
    for (const auto& name : b.backend)
      if (name == "reference")
        return fail("--backend reference returns the run's ground truth, evaluated once per problem: time the reference with --reference", 2);
    bs = resolve_backends(b.backend.empty() ? std::vector<std::string>{"cpu"} : b.backend, {}, b.limits, /*strict=*/true);
    if (bs->backends.size() != 1) return fail(fmt::format("give one backend (--backend B), not {}", bs->backends.size()), 2);
    be = bs->backends.front().get();
    if (auto why = be->unavailable()) return fail(*why, 3);
  }
  if (b.threads > 0) omp_set_num_threads(b.threads);

  // One point: its report as before. Several: each point's lines as it is measured (the
  // progress of a long run), then a summary table; JSON {"runs": [...]} in the order measured.
  // A point that fails (the backend cannot run it, an error in a timed run, a problem too
  // large to allocate) keeps its error and the next is measured. The exit code is the worst
  // point's, as `run` ranks them: 2 (usage) over 3 (not run) over 1 (NaN output) over 0.
  auto rank = [](int code) { return code == 2 ? 3 : code == 3 ? 2 : code; };
  int rc = 0;
  nlohmann::json runs = nlohmann::json::array();
  for (const Point& pt : points) {
    nlohmann::json j{{"op", pt.op_name}, {"dtype", pt.dtype_name}, {"shape", pt.shape}};
    int r = 0;
    try {
      r = bench_one(b, pt, be, j);
    } catch (const Error& e) {
      j["error"] = e.what();
      r = e.exit_code;
      fail(fmt::format("{} {} {}: {}", pt.op_name, pt.dtype_name, pt.shape, e.what()), r);
    } catch (const std::exception& e) {
      j["error"] = e.what();
      r = 3;
      fail(fmt::format("{} {} {}: {}", pt.op_name, pt.dtype_name, pt.shape, e.what()), r);
    }
    if (rank(r) > rank(rc)) rc = r;
    runs.push_back(std::move(j));
  }
  if (b.format == "json") {
    fmt::print("{}\n", points.size() == 1 ? runs[0].dump(2) : nlohmann::json{{"runs", runs}}.dump(2));
    return rc;
  }
  if (points.size() > 1) {
    // Each row: the point's "op dtype shape", then its figures or its error.
    auto head = [](const nlohmann::json& j) {
      return fmt::format("{:<20} {:<8} {:<16}", j["op"].get<std::string>(), j["dtype"].get<std::string>(), j["shape"].get<std::string>());
    };
    const char* needed = b.reference ? "reference" : "ratio_to_copy";
    fmt::print("\n");
    if (b.reference) fmt::print("{:<20} {:<8} {:<16} {:>14} {:>10} {:>10}\n", "op", "dtype", "shape", "elements/CPU-s", "certified", "MPFR");
    else fmt::print("{:<20} {:<8} {:<16} {:>8} {:>10} {:>9} {:>10}\n", "op", "dtype", "shape", "GB/s", "copy GB/s", "to copy", "to oneDNN");
    for (const auto& j : runs) {
      if (!j.contains(needed)) {
        fmt::print("{} {}\n", head(j), j.value("error", std::string("not measured")));
      } else if (b.reference) {
        const nlohmann::json& r = j["reference"];
        fmt::print("{} {:>14.3g} {:>10.0f} {:>10.0f}\n", head(j), r["elements_per_cpu_s"].get<double>(), r["rows_certified"].get<double>(),
                   r["rows_recomputed_mpfr"].get<double>());
      } else {
        fmt::print("{} {:>8.3g} {:>10.3g} {:>9.3f} {:>10}{}\n", head(j), j["backend"]["gb_per_s"].get<double>(), j["copy"]["gb_per_s"].get<double>(),
                   j["ratio_to_copy"].get<double>(), j.contains("ratio_to_onednn") ? fmt::format("{:.3f}", j["ratio_to_onednn"].get<double>()) : "-",
                   j["backend"]["nan_outputs"].get<std::int64_t>() > 0 ? "  NaN OUTPUTS: a broken kernel" : "");
      }
    }
  }
  return rc;
}

}  // namespace normcheck::cli
