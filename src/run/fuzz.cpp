#include "run/fuzz.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ops/reference.hpp"
#include "ops/registry.hpp"
#include "spec/convention.hpp"

namespace normcheck {

namespace {

std::uint64_t mix(std::uint64_t a, std::uint64_t b) {
  std::uint64_t z = a * 0x9e3779b97f4a7c15ULL + b + 0x632be59bd9b4e019ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// Widths kernels split rows at: 2^k - 1, 2^k, 2^k + 1 (vectors, warps, blocks, tails).
std::vector<std::int64_t> power_widths(std::int64_t max_width) {
  std::vector<std::int64_t> v;
  for (std::int64_t p = 2; p / 2 <= max_width; p *= 2)
    for (std::int64_t w : {p - 1, p, p + 1})
      if (w >= 1 && w <= max_width) v.push_back(w);
  return v;
}

constexpr std::int64_t kPrimes[] = {97, 127, 131, 251, 257, 509, 521, 1021, 1031, 2039, 2053, 4093, 4099, 8191, 16381, 65521};
/// The most elements one draw holds: the exact reference costs ~2 us per element.
constexpr std::int64_t kMaxElements = 1 << 15;

struct Outcome {
  Status status = Status::passed;
  std::string message;
  std::string skip;
};

bool is_failure(Status s) { return s == Status::failed || s == Status::error; }

/// Runs one case on the backend (the default gate on every output).
Outcome evaluate(std::vector<std::unique_ptr<Backend>>& be, const Case& cs) {
  Outcome o;
  const auto results = run_cases({cs}, be, {});
  if (results.empty()) {
    o.status = Status::skipped;
    o.skip = "the backend does not apply to this problem";
    return o;
  }
  const CaseResult& r = results.front();
  o.status = r.status;
  if (r.status == Status::skipped) o.skip = r.reason;
  if (r.status == Status::error) o.message = r.reason;
  for (const auto& c : r.checks)
    if (c.status == Status::failed) {
      o.message = fmt::format("{}: {}", c.name, c.detail);
      break;
    }
  if (is_failure(o.status) && o.message.empty()) o.message = r.reason.empty() ? "(no reason given)" : r.reason;
  return o;
}


std::string number_text(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
  std::string s = fmt::format("{:.17g}", v);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

std::string values_text(const Tensor& t) {
  std::string s = "[";
  for (std::int64_t i = 0; i < t.size(); ++i) s += (i ? ", " : "") + number_text(t.get(i));
  return s + "]";
}

}  // namespace

std::pair<Op, Dims> fuzz_draw(const FuzzOptions& opt, std::int64_t i) {
  std::vector<Op> ops = opt.ops;
  if (ops.empty())
    for (Op op : ops::all())
      if (op.def().sample) ops.push_back(op);
  std::mt19937_64 rng(mix(opt.seed, static_cast<std::uint64_t>(i)));
  auto u = [&](double a, double b) { return std::uniform_real_distribution<double>(a, b)(rng); };
  auto pick = [&](std::size_t n) { return static_cast<std::size_t>(std::uniform_int_distribution<std::uint64_t>(0, n - 1)(rng)); };
  const Op op = ops[pick(ops.size())];
  Dims d;
  const std::int64_t maxw = std::max<std::int64_t>(1, opt.max_width);
  const double c = u(0, 1);
  if (c < 0.45) {
    d.width = 1 + static_cast<std::int64_t>(pick(static_cast<std::size_t>(std::min<std::int64_t>(80, maxw))));
  } else if (c < 0.8) {
    const auto pw = power_widths(maxw);
    d.width = pw.empty() ? 1 : pw[pick(pw.size())];
  } else if (c < 0.9) {
    std::vector<std::int64_t> pr;
    for (auto p : kPrimes)
      if (p <= maxw) pr.push_back(p);
    d.width = pr.empty() ? maxw : pr[pick(pr.size())];
  } else {
    d.width = std::min<std::int64_t>(maxw, 81 + static_cast<std::int64_t>(pick(4096)));
  }
  static constexpr std::int64_t kRows[] = {1, 1, 2, 3, 4, 5, 7, 8, 16, 33};
  d.rows = kRows[pick(std::size(kRows))];
  d.rows = std::max<std::int64_t>(1, std::min(d.rows, kMaxElements / d.width));
  // Now and then past a launch grid's y limit (65535 rows), on narrow rows.
  if (u(0, 1) < 0.03) {
    d.width = 1 + static_cast<std::int64_t>(pick(3));
    d.rows = 65535 + 1 + static_cast<std::int64_t>(pick(4));
  }
  static constexpr DType kX[] = {DType::f32, DType::f32, DType::bf16, DType::f16, DType::f64};
  d.x = kX[pick(std::size(kX))];
  d.param = u(0, 1) < 0.7 ? d.x : (d.x == DType::f32 ? DType::bf16 : DType::f32);
  const auto& regimes = all_regimes();
  d.regime = u(0, 1) < 0.4 ? Regime::normal : regimes[pick(regimes.size())];
  const auto& epss = all_eps_regimes();
  d.eps = u(0, 1) < 0.6 ? EpsRegime::typical : epss[pick(epss.size())];
  d.backward = opt.backward && op.def().has_backward() && u(0, 1) < 0.2;
  d.default_convention = u(0, 1) < 0.2;
  // One draw in five hands the backend views (offset, padded, transposed, channels_last).
  if (u(0, 1) < 0.2) d.layout = all_memory_layouts()[1 + pick(all_memory_layouts().size() - 1)];
  d.seed = mix(opt.seed ^ 0x5bd1e995ULL, static_cast<std::uint64_t>(i));
  return {op, d};
}

Case fuzz_case(const ValidProblem& p, const std::string& name) {
  Case cs;
  cs.file = "<fuzz>";
  cs.name = name;
  cs.layer = fmt::format("fuzz/{}", p->op.name());
  cs.problem = *p;
  return cs;
}

namespace {

/// The shrinker's state: the backend, what "still fails" means and the evaluations left.
struct Shrinker {
  std::vector<std::unique_ptr<Backend>>& be;
  Status status;
  std::int64_t left;
  std::int64_t used = 0;
  std::string message;
  /// Wall-clock limit of the whole shrink: a failure that needs 65536 rows costs ~0.3 s
  /// per evaluation, and the shrinker stops with what it has rather than take minutes.
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);

  /// Whether `p` still fails with the original status (message kept for the last success).
  bool fails(const Problem& p) {
    if (left <= 0 || std::chrono::steady_clock::now() > deadline) return false;
    --left;
    ++used;
    try {
      const ValidProblem vp = validate(p);
      const Outcome o = evaluate(be, fuzz_case(vp, "shrink"));
      if (o.status != status) return false;
      message = o.message;
      return true;
    } catch (const SpecError&) {
      return false;  // a simplification the op's rules refuse
    }
  }
  bool fails(Op op, const Dims& d) {
    try {
      return fails(*draw_problem(op, d));
    } catch (const SpecError&) {
      return false;
    }
  }
};

/// Phase 1: the dimensions, while the draw still fails.
void shrink_dims(Shrinker& s, Op op, Dims& d, std::vector<std::string>& steps) {
  for (int pass = 0; pass < 3; ++pass) {
    bool changed = false;
    auto attempt = [&](Dims c, const std::string& what) {
      if (s.fails(op, c)) {
        d = c;
        // Successive steps of one dimension read as one: "width 511 -> 33", not nine steps.
        const auto arrow = what.find(" -> ");
        if (arrow != std::string::npos && !steps.empty() && steps.back().rfind(what.substr(0, what.find(' ')) + " ", 0) == 0 &&
            steps.back().find(" -> ") != std::string::npos)
          steps.back() = steps.back().substr(0, steps.back().find(" -> ")) + what.substr(arrow);
        else
          steps.push_back(what);
        changed = true;
        return true;
      }
      return false;
    };
    if (!d.default_convention) {
      Dims c = d;
      c.default_convention = true;
      attempt(c, "the op's default convention");
    }
    if (d.backward) {
      Dims c = d;
      c.backward = false;
      attempt(c, "forward instead of backward");
    }
    if (d.layout != MemoryLayout::contiguous) {
      Dims c = d;
      c.layout = MemoryLayout::contiguous;
      if (!attempt(c, fmt::format("layout {} -> contiguous", to_string(d.layout))) && d.layout != MemoryLayout::offset) {
        c.layout = MemoryLayout::offset;
        attempt(c, fmt::format("layout {} -> offset", to_string(d.layout)));
      }
    }
    for (std::int64_t r : {std::int64_t{1}, d.rows / 2})
      if (r >= 1 && r < d.rows) {
        Dims c = d;
        c.rows = r;
        if (attempt(c, fmt::format("rows {} -> {}", d.rows, r))) break;
      }
    // Widths: the smallest of 1..16 that still fails, else halves, else one less.
    {
      bool done = false;
      for (std::int64_t w = 1; w < std::min<std::int64_t>(d.width, 17) && !done; ++w) {
        Dims c = d;
        c.width = w;
        done = attempt(c, fmt::format("width {} -> {}", d.width, w));
      }
      // Above 16: halves, else steps down by (w - 17) / 2, ..., 2, 1 (a binary search when
      // failing is monotone in the width: ~2 log2 w evaluations, not w - w_min).
      while (!done && d.width > 17) {
        bool any = false;
        std::vector<std::int64_t> tries{d.width / 2, d.width / 2 + 1, d.width / 2 - 1};
        for (std::int64_t step = std::max<std::int64_t>(1, (d.width - 17) / 2); step >= 1; step /= 2) tries.push_back(d.width - step);
        for (std::int64_t w : tries) {
          Dims c = d;
          c.width = w;
          if (w >= 1 && w < d.width && attempt(c, fmt::format("width {} -> {}", d.width, w))) {
            any = true;
            break;
          }
        }
        if (!any) break;
      }
    }
    for (Regime r : {Regime::integers, Regime::normal})
      if (d.regime != r && d.regime != Regime::integers) {
        Dims c = d;
        c.regime = r;
        if (attempt(c, fmt::format("regime {} -> {}", to_string(d.regime), to_string(r)))) break;
      }
    if (d.eps != EpsRegime::typical) {
      Dims c = d;
      c.eps = EpsRegime::typical;
      attempt(c, fmt::format("eps {} -> typical", to_string(d.eps)));
    }
    for (DType t : {DType::f32, DType::f64})
      if (d.x != t && (d.x == DType::bf16 || d.x == DType::f16 || t == DType::f32)) {
        Dims c = d;
        c.x = t;
        if (c.param == d.x) c.param = t;
        if (attempt(c, fmt::format("x {} -> {}", dtype_name(d.x), dtype_name(t)))) break;
      }
    if (d.param != d.x) {
      Dims c = d;
      c.param = d.x;
      attempt(c, fmt::format("parameters {} -> {}", dtype_name(d.param), dtype_name(d.x)));
    }
    if (!changed) break;
  }
}

/// Inputs of x's shape (x, residual, dy) restricted to leading indices [b, e) of axis 0.
std::optional<Problem> slice_leading(const Problem& p, std::int64_t b, std::int64_t e) {
  const Shape xs = p.x().shape();
  if (xs.size() < 2 || b < 0 || e > xs[0] || e - b < 1) return std::nullopt;
  Problem q = p;
  const std::int64_t inner = numel(xs) / xs[0];
  Shape ns = xs;
  ns[0] = e - b;
  for (auto& [name, t] : q.inputs) {
    if (t.shape() != xs) continue;
    std::vector<double> v = t.to_doubles();
    std::vector<double> w(v.begin() + b * inner, v.begin() + e * inner);
    t = Tensor::from_doubles(t.dtype(), ns, w);
  }
  return q;
}

/// Phase 2a: fewer leading rows of the concrete problem (halves first, then single rows):
/// a redrawn problem with fewer rows has other values, and the failing row may be the last.
void shrink_rows(Shrinker& s, Problem& p, std::vector<std::string>& steps) {
  for (int guard = 0; guard < 64; ++guard) {
    const std::int64_t n = p.x().shape().size() >= 2 ? p.x().shape()[0] : 1;
    if (n <= 1) return;
    bool done = false;
    std::vector<std::pair<std::int64_t, std::int64_t>> tries{{0, n / 2}, {n / 2, n}};
    if (n <= 8)
      for (std::int64_t r = 0; r < n; ++r) tries.emplace_back(r, r + 1);
    for (auto [b, e] : tries) {
      auto q = slice_leading(p, b, e);
      if (q && s.fails(*q)) {
        steps.push_back(fmt::format("leading rows {} -> [{}, {})", n, b, e));
        p = std::move(*q);
        done = true;
        break;
      }
    }
    if (!done) return;
  }
}

/// Phase 2b: the values of the concrete problem, element by element (then whole tensors).
void shrink_values(Shrinker& s, Problem& p, std::vector<std::string>& steps) {
  std::vector<std::string> names;
  for (const auto& [name, t] : p.inputs) names.push_back(name);
  for (const std::string& nm : names) {
    if (p.inputs.at(nm).size() > 4096) continue;  // element by element only where that ends
    // Whole tensor: all ones (a gain), all zeros (a shift).
    for (double c : {1.0, 0.0}) {
      Problem q = p;
      Tensor& u = q.inputs.at(nm);
      bool same = true;
      for (std::int64_t i = 0; i < u.size(); ++i) {
        same = same && u.get(i) == c;
        u.set(i, c);
      }
      if (!same && s.fails(q)) {
        p = std::move(q);
        steps.push_back(fmt::format("{} all {}", nm, c));
        break;
      }
    }
    std::int64_t simplified = 0;
    for (std::int64_t i = 0; i < p.inputs.at(nm).size() && s.left > 0; ++i) {
      const double v = p.inputs.at(nm).get(i);
      if (!std::isfinite(v)) continue;
      for (double c : {0.0, 1.0, -1.0, std::trunc(v), std::round(v * 4) / 4}) {
        if (c == v || !(std::abs(c) <= std::abs(v) || std::abs(c) <= 1)) continue;
        Problem q = p;
        q.inputs.at(nm).set(i, c);
        if (q.inputs.at(nm).get(i) == v) continue;  // not representable differently
        if (s.fails(q)) {
          p = std::move(q);
          ++simplified;
          break;
        }
      }
    }
    if (simplified) steps.push_back(fmt::format("{}: {} values simplified", nm, simplified));
  }
}

}  // namespace

namespace {
FuzzFailure shrink_from(std::vector<std::unique_ptr<Backend>>& be, Op op, const Dims& dims, std::int64_t evaluations,
                        const Outcome* seen) {
  FuzzFailure f;
  f.op = op;
  f.dims = dims;
  const ValidProblem vp = draw_problem(op, dims);
  f.original = fuzz_case(vp, "fuzz");
  // The draw's own outcome where the caller has it: evaluated again, a worker that crashed on
  // its second request made an ERROR draw a FAILED one with an empty reason (exit 1, not 3).
  const Outcome first = seen ? *seen : evaluate(be, f.original);
  f.status = first.status;
  f.message = first.message;
  Shrinker s{be, first.status, evaluations, 0, first.message};
  Dims d = dims;
  if (is_failure(first.status)) shrink_dims(s, op, d, f.steps);
  f.shrunk_dims = d;
  Problem p = *draw_problem(op, d);
  if (is_failure(first.status)) {
    shrink_rows(s, p, f.steps);
    shrink_values(s, p, f.steps);
  }
  f.shrunk = fuzz_case(validate(p), "fuzz");
  f.message = s.message;
  f.evaluations = s.used;
  return f;
}
}  // namespace

FuzzFailure shrink(std::vector<std::unique_ptr<Backend>>& be, Op op, const Dims& dims, std::int64_t evaluations) {
  return shrink_from(be, op, dims, evaluations, nullptr);
}

FuzzReport fuzz(std::vector<std::unique_ptr<Backend>>& be, const FuzzOptions& opt) {
  FuzzReport rep;
  rep.backend = be.front()->name();
  rep.seed = opt.seed;
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  for (std::int64_t i = opt.first_draw;; ++i) {
    if (opt.count > 0 && i >= opt.first_draw + opt.count) break;
    if (opt.count <= 0 && opt.budget_s > 0 && elapsed() >= opt.budget_s) break;
    if (opt.count <= 0 && opt.budget_s <= 0) break;
    auto [op, d] = fuzz_draw(opt, i);
    ++rep.draws;
    std::optional<ValidProblem> vp;
    try {
      try {
        vp = draw_problem(op, d);
      } catch (const SpecError& e) {
        // A padded/transposed/channels_last view the drawn shape leaves row-major tests only
        // its offset (draw_problem refuses to label it otherwise): drawn as the offset view.
        if (e.field != "layout" || d.layout == MemoryLayout::contiguous || d.layout == MemoryLayout::offset) throw;
        d.layout = MemoryLayout::offset;
        vp = draw_problem(op, d);
      }
    } catch (const SpecError& e) {
      ++rep.invalid;
      ++rep.skip_reasons[fmt::format("not drawable: {}", e.what())];
      continue;
    }
    // What the backend declines is skipped before the reference is evaluated (a backend
    // that takes one op in ten costs a tenth of the draws' reference time).
    Outcome o;
    Backend& b = *be.front();
    if (auto why = declined(b, **vp)) o = {Status::skipped, {}, *why};
    else if (auto why2 = b.unsupported(*vp, {})) o = {Status::skipped, {}, *why2};
    else o = evaluate(be, fuzz_case(*vp, "fuzz"));
    if (o.status == Status::skipped) {
      ++rep.skipped;
      ++rep.skip_reasons[o.skip.substr(0, 120)];
    } else {
      ++rep.evaluated;
      for (const std::string& k :
           {fmt::format("op={}", op.name()), fmt::format("x={}", dtype_name(d.x)), fmt::format("regime={}", to_string(d.regime)),
            fmt::format("eps={}", to_string(d.eps)), std::string(d.backward ? "backward" : "forward"),
            fmt::format("width {}", d.width <= 8 ? "1-8" : d.width <= 80 ? "9-80" : d.width <= 1024 ? "81-1024" : ">1024")})
        ++rep.coverage[k];
    }
    if (is_failure(o.status)) {
      FuzzFailure f = shrink_from(be, op, d, opt.shrink_evaluations, &o);
      f.draw = i;
      f.name = fmt::format("fuzz_s{}_d{}", opt.seed, i);
      rep.failures.push_back(std::move(f));
      if (!opt.keep_going) break;
    }
    if (opt.progress) opt.progress(rep.draws, static_cast<std::int64_t>(rep.failures.size()));
  }
  rep.seconds = elapsed();
  return rep;
}

std::string fuzz_case_file(const FuzzFailure& f, const std::string& backend, const std::string& rerun) {
  const Problem& p = f.shrunk.problem;
  std::string s;
  s += fmt::format("# Found by normcheck fuzz on {} (draw {}): {} {}\n", backend, f.draw, f.op.name(), f.dims.str());
  s += fmt::format("# Shrunk to {} ({} evaluations): {}\n", f.shrunk_dims.str(), f.evaluations,
                   f.steps.empty() ? std::string("nothing smaller failed") : fmt::format("{}", fmt::join(f.steps, "; ")));
  s += fmt::format("# {}: {}\n", f.status == Status::error ? "error" : "failed", f.message);
  s += fmt::format("# rerun the draw: {}\n", rerun);
  s += "[[case]]\n";
  s += fmt::format("name = \"{}\"\n", f.name);
  s += fmt::format("layer = \"fuzz/{}\"\n", f.op.name());
  s += fmt::format("note = \"normcheck fuzz draw {}: {}\"\n", f.draw, f.shrunk_dims.str());
  s += fmt::format("op = \"{}\"\n", f.op.name());
  s += fmt::format("dtype = \"{}\"\n", dtype_name(p.x().dtype()));
  if (p.out_dtype != p.x().dtype()) s += fmt::format("out_dtype = \"{}\"\n", dtype_name(p.out_dtype));
  if (p.layout != MemoryLayout::contiguous) s += fmt::format("layout = \"{}\"\n", to_string(p.layout));
  std::vector<std::string> kv;
  for (const auto& [k, v] : write_convention(p.conv, p.op)) {
    // An empty list (normalized_shape or axes of an op that does not read them) is the
    // default, and case files spell it by leaving the key out.
    if (const auto* l = std::get_if<std::vector<std::int64_t>>(&v); l && l->empty()) continue;
    kv.push_back(fmt::format("{} = {}", k, convention_value_text(v)));
  }
  s += fmt::format("convention = {{ {} }}\n", fmt::join(kv, ", "));
  for (const auto& [name, t] : p.inputs)
    s += fmt::format("inputs.{} = {{ dtype = \"{}\", shape = [{}], values = {} }}\n", name, dtype_name(t.dtype()),
                     fmt::join(t.shape(), ", "), values_text(t));
  // The exact expected values of the primary output (binary64 of the exact value).
  const ExactOutputs ref = reference::evaluate_exact(validate(p));
  const ExactOutput& e = ref.at(primary_output(p));
  std::vector<std::string> vals;
  for (double v : e.exact_f64()) vals.push_back(number_text(v));
  s += fmt::format("expect.values = [{}]\n", fmt::join(vals, ", "));
  return s;
}

}  // namespace normcheck
