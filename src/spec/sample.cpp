#include "spec/sample.hpp"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/view.hpp"
#include "spec/convention.hpp"
#include "spec/op_def.hpp"

namespace normcheck {

namespace {

constexpr std::string_view kRegimeNames[] = {"normal", "integers", "shifted", "huge", "tiny",
                                              "subnormal", "mixed", "constant", "zeros", "nonfinite", "constant_huge"};
constexpr std::string_view kEpsNames[] = {"typical", "zero", "dominant", "comparable", "unrepresentable"};

/// SplitMix64: decorrelates the seeds of the separate streams of one draw.
std::uint64_t mix(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

std::string_view to_string(Regime r) noexcept { return kRegimeNames[static_cast<int>(r)]; }
std::string_view to_string(EpsRegime r) noexcept { return kEpsNames[static_cast<int>(r)]; }

std::optional<Regime> parse_regime(std::string_view s) noexcept {
  for (Regime r : all_regimes())
    if (to_string(r) == s) return r;
  return std::nullopt;
}

std::optional<EpsRegime> parse_eps_regime(std::string_view s) noexcept {
  for (EpsRegime r : all_eps_regimes())
    if (to_string(r) == s) return r;
  return std::nullopt;
}

const std::vector<Regime>& all_regimes() {
  static const std::vector<Regime> v{Regime::normal, Regime::integers, Regime::shifted,  Regime::huge,  Regime::tiny,
                                     Regime::subnormal, Regime::mixed, Regime::constant, Regime::zeros, Regime::nonfinite,
                                     Regime::constant_huge};
  return v;
}

const std::vector<EpsRegime>& all_eps_regimes() {
  static const std::vector<EpsRegime> v{EpsRegime::typical, EpsRegime::zero, EpsRegime::dominant, EpsRegime::comparable,
                                        EpsRegime::unrepresentable};
  return v;
}

std::string Dims::str() const {
  std::string s = fmt::format("w={} rows={} x={} param={}", width, rows, dtype_name(x), dtype_name(param));
  if (out) s += fmt::format(" out={}", dtype_name(*out));
  s += fmt::format(" regime={} eps={}", to_string(regime), to_string(eps));
  if (placement) s += fmt::format(" placement={}", to_string(*placement));
  if (backward) s += " backward";
  if (default_convention) s += " defaults";
  if (layout != MemoryLayout::contiguous) s += fmt::format(" layout={}", to_string(layout));
  if (wide) s += " wide";
  if (params) s += " params";
  return s + fmt::format(" seed={}", seed);
}

Sampler::Sampler(const Dims& d) : d_(d), rng_(mix(d.seed)) {}

bool Sampler::coin(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }

std::size_t Sampler::index(std::size_t n) {
  return n <= 1 ? 0 : static_cast<std::size_t>(std::uniform_int_distribution<std::uint64_t>(0, n - 1)(rng_));
}

Tensor Sampler::uniform(const Shape& shape, DType dt, double lo, double hi) {
  std::vector<double> v(static_cast<std::size_t>(numel(shape)));
  std::uniform_real_distribution<double> u(lo, hi);
  for (auto& e : v) e = u(rng_);
  return Tensor::from_doubles(dt, shape, v);
}

Tensor Sampler::gain(const Shape& shape) { return uniform(shape, d_.param, 0.5, 1.5); }
Tensor Sampler::shift(const Shape& shape) { return uniform(shape, d_.param, -1.0, 1.0); }

Tensor Sampler::data(const Shape& shape, DType dt, std::int64_t group) {
  const std::int64_t n = numel(shape);
  group = std::max<std::int64_t>(1, std::min(group, n));
  ReductionLayout runs;  // runs of `group` consecutive values (the last one may be short)
  for (std::int64_t g0 = 0; g0 < n; g0 += group) runs.base.push_back(g0);
  for (std::int64_t j = 0; j < group; ++j) runs.member.push_back(j);
  return fill(shape, dt, runs);
}

Tensor Sampler::regroup(const Tensor& x, const ReductionLayout& l) {
  // The nonfinite regime's NaN/inf goes where it went before: into x when x held it.
  bool had = false;
  for (std::int64_t i = 0; i < x.size() && !had; ++i) had = !std::isfinite(x.get(i));
  const bool placed = nonfinite_placed_;
  nonfinite_placed_ = !had;
  Tensor t = fill(x.shape(), x.dtype(), l);
  nonfinite_placed_ = placed || had;
  return t;
}

Tensor Sampler::fill(const Shape& shape, DType dt, const ReductionLayout& groups) {
  const std::int64_t n = numel(shape);
  const FormatInfo& f = format_info(dt);
  const int p = f.precision;
  std::normal_distribution<double> N(0, 1);
  std::uniform_int_distribution<int> small(-8, 8);
  std::vector<double> v(static_cast<std::size_t>(n));
  // The group that holds the nonfinite regime's one NaN/inf (the first data tensor only).
  const std::int64_t bad_group = static_cast<std::int64_t>(index(groups.base.size()));
  for (std::size_t gi = 0; gi < groups.base.size(); ++gi) {
    const std::int64_t b = groups.base[gi];
    std::size_t size = 0;  // the members inside x (a last run may be short)
    while (size < groups.member.size() && b + groups.member[size] < n) ++size;
    if (size == 0) continue;
    auto fill_each = [&](auto&& f_each) {
      for (std::size_t j = 0; j < size; ++j) v[b + groups.member[j]] = f_each(b + groups.member[j]);
    };
    // One member of the group, drawn uniformly.
    auto one = [&] { return b + groups.member[index(size)]; };
    switch (d_.regime) {
      case Regime::normal: {
        const double s = std::ldexp(1.0, std::uniform_int_distribution<int>(-4, 4)(rng_));
        fill_each([&](std::int64_t) { return s * N(rng_); });
        break;
      }
      case Regime::integers: fill_each([&](std::int64_t) { return static_cast<double>(small(rng_)); }); break;
      case Regime::shifted: {
        const double mean = std::ldexp(1.0, p / 2 + 1) * (coin(0.5) ? 1 : -1);
        fill_each([&](std::int64_t) { return mean + N(rng_); });
        break;
      }
      case Regime::huge: {
        // e in (max_exp / 2 + 1, max_exp - 4): x^2 overflows, |x| * group stays finite.
        const int e = std::uniform_int_distribution<int>(f.max_exp / 2 + 1, std::max(f.max_exp / 2 + 1, f.max_exp - 4 - 7))(rng_);
        fill_each([&](std::int64_t) { return std::ldexp(N(rng_), e); });
        break;
      }
      case Regime::tiny: {
        // e in (min_exp, min_exp / 2 - 2): x^2 underflows; x itself normal.
        const int e = std::uniform_int_distribution<int>(f.min_exp + 2, f.min_exp / 2 - 2)(rng_);
        fill_each([&](std::int64_t) { return std::ldexp(1.0 + std::abs(N(rng_)), e) * (coin(0.5) ? 1 : -1); });
        break;
      }
      case Regime::subnormal:
        fill_each([&](std::int64_t) { return f.min_subnormal * static_cast<double>(small(rng_)); });
        break;
      case Regime::mixed: {
        fill_each([&](std::int64_t) { return N(rng_); });
        v[one()] *= std::ldexp(1.0, p);
        v[one()] *= std::ldexp(1.0, -p);
        break;
      }
      case Regime::constant: {
        const double c = N(rng_);
        fill_each([&](std::int64_t) { return c; });
        break;
      }
      case Regime::constant_huge: {
        const double c = std::ldexp(N(rng_), std::max(f.max_exp / 2 + 1, f.max_exp - 4 - 7));
        fill_each([&](std::int64_t) { return c; });
        break;
      }
      case Regime::zeros: fill_each([&](std::int64_t) { return coin(0.5) ? 0.0 : -0.0; }); break;
      case Regime::nonfinite: {
        fill_each([&](std::int64_t) { return N(rng_); });
        if (static_cast<std::int64_t>(gi) == bad_group && !nonfinite_placed_) {
          const double bad = pick({std::numeric_limits<double>::quiet_NaN(), HUGE_VAL, -HUGE_VAL});
          v[one()] = bad;
        }
        break;
      }
    }
  }
  if (d_.regime == Regime::nonfinite) nonfinite_placed_ = true;
  return Tensor::from_doubles(dt, shape, v);
}

std::vector<std::string> problem_dims(const Problem& p) {
  const OpDef& d = p.op.def();
  std::string params = "-";
  for (const auto& [name, t] : p.inputs)
    if (name != d.primary_input && name != "dy" && name != "residual" && name != "k" && t.shape() != p.x().shape()) {
      params = std::string(dtype_name(t.dtype()));
      break;
    }
  const std::int64_t m = d.group_size ? d.group_size(p) : p.x().shape().back();
  const std::int64_t g = m > 0 ? p.x().size() / m : 0;
  auto bucket = [](std::int64_t v, std::initializer_list<std::pair<std::int64_t, const char*>> b, const char* last) {
    for (auto& [hi, name] : b)
      if (v <= hi) return std::string(name);
    return std::string(last);
  };
  return {fmt::format("op={}", d.name),
          fmt::format("x={}", dtype_name(p.x().dtype())),
          fmt::format("params={}", params),
          fmt::format("out={}", dtype_name(p.out_dtype)),
          "width=" + bucket(m, {{1, "1"}, {8, "2-8"}, {32, "9-32"}, {256, "33-256"}, {1024, "257-1024"}, {4096, "1025-4096"}}, ">4096"),
          "groups=" + bucket(g, {{1, "1"}, {64, "2-64"}, {65535, "65-65535"}}, ">65535"),
          std::string(p.conv.direction == Direction::backward ? "direction=backward" : "direction=forward"),
          p.conv.eps == 0 ? std::string("eps=0") : fmt::format("eps={}", to_string(p.conv.eps_placement)),
          fmt::format("affine={}", to_string(p.conv.affine)),
          fmt::format("layout={}", to_string(p.layout))};
}

double first_group_variance(const Problem& p) {
  const ReductionLayout l = group_layout(p);
  if (l.base.empty() || l.member.empty()) return 1;
  const Tensor& x = p.x();
  double s = 0, s2 = 0;
  const double m = static_cast<double>(l.member.size());
  for (auto j : l.member) s += x.get(l.base[0] + j);
  const double mu = s / m;
  for (auto j : l.member) s2 += (x.get(l.base[0] + j) - mu) * (x.get(l.base[0] + j) - mu);
  const double v = s2 / m;
  return std::isfinite(v) && v > 0 ? v : 1;
}

namespace {
ValidProblem draw_problem_keys(Op op, const Dims& dims, bool keys);
}  // namespace

ValidProblem draw_problem(Op op, const Dims& dims) {
  // The op's keys with a draw (ConventionKey::draw) come from a stream of their own, so that
  // adding one leaves every other value of a point as it was. A problem those draws make
  // invalid (a key the rest of the draw rules out) is drawn again without them: a point is
  // never dropped for a key.
  try {
    return draw_problem_keys(op, dims, true);
  } catch (const SpecError&) {
    return draw_problem_keys(op, dims, false);
  }
}

namespace {
ValidProblem draw_problem_keys(Op op, const Dims& dims, bool keys) {
  const OpDef& d = op.def();
  if (!d.sample) throw SpecError("op", fmt::format("{} has no sample rule: it cannot be drawn", d.name));
  if (dims.backward && !d.has_backward()) throw SpecError("convention.direction", fmt::format("{} has no backward", d.name));
  if (dims.out && is_quantized(*dims.out) && !d.quantized_out)
    throw SpecError("out_dtype", fmt::format("{} has no quantized output", d.name));
  if (dims.width < 1 || dims.rows < 1) throw SpecError("inputs.x.shape", "width and rows must be >= 1");
  Problem p;
  p.op = op;
  p.conv = default_convention(op);
  p.conv.acc_dtype = dims.x == DType::f64 ? DType::f64 : DType::f32;
  p.out_dtype = dims.out.value_or(dims.x);
  Sampler s(dims);
  d.sample(s, p);
  if (keys && s.vary()) {
    std::mt19937_64 g(mix(dims.seed ^ 0x6b657973ULL));  // "keys"
    for (const ConventionKey* k : d.params)
      if (k->draw) k->draw(g, p);
  }
  // The regimes hold per normalization group (one value per group, one mean per group...),
  // but a hook draws x in runs of consecutive values. Where the op's groups are not those
  // runs (batch_norm's channels across the batch, group_norm's several channels per group,
  // axes = [0]), x is drawn again over the groups themselves: the runs had given a batch_norm
  // channel several constants (variance > 0) or means of both signs (no cancellation).
  {
    const ReductionLayout l = group_layout(p);
    Tensor& x = p.inputs.at(std::string(d.primary_input));
    const bool runs = l.contiguous && static_cast<std::int64_t>(l.member.size()) == s.x_run() &&
                      static_cast<std::int64_t>(l.base.size()) * s.x_run() == x.size();
    const bool covers = static_cast<std::int64_t>(l.base.size() * l.member.size()) == x.size();
    if (!runs && covers && !l.member.empty()) x = s.regroup(x, l);
  }
  if (dims.placement) p.conv.eps_placement = *dims.placement;
  if (dims.backward) {
    p.conv.direction = Direction::backward;
    p.inputs["dy"] = s.data(p.x().shape(), dims.x, dims.width);
  }
  // eps relative to the data's statistic; ops that read no eps (dyt) ignore it.
  const double v = first_group_variance(p);
  switch (dims.eps) {
    case EpsRegime::typical: p.conv.eps = 1e-5; break;
    case EpsRegime::zero: p.conv.eps = 0; break;
    case EpsRegime::dominant: p.conv.eps = 1e3 * v; break;
    case EpsRegime::comparable: p.conv.eps = 0.5 * v; break;
    case EpsRegime::unrepresentable: p.conv.eps = 1.3 * v * (1 + std::ldexp(1.0, -30)); break;
  }
  if (!(p.conv.eps <= 1e10)) p.conv.eps = 1e10;  // validate's bound on eps
  p.layout = dims.layout;
  // A padded, transposed or channels_last point whose x the layout leaves in row-major order
  // (a rank-2 x in channels_last, one spatial position, an extent-1 dim transposed) would be
  // reported as covering that layout while testing only the offset: not drawn.
  if (p.layout != MemoryLayout::contiguous && p.layout != MemoryLayout::offset && present(p.x(), p.layout).row_major())
    throw SpecError("layout", fmt::format("the {} layout keeps x of shape {} in row-major order", to_string(p.layout),
                                          shape_str(p.x().shape())));
  return validate(std::move(p));
}
}  // namespace

}  // namespace normcheck
