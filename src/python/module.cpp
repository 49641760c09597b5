// normcheck._normcheck: the C++ core as a Python extension module (issue 14; README
// "Python"). The same reference, cases, checks, report and fuzzer as the CLI; the Python
// side (python/normcheck/__init__.py) only moves arrays in and out as .npy bytes (the
// worker protocol's encoding: bf16 and fp8 as float32 values beside their dtype name) and
// calls the user's function. Nothing numerical is implemented here.
//
// A user's function is a backend like any other: PythonBackend is an IsolatedBackend whose
// "worker" is a Python callable, handed protocol 2's request (worker_request) and each
// input's storage with its strides and offset, exactly what a cmd: worker receives, so an
// adapter's evaluate(req, inputs) serves both paths. The runner evaluates with the GIL
// released; PythonBackend takes it back for each call.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backends/isolated.hpp"
#include "backends/worker_protocol.hpp"
#include "cases/case.hpp"
#include "checks/runner.hpp"
#include "core/tensor_file.hpp"
#include "ops/presets.hpp"
#include "ops/reference.hpp"
#include "ops/registry.hpp"
#include "report/model.hpp"
#include "report/report.hpp"
#include "run/expectations.hpp"
#include "run/fuzz.hpp"
#include "run/select.hpp"
#include "spec/convention.hpp"
#include "spec/sample.hpp"

namespace py = pybind11;
using nlohmann::json;

namespace normcheck::python {

namespace {

/// .npy bytes from Python -> a Tensor of `dtype` (parse_npy's checks: a bf16 or fp8 value
/// that is not one of the format's values is refused, as for a cmd: worker's output file).
Tensor tensor_of(const py::handle& bytes, const std::string& dtype, const std::string& name) {
  const std::string b = bytes.cast<std::string>();
  NpyReadOptions opt;
  opt.as = parse_dtype(dtype);
  if (!opt.as) throw UsageError(fmt::format("{}: unknown dtype '{}'", name, dtype));
  return parse_npy(b, name, opt);
}

/// A Tensor -> .npy bytes for Python (bf16, fp8 as float32 values).
py::bytes npy_of(const Tensor& t) { return py::bytes(npy_bytes(t, NpyBf16::as_f32)); }

/// A float64 tensor of `values` in `shape`, as .npy bytes.
py::bytes npy_f64(const std::vector<double>& values, const Shape& shape) {
  Tensor t(DType::f64, shape);
  if (!values.empty()) std::memcpy(t.data(), values.data(), values.size() * sizeof(double));
  return npy_of(t);
}

/// A Python callable as a backend. `handler(request_json: str, inputs: dict[str, bytes])`
/// returns ("outputs", {name: (npy bytes, dtype)}) | ("skip", reason) | ("error", message)
/// (python/normcheck/_backend.py builds it around the user's function).
class PythonBackend final : public detail::IsolatedBackend {
 public:
  PythonBackend(py::object handler, std::string name, bool backward)
      : detail::IsolatedBackend(BackendOptions{}), handler_(std::move(handler)), name_(std::move(name)), backward_(backward) {}
  ~PythonBackend() override {
    py::gil_scoped_acquire gil;
    handler_ = py::object();
  }
  std::string name() const override { return name_; }
  std::string description() const override { return "a Python function, in process"; }
  bool supports_backward() const override { return backward_; }
  bool takes_views() const override { return true; }

