#include "cases/matrix.hpp"

#include <set>

#include <fmt/format.h>

#include "ops/registry.hpp"

namespace normcheck {

namespace {

std::uint64_t name_seed(const std::string& s) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

Dims point(std::int64_t w, std::int64_t rows, DType x, DType param, Regime r, EpsRegime e, bool backward, bool defaults) {
  Dims d;
  d.width = w;
  d.rows = rows;
  d.x = x;
  d.param = param;
  d.regime = r;
  d.eps = e;
  d.backward = backward;
  d.default_convention = defaults;
  return d;
}

constexpr DType kAll[] = {DType::f32, DType::f16, DType::bf16, DType::f64};

std::vector<std::int64_t> quick_widths() {
  std::vector<std::int64_t> w{1, 2, 3, 4, 5, 7, 8, 9};
  for (std::int64_t p = 16; p <= 1024; p *= 2)
    for (std::int64_t v : {p - 1, p, p + 1}) w.push_back(v);
  return w;
}

}  // namespace

std::optional<Tier> parse_matrix_source(std::string_view s) noexcept {
  if (s == "matrix:quick") return Tier::quick;
  if (s == "matrix:full") return Tier::full;
  return std::nullopt;
}

std::string_view to_string(Tier t) noexcept { return t == Tier::quick ? "quick" : "full"; }

std::string matrix_case_name(Op op, const Dims& d) {
  std::string s = fmt::format("mx_{}_w{}_r{}_{}_{}_{}_{}", op.name(), d.width, d.rows, dtype_name(d.x), dtype_name(d.param),
                              to_string(d.regime), to_string(d.eps));
  if (d.out) s += fmt::format("_out{}", dtype_name(*d.out));
  if (d.backward) s += "_bwd";
  if (d.default_convention) s += "_def";
  if (d.layout != MemoryLayout::contiguous) s += fmt::format("_{}", to_string(d.layout));
  if (d.wide) s += "_wide";
  if (d.params) s += "_params";
  if (d.placement) s += fmt::format("_{}", to_string(*d.placement));
  return s;
}

std::vector<Dims> matrix_points(Op op, Tier t) {
  const bool bwd = op.def().has_backward();
  const DType f32 = DType::f32;
  std::vector<Dims> v;
  const auto widths = quick_widths();
  for (std::size_t i = 0; i < widths.size(); ++i)
    v.push_back(point(widths[i], 2, f32, f32, Regime::normal, EpsRegime::typical, false, i % 2 == 0));
  // Every residue mod 8 and mod 16 past one vector (the widths above are 2^k +- 1: tails of 1
  // and 7 or 15 alone; a kernel whose tail loop is wrong for an even remainder, 2, 4 or 6,
  // passed them: a fourth audit), forward in f32 and bf16, backward in f32.
  for (std::int64_t w : {6, 10, 11, 12, 13, 14, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 36, 44}) {
    v.push_back(point(w, 2, f32, f32, Regime::normal, EpsRegime::typical, false, false));
    if (w % 2 == 0) v.push_back(point(w, 2, DType::bf16, DType::bf16, Regime::normal, EpsRegime::typical, false, false));
    if (bwd && w % 4 != 1) v.push_back(point(w, 2, f32, f32, Regime::normal, EpsRegime::typical, true, false));
  }
  for (DType x : {DType::bf16, DType::f16, DType::f64})
    for (std::int64_t w : {1, 3, 8, 9, 33, 65}) v.push_back(point(w, 2, x, x, Regime::normal, EpsRegime::typical, false, false));
  for (Regime r : all_regimes())
    for (DType x : kAll) v.push_back(point(33, 2, x, x, r, EpsRegime::typical, false, false));
  // ... and with the op's parameters present (Dims::params), in f32 and bf16.
  for (Regime r : all_regimes())
    for (DType x : {f32, DType::bf16}) {
      Dims d = point(33, 2, x, x, r, EpsRegime::typical, false, false);
      d.params = true;
      v.push_back(d);
    }
  for (EpsRegime e : all_eps_regimes())
    for (Regime r : {Regime::normal, Regime::constant, Regime::tiny})
      for (DType x : {f32, DType::bf16}) v.push_back(point(17, 2, x, x, r, e, false, false));
  // Every eps placement where eps decides or shares the denominator (constant, tiny and
  // huge constant rows; eps at the typical 1e-5, dominant, comparable), forward and backward:
  // the op's own draw (sampling::statistic) picks a placement for 15% of its points only.
  for (EpsPlacement pl : {EpsPlacement::inside_sqrt, EpsPlacement::outside_sqrt, EpsPlacement::clamp_var, EpsPlacement::clamp_norm})
    for (bool b : {false, true})
      if (!b || bwd) {
        for (Regime r : {Regime::constant, Regime::tiny, Regime::constant_huge})
          for (EpsRegime e : {EpsRegime::typical, EpsRegime::dominant, EpsRegime::comparable}) {
            Dims d = point(9, 2, f32, f32, r, e, b, false);
            d.placement = pl;
            v.push_back(d);
          }
        Dims d = point(9, 2, f32, f32, Regime::normal, EpsRegime::comparable, b, false);
        d.placement = pl;
        v.push_back(d);
      }
  v.push_back(point(33, 2, DType::bf16, f32, Regime::normal, EpsRegime::typical, false, false));
  v.push_back(point(33, 2, f32, DType::bf16, Regime::normal, EpsRegime::typical, false, false));
  v.push_back(point(33, 2, DType::f16, f32, Regime::normal, EpsRegime::typical, false, false));
  // ... and at two more widths, with f16 parameters too (a backend that rounded n to the
  // weight's dtype, T5's order, failed one point of the quick tier: a fifth audit).
  // Two 16-bit dtypes mixed (bf16 data with f16 parameters and the reverse): a backend that
  // casts the weights to the data's dtype (vLLM's weight.to(x.dtype)) passed every point of
  // f32 with one 16-bit side (a sixth audit).
  for (std::int64_t w : {12, 64}) {
    for (DType pd : {DType::bf16, DType::f16}) v.push_back(point(w, 2, f32, pd, Regime::normal, EpsRegime::typical, false, false));
    v.push_back(point(w, 2, DType::bf16, f32, Regime::normal, EpsRegime::typical, false, false));
    v.push_back(point(w, 2, DType::bf16, DType::f16, Regime::normal, EpsRegime::typical, false, false));
    v.push_back(point(w, 2, DType::f16, DType::bf16, Regime::normal, EpsRegime::typical, false, false));
  }
  // Narrow data with a binary32 output: eps or parameters rounded to the data's dtype show.
  if (!op.def().quantized_out)
    for (DType x : {DType::bf16, DType::f16})
      for (Regime r : {Regime::normal, Regime::tiny})
        for (EpsRegime e : {EpsRegime::typical, EpsRegime::comparable}) {
          Dims d = point(16, 2, x, f32, r, e, false, false);
          d.out = f32;
          v.push_back(d);
        }
  // Views (Problem::layout): each layout at a tail width over 3 groups, forward and backward.
  for (MemoryLayout l : all_memory_layouts())
    if (l != MemoryLayout::contiguous)
      for (bool b : {false, true})
        if (!b || bwd) {
          Dims d = point(33, 3, f32, f32, Regime::normal, EpsRegime::typical, b, false);
          d.layout = l;
          v.push_back(d);
        }
  if (bwd) {
    for (std::int64_t w : {1, 2, 8, 9, 33, 128, 129}) v.push_back(point(w, 2, f32, f32, Regime::normal, EpsRegime::typical, true, false));
    for (Regime r : all_regimes())
      for (DType x : {f32, DType::bf16}) v.push_back(point(17, 2, x, x, r, EpsRegime::typical, true, false));
  }
  // Scale: where kernels change strategy with the problem's size (matrix.hpp).
  // (the op's defaults: its own split of the groups over batch or heads is not drawn, so the
  // tokens' axis itself holds the 65537 groups)
  v.push_back(point(2, 65537, f32, f32, Regime::normal, EpsRegime::typical, false, true));
  // ... and in bf16 at a width past 4 with a tail, and backward: a grid of at most 65535 rows
  // in one kernel only (rows of 4 or more values, the half-precision instantiation, the
  // backward launch, dgamma summed over the first 65535 rows) passed the f32 point above (a
  // sixth audit, modelled on tt-metal #21482). One value per row past 65536 in f32 too: an
  // element count kept in 16 bits.
  // (not for an elementwise op: no statistic, no grid of rows; dyt's 65537 rows of 5 bf16
  // values cost 8 CPU-s, half of them recomputed in MPFR where tanh saturates. The backward,
  // whose reference has no certified path (~16 us an element), for the row norms only: 2 s
  // an op.)
  if (!op.def().elementwise) v.push_back(point(5, 65537, DType::bf16, DType::bf16, Regime::normal, EpsRegime::typical, false, false));
  // (with the parameters present, over 70001 rows: dgamma and dbeta summed over the first
  // 65535 rows only miss 6% of their sum; 2 rows of 65537 were within the sum's allowance)
  if (op == Op::layer_norm || op == Op::rms_norm) {
    Dims d = point(2, 70001, f32, f32, Regime::normal, EpsRegime::typical, true, false);
    d.params = true;
    v.push_back(d);
  }
  v.push_back(point(65537, 1, f32, f32, Regime::normal, EpsRegime::typical, false, false));
  v.push_back(point(33, 300, DType::bf16, DType::bf16, Regime::normal, EpsRegime::typical, false, false));
  for (std::int64_t w : {4097, 8192, 16385})
    for (DType x : {f32, DType::bf16, DType::f16}) v.push_back(point(w, 2, x, x, Regime::normal, EpsRegime::typical, false, false));
  if (bwd) {
    for (DType x : {f32, DType::bf16}) v.push_back(point(33, 300, x, x, Regime::normal, EpsRegime::typical, true, false));
    v.push_back(point(8, 4099, f32, f32, Regime::normal, EpsRegime::typical, true, false));
  }
  // Structure (Dims::wide): the op's large structural choices over 32 groups of 64 values, in
  // every float dtype, forward and backward, and through every view in f32 and bf16 (the
  // inputs' strides at C >= 16 channels, 2-D normalized_shape).
  auto wide = [](Dims d, MemoryLayout l = MemoryLayout::contiguous) {
    d.wide = true;
    d.layout = l;
    return d;
  };
  for (DType x : {f32, DType::bf16, DType::f16})
    for (bool b : {false, true})
      if (!b || bwd) v.push_back(wide(point(64, 32, x, x, Regime::normal, EpsRegime::typical, b, false)));
  for (MemoryLayout l : all_memory_layouts())
    if (l != MemoryLayout::contiguous)
      for (DType x : {f32, DType::bf16})
        for (bool b : {false, true})
          if (!b || bwd) v.push_back(wide(point(64, 32, x, x, Regime::normal, EpsRegime::typical, b, false), l));
  // Group counts past a vector of 4 or 8 rows and not a multiple of either (13) in bf16 and
  // f16, forward and backward: a kernel's tail of rows.
  for (DType x : {DType::bf16, DType::f16})
    for (bool b : {false, true})
      if (!b || bwd) v.push_back(point(33, 13, x, x, Regime::normal, EpsRegime::typical, b, false));
  // Backward of narrow data with binary32 parameters and outputs: parameter gradients kept in
  // the data's dtype show (the outputs' dtype is out_dtype's).
  if (bwd)
    for (DType x : {DType::bf16, DType::f16}) {
      Dims d = point(33, 3, x, f32, Regime::normal, EpsRegime::typical, true, false);
      d.out = f32;
      v.push_back(d);
    }
  // The widest rows in the data's half-precision dtypes (32769: past a 32768-value tile).
  for (DType x : {DType::bf16, DType::f16}) v.push_back(point(32769, 2, x, x, Regime::normal, EpsRegime::typical, false, false));
  // Many groups (1031: past 1024, a prime, so no multiple of a vector or tile of rows) at
  // widths whose tails are not a multiple of 4 or 8 (6, 13, 12), forward in every narrow
  // dtype and backward; the op's large structure there (wide: group_norm's several channels
  // per group, batch_norm's channels); width 1 (batch_norm in eval over 1031 channels); and
  // backward groups past 1024 values that end in a partial chunk (1500). A fourth audit's
  // faulty backends (statistics of row i % 1024, a tail left out past 1024 rows, eval running
  // stats of channel c % 1024, dx of the tail wrong past 1024 rows, the last partial chunk of
  // a backward group dropped) passed both tiers without them.
  for (std::int64_t w : {6, 13}) v.push_back(point(w, 1031, f32, f32, Regime::normal, EpsRegime::typical, false, false));
  for (DType x : {DType::bf16, DType::f16}) v.push_back(point(6, 1031, x, x, Regime::normal, EpsRegime::typical, false, false));
  v.push_back(point(1, 1031, f32, f32, Regime::normal, EpsRegime::typical, false, false));
  // (backward over 1031 groups in f32 only: the backward reference is the costly part of the
  // default run, and the faults found there were of the rows, not of the dtype)
  for (DType x : {f32, DType::bf16}) v.push_back(wide(point(12, 1031, x, x, Regime::normal, EpsRegime::typical, false, false)));
  if (bwd) {
    v.push_back(wide(point(12, 1031, f32, f32, Regime::normal, EpsRegime::typical, true, false)));
    v.push_back(point(12, 1031, f32, f32, Regime::normal, EpsRegime::typical, true, false));
    for (DType x : {f32, DType::bf16}) v.push_back(point(1500, 2, x, x, Regime::normal, EpsRegime::typical, true, false));
  }
  // Every view in f16 and f64 too, forward and backward (the quick tier had them in f32 and
  // bf16 only: a backend that read f16 views with dense strides, or f64 views from offset 0,
  // passed it; so did a backward doing so, PyTorch #111824's class).
  for (MemoryLayout l : all_memory_layouts())
    if (l != MemoryLayout::contiguous)
      for (DType x : {DType::f16, DType::f64})
        for (bool b : {false, true})
          if (!b || bwd) {
            Dims d = point(33, 3, x, x, Regime::normal, EpsRegime::typical, b, false);
            d.layout = l;
            v.push_back(d);
          }
  if (t == Tier::quick) return v;
  for (std::int64_t p = 2048; p <= 65536; p *= 2)
    for (std::int64_t w : {p - 1, p, p + 1}) v.push_back(point(w, 1, f32, f32, Regime::normal, EpsRegime::typical, false, false));
  for (std::int64_t p = 8192; p <= 65536; p *= 4)
    for (std::int64_t w : {p - 1, p, p + 1})
      for (DType x : {DType::bf16, DType::f16}) v.push_back(point(w, 1, x, x, Regime::normal, EpsRegime::typical, false, false));
  for (std::int64_t w : {2039, 4093, 8191, 16381, 65521}) v.push_back(point(w, 1, f32, f32, Regime::normal, EpsRegime::typical, false, false));
  for (std::int64_t w : {1, 3}) v.push_back(point(w, 65537, f32, f32, Regime::normal, EpsRegime::typical, false, true));
  for (Regime r : all_regimes())
    for (DType x : kAll)
      for (EpsRegime e : all_eps_regimes())
        if (e != EpsRegime::typical) v.push_back(point(33, 2, x, x, r, e, false, false));
  for (DType x : {DType::f16, DType::bf16, DType::f64})
    for (std::int64_t w : widths) v.push_back(point(w, 2, x, x, Regime::normal, EpsRegime::typical, false, true));
  if (bwd)
    for (Regime r : all_regimes())
      for (DType x : {DType::f16, DType::f64}) v.push_back(point(17, 2, x, x, r, EpsRegime::typical, true, false));
  for (MemoryLayout l : all_memory_layouts())
    if (l != MemoryLayout::contiguous)
      for (DType x : {DType::bf16, DType::f16, DType::f64})
        for (std::int64_t w : {1, 8, 65}) {
          Dims d = point(w, 5, x, x, Regime::normal, EpsRegime::typical, false, false);
          d.layout = l;
          v.push_back(d);
        }
  return v;
}

std::vector<Case> coverage_matrix(Tier t, std::int64_t* refused) {
  std::vector<Case> out;
  std::set<std::string> names;  // a point two sweeps share is generated once
  std::int64_t bad = 0;
  for (Op op : ops::all()) {
    if (!op.def().sample) continue;
    for (Dims d : matrix_points(op, t)) {
      const std::string name = matrix_case_name(op, d);
      if (!names.insert(name).second) continue;
      d.seed = name_seed(name);
      try {
        const ValidProblem vp = draw_problem(op, d);
        Case cs;
        cs.file = fmt::format("matrix:{}", to_string(t));
        cs.name = name;
        cs.layer = fmt::format("{}/matrix{}", op.name(), d.backward ? "/backward" : "");
        cs.note = fmt::format("coverage matrix ({}): {}", to_string(t), d.str());
        cs.problem = *vp;
        out.push_back(std::move(cs));
      } catch (const SpecError&) {
        ++bad;
      }
    }
  }
  if (refused) *refused = bad;
  return out;
}

}  // namespace normcheck