 protected:
  detail::Evaluation evaluate(const Problem& p, detail::Clock::time_point) override {
    detail::Evaluation e;
    py::gil_scoped_acquire gil;
    try {
      json req = detail::worker_request(p, ++id_, 2);
      py::dict inputs;
      for (const auto& [name, t] : p.inputs) inputs[py::str(name)] = npy_of(detail::view_storage(t, p.layout, req["inputs"][name]));
      py::tuple r = handler_(req.dump(), inputs).cast<py::tuple>();
      const auto kind = r[0].cast<std::string>();
      if (kind == "skip") {
        e.kind = detail::Evaluation::Kind::skip;
        e.message = r[1].cast<std::string>();
      } else if (kind == "error") {
        e.message = "python: " + r[1].cast<std::string>();
      } else {
        for (auto [k, v] : r[1].cast<py::dict>()) {
          const auto name = k.cast<std::string>();
          const py::tuple o = v.cast<py::tuple>();
          e.outputs[name] = tensor_of(o[0], o[1].cast<std::string>(), "output " + name);
        }
        e.kind = detail::Evaluation::Kind::outputs;
      }
    } catch (py::error_already_set& ex) {
      if (ex.matches(PyExc_KeyboardInterrupt)) throw;
      e.kind = detail::Evaluation::Kind::error;
      e.message = fmt::format("python: {}", ex.what());
    } catch (const std::exception& ex) {
      e.kind = detail::Evaluation::Kind::error;
      e.outputs.clear();
      e.message = fmt::format("python: {}", ex.what());
    }
    return e;
  }

 private:
  py::object handler_;
  std::string name_;
  bool backward_;
  long id_ = 0;
};

/// A backend returning given outputs (assert_close's "actual").
class GivenBackend final : public Backend {
 public:
  GivenBackend(Outputs out, std::string name) : out_(std::move(out)), name_(std::move(name)) {}
  std::string name() const override { return name_; }
  std::string description() const override { return "outputs given to assert_close"; }
  std::optional<std::string> unsupported(const ValidProblem&, const Recorded&) const override { return std::nullopt; }
  bool supports_backward() const override { return true; }
  Outputs run(const ValidProblem&, const Recorded&) override { return out_; }

 private:
  Outputs out_;
  std::string name_;
};

/// The report as Python values: verdict, texts, and one entry per case record.
py::dict report_dict(const Report& rep) {
  const Verdict v = judge(rep);
  py::dict d;
  d["exit_code"] = v.exit_code;
  d["problems"] = v.problems;
  d["table"] = format_table(rep, false);
  d["details"] = format_details(rep, false);
  d["json"] = to_json(rep);
  const BackendTally t = rep.backends.empty() ? BackendTally{} : tally(rep, rep.backends.front().name);
  d["counts"] = py::dict(py::arg("runs") = t.runs, py::arg("evaluated") = t.evaluated, py::arg("passed") = t.passed,
                         py::arg("failed") = t.failed, py::arg("expected_failures") = t.expected_failures,
                         py::arg("unexpected_passes") = t.unexpected_passes, py::arg("skipped") = t.skipped,
                         py::arg("skipped_checks") = t.skipped_checks, py::arg("mistrusted") = t.mistrusted,
                         py::arg("errors") = t.errors);
  py::list cases;
  for (const auto& c : rep.cases) {
    py::dict one;
    one["name"] = c.name;
    one["layer"] = c.layer;
    one["op"] = c.op;
    one["dtype"] = c.dtype;
    one["status"] = std::string(to_string(c.status));
    one["reason"] = c.reason;
    one["expected_failure"] = c.expected_failure;
    one["repro"] = c.repro;
    // The CLI's failure block of this case alone.
    Report only = rep;
    only.cases = {c};
    only.stale.clear();
    one["details"] = format_details(only, false);
    cases.append(one);
  }
  d["cases"] = cases;
  return d;
}

RunInfo run_info(const std::string& suite, std::int64_t suite_cases, const std::string& backend) {
  RunInfo info;
  info.version = NORMCHECK_VERSION;
  info.suite = suite;
  info.suite_cases = suite_cases;
  BackendRecord rec;
  rec.name = backend;
  info.backends = {rec};
  info.fingerprint = fingerprint(suite + "\n" + backend);
  return info;
}

/// A selection of cases, read once (select_cases: the CLI's paths, --tier, --filter, --case).
class Suite {
 public:
  Suite(const std::vector<std::string>& paths, const std::string& tier, const std::vector<std::string>& filters,
        const std::vector<std::string>& names) {
    SelectOptions o;
    o.paths = paths;
    o.tier = tier;
    o.filters = filters;
    o.case_names = names;
    o.shard = "0/1";  // a pytest-xdist worker's environment must not shard the selection
    sel_ = select_cases(o);
  }

  /// (name, layer, op, direction) of every selected case, in the run's order.
  std::vector<std::tuple<std::string, std::string, std::string, std::string>> cases() const {
    std::vector<std::tuple<std::string, std::string, std::string, std::string>> v;
    for (const auto& c : sel_.cases)
      v.emplace_back(c.name, c.layer, std::string(to_string(c.problem.op)), std::string(to_string(c.problem.conv.direction)));
    return v;
  }

  /// Runs the selected cases named in `names` (all when empty; each must exist) on the
  /// handler; expectations applied when `expect_failures` names a file.
  py::dict run(py::object handler, const std::string& backend, bool backward, const std::vector<std::string>& names,
               const std::string& expect_failures) {
    std::vector<Case> chosen;
    if (names.empty()) {
      chosen = sel_.cases;
    } else {
      for (const auto& n : names) {
        auto it = std::find_if(sel_.cases.begin(), sel_.cases.end(), [&](const Case& c) { return c.name == n; });
        if (it == sel_.cases.end()) throw UsageError(fmt::format("no selected case is named '{}'", n));
        chosen.push_back(*it);
      }
    }
    std::vector<Expectation> expectations;
    if (!expect_failures.empty()) expectations = read_expectations(expect_failures);
    std::vector<std::unique_ptr<Backend>> backends;
    backends.push_back(std::make_unique<PythonBackend>(std::move(handler), backend, backward));
    std::vector<CaseResult> results;
    {
      py::gil_scoped_release nogil;
      RunOptions opt;
      opt.program = "normcheck";
      results = run_cases(chosen, backends, opt);
    }
    Report rep = make_report(results, run_info(sel_.suite, sel_.suite_cases, backend));
    if (!expect_failures.empty()) apply_expectations(rep, expectations, sel_.names_in_files, expect_failures);
    py::dict d = report_dict(rep);
    {
      py::gil_scoped_release nogil;
      backends.clear();  // the PythonBackend's destructor takes the GIL itself
    }
    return d;
  }

 private:
  Selection sel_;
};

/// A Problem from Python's values: the op, its inputs (name -> (npy bytes, dtype)), the
/// convention (a preset name and/or keys as JSON; keys override the preset, as in a case
/// file), the output dtype (default: the primary input's) and the layout. normalized_shape
/// defaults to x's last dim, as in a case file. Throws SpecError / UsageError naming the field.
ValidProblem problem_of(const std::string& op_name, const py::dict& inputs, const std::string& preset,
                        const std::string& convention_json, const std::string& out_dtype, const std::string& layout) {
  const auto op = ops::find(op_name);
  if (!op) throw UsageError(fmt::format("op: unknown op '{}' ({})", op_name, ops::choices()));
  Problem p;
  p.op = *op;
  p.conv = default_convention(*op);
  for (auto [k, v] : inputs) {
    const auto name = k.cast<std::string>();
    const py::tuple t = v.cast<py::tuple>();
    p.inputs[name] = tensor_of(t[0], t[1].cast<std::string>(), "inputs." + name);
  }
  const std::string px(primary_input(*op));
  if (!p.input(px)) throw SpecError("inputs." + px, fmt::format("missing input {}", px));
  const json conv = json::parse(convention_json);
  if (!preset.empty()) {
    const Preset* pr = find_preset(preset);
    if (!pr) throw UsageError("convention: " + unknown_preset_message(preset));
    if (pr->op != p.op)
      throw UsageError(fmt::format("convention: preset {} is a convention of {}; the op is {}", preset, to_string(pr->op), op_name));
    apply_preset(*pr, p.x().dtype(), p.conv);
  }
  read_convention(JsonSource(conv, "convention"), p.op, p.conv);
  if (!conv.contains("normalized_shape") && !p.x().shape().empty()) p.conv.normalized_shape = Shape{p.x().shape().back()};
  p.out_dtype = p.x().dtype();
  if (!out_dtype.empty()) {
    const auto d = parse_dtype(out_dtype);
    if (!d) throw UsageError(fmt::format("out_dtype: unknown dtype '{}'", out_dtype));
    p.out_dtype = *d;
  }
  if (!layout.empty()) {
    const auto l = parse_memory_layout(layout);
    if (!l) throw UsageError(fmt::format("layout: unknown layout '{}'", layout));
    p.layout = *l;
  }
  return validate(std::move(p));
}

/// reference(): every output of the exact reference: (rounded npy, exact float64 npy,
/// condition magnitudes npy, dtype) by name, and the convention checked (JSON).
py::dict reference(const std::string& op, const py::dict& inputs, const std::string& preset, const std::string& conv,
                   const std::string& out_dtype) {
  const ValidProblem p = problem_of(op, inputs, preset, conv, out_dtype, "");
  ExactOutputs ex;
  {
    py::gil_scoped_release nogil;
    ex = reference::evaluate_exact(p);
  }
  py::dict out;
  for (const auto& [name, e] : ex) {
    const Shape& s = e.shape;
    out[py::str(name)] = py::make_tuple(npy_of(e.rounded()), npy_f64(e.exact_f64(), s),
                                        e.cond.empty() ? py::object(py::none()) : py::object(npy_f64(e.cond.to_doubles(), s)),
                                        std::string(dtype_name(e.dtype)));
  }
  py::dict d;
  d["outputs"] = out;
  d["convention"] = convention_json(p->conv, p->op).dump();
  return d;
}

/// assert_close(): judges `actual` (name -> (npy, dtype)) as the runner judges a backend's
/// outputs on the problem (the default gate unless `gate` is given as a case file's
/// expect.gate); returns the report (one case).
py::dict assert_close(const std::string& op, const py::dict& inputs, const std::string& preset, const std::string& conv,
                      const std::string& out_dtype, const std::string& layout, const py::dict& actual, const std::string& name) {
  const ValidProblem p = problem_of(op, inputs, preset, conv, out_dtype, layout);
  // Each actual output is read as its dtype in the problem (an empty dtype: output_dtype),
  // which must hold its values exactly.
  Outputs given;
  const auto shapes = output_shapes(*p);
  for (auto [k, v] : actual) {
    const auto n = k.cast<std::string>();
    if (!shapes.count(n)) throw UsageError(fmt::format("actual.{}: {} has no output '{}'", n, op, n));
    const py::tuple t = v.cast<py::tuple>();
    const auto dt = t[1].cast<std::string>();
    given[n] = tensor_of(t[0], dt.empty() ? std::string(dtype_name(output_dtype(*p, n))) : dt, "actual." + n);
  }
  std::vector<Case> cases{fuzz_case(p, name)};
  cases.front().file = "<assert_close>";
  cases.front().layer = std::string(to_string(p->op));
  std::vector<std::unique_ptr<Backend>> backends;
  backends.push_back(std::make_unique<GivenBackend>(std::move(given), "actual"));
  std::vector<CaseResult> results;
  {
    py::gil_scoped_release nogil;
    results = run_cases(cases, backends, RunOptions{});
  }
  return report_dict(make_report(results, run_info("assert_close", 1, "actual")));
}

/// fuzz(): the CLI's fuzz loop on a Python function; the text report of `normcheck fuzz`.
py::dict fuzz_fn(py::object handler, const std::string& backend, const std::vector<std::string>& op_names, std::uint64_t seed,
                 std::int64_t count, double budget_s, bool backward, std::int64_t max_width) {
  FuzzOptions opt;
  for (const auto& n : op_names) {
    const auto op = ops::find(n);
    if (!op) throw UsageError(fmt::format("op: unknown op '{}' ({})", n, ops::choices()));
    opt.ops.push_back(*op);
  }
  opt.seed = seed;
  opt.count = count;
  opt.budget_s = count > 0 ? 0 : budget_s;
  opt.backward = backward;
  opt.max_width = max_width;
  std::vector<std::unique_ptr<Backend>> backends;
  backends.push_back(std::make_unique<PythonBackend>(std::move(handler), backend, backward));
  FuzzReport rep;
  {
    py::gil_scoped_release nogil;
    rep = fuzz(backends, opt);
  }
  py::dict d;
  d["draws"] = rep.draws;
  d["evaluated"] = rep.evaluated;
  d["skipped"] = rep.skipped;
  d["skip_reasons"] = rep.skip_reasons;
  d["seconds"] = rep.seconds;
  py::list failures;
  for (const auto& f : rep.failures) {
    py::dict one;
    one["draw"] = f.draw;
    one["op"] = std::string(f.op.name());
    one["status"] = std::string(to_string(f.status));
    one["message"] = f.message;
    one["drawn"] = f.dims.str();
    one["shrunk"] = f.shrunk_dims.str();
    one["steps"] = f.steps;
    one["case_file"] = fuzz_case_file(f, backend, "");
    failures.append(one);
  }
  d["failures"] = failures;
  {
    py::gil_scoped_release nogil;
    backends.clear();
  }
  return d;
}

}  // namespace

}  // namespace normcheck::python

PYBIND11_MODULE(_normcheck, m) {
  using namespace normcheck::python;
  namespace nc = normcheck;
  m.doc() = "normcheck's C++ core (the exact reference, cases, checks, fuzzer); use the normcheck package";
  m.attr("__version__") = NORMCHECK_VERSION;
  // Exceptions: bad input (exit 2 in the CLI) -> ValueError with the CLI's message.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const nc::CaseError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const nc::UsageError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const nc::DumpError& e) {  // an array that is not what it is declared to be
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const nc::Error& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });
  m.def("output_names", [](const std::string& name) {
    // Every output name the op defines in either direction under some convention (the
    // names a function may return; a name outside them is a misspelling): the union over
    // drawn problems, forward and backward, default and drawn conventions.
    const auto op = nc::ops::find(name);
    if (!op) throw nc::UsageError(fmt::format("op: unknown op '{}' ({})", name, nc::ops::choices()));
    std::set<std::string> names;
    auto add = [&](std::map<std::string, nc::Shape> (*f)(const nc::Problem&), const nc::Problem& p) {
      if (f)
        for (const auto& kv : f(p)) names.insert(kv.first);
    };
    for (std::uint64_t seed = 1; seed <= 16; ++seed)
      for (bool backward : {false, true}) {
        if (backward && !op->def().has_backward()) continue;
        nc::Dims d;
        d.seed = seed;
        d.backward = backward;
        d.default_convention = seed == 1;
        try {
          const nc::ValidProblem p = nc::draw_problem(*op, d);
          add(op->def().outputs, *p);
          add(op->def().optional_outputs, *p);
          add(op->def().backward_outputs, *p);
        } catch (const nc::SpecError&) {
        }
      }
    return std::vector<std::string>(names.begin(), names.end());
  }, "every output name the op defines (forward, saved statistics, backward)");
  m.def("ops", [] {
    std::vector<std::string> v;
    for (const auto& op : nc::ops::all()) v.emplace_back(nc::to_string(op));
    return v;
  }, "the names of every op in the registry");
  py::class_<Suite>(m, "Suite")
      .def(py::init<const std::vector<std::string>&, const std::string&, const std::vector<std::string>&,
                    const std::vector<std::string>&>(),
           py::arg("paths"), py::arg("tier"), py::arg("filters"), py::arg("names"))
      .def("cases", &Suite::cases)
      .def("run", &Suite::run, py::arg("handler"), py::arg("backend"), py::arg("backward"), py::arg("names"),
           py::arg("expect_failures"));
  m.def("reference", &reference, py::arg("op"), py::arg("inputs"), py::arg("preset"), py::arg("convention"), py::arg("out_dtype"));
  m.def("assert_close", &assert_close, py::arg("op"), py::arg("inputs"), py::arg("preset"), py::arg("convention"),
        py::arg("out_dtype"), py::arg("layout"), py::arg("actual"), py::arg("name"));
  m.def("fuzz", &fuzz_fn, py::arg("handler"), py::arg("backend"), py::arg("ops"), py::arg("seed"), py::arg("count"),
        py::arg("budget_s"), py::arg("backward"), py::arg("max_width"));
}
