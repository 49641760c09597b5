/*
 * Example normcheck plugin (plain C99, ABI 2): every op of normcheck's op table, forward and
 * backward (for the ops that have one), every convention key and value, every dtype, and any
 * strided input view.
 *
 * Ops (README "Ops, their inputs, outputs and convention keys"; the exact references are
 * src/ops/<op>/reference*.hpp and src/ops/common/row_norm.hpp, row_norm_backward.hpp):
 *   layer_norm, rms_norm                 rows over the trailing dims normalized_shape
 *   group_norm, instance_norm            per (n, group of C/G channels) over channels and spatial
 *   batch_norm                           per channel over N and spatial; running statistics
 *   l2_normalize, scale_norm             over `axes` (any subset), v = sum x^2 (no mean)
 *   ada_layer_norm, ada_rms_norm         y = (1 + scale_b) N0(x) + shift_b, gated h = x + gate_b y
 *   qk_norm                              q^, k^ per head (rms or l2 form) and their scores
 *   dyt                                  y = gamma tanh(alpha x) + beta
 *   fused_add_rms_norm, fused_add_layer_norm  h = x + residual (+ bias), y = norm(h)
 *   rms_norm_quant, layer_norm_quant     y_q = Q(norm(z) / s) into fp8_e4m3fn, fp8_e5m2, int8
 *
 * Numerics: every input is read once into a dense binary64 array (every value of every input
 * dtype is a double) and every computation runs in long double (x87 binary80 on x86-64: a
 * 64-bit significand, 11 bits beyond binary64, and an exponent range to 2^16383, so the
 * squares of binary64's extremes neither overflow nor underflow and no row scaling is needed).
 * Statistics are two-pass (the mean, corrected by the mean of the deviations from it; then the
 * centred sum of squares); a constant group is detected and centred exactly to 0 (so that
 * eps = 0 gives 0/0 = NaN there, as the reference says). A group holding NaN or inf gives NaN
 * for its outputs. Each output is rounded ONCE from long double to its dtype by round_grid()
 * (round to nearest, ties to even or away, gradual underflow, overflow to inf or to the
 * format's NaN, saturation where the convention asks), never long double -> double ->
 * narrower. The fused residual sum x + residual + bias is formed exactly (TwoSum) as a pair
 * hi + lo, so that h, and the norm input it rounds to, are correctly rounded.
 *
 * The saved statistics "mean" and "rstd" (optional outputs) are returned wherever the op
 * defines them.
 *
 * Structure: element access and rounding; parameters; the group kernels (normalize,
 * normalize_backward) every family shares; one function per op family and direction; the op
 * table (keys, inputs, outputs, checks, functions) that nc_plugin_supports and nc_plugin_run
 * dispatch through. Errors and refusals leave through stop() (one longjmp to the exported
 * function, which frees every allocation of the call).
 *
 * tools/plugins/misbehaving_plugin.c #includes this file (renaming nc_plugin_run,
 * nc_plugin_abi_version and nc_plugin_supports) and uses get(), set() and numel().
 *
 * Build: cc -std=c99 -O2 -shared -fPIC -I src/backends example_plugin.c -o libex.so -lm
 */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "normcheck_plugin.h"

/* The working type: x87 binary80 on x86-64 Linux (see the top). */
typedef long double wide;

NC_PLUGIN_EXPORT uint32_t nc_plugin_abi_version(void) { return NC_PLUGIN_ABI_VERSION; }

NC_PLUGIN_EXPORT const char* nc_plugin_name(void) { return "example_plugin 2.0 (binary64, two-pass)"; }

/* ==== errors and memory ==================================================================== */

/* Every error (nc_plugin_run) and every refusal (nc_plugin_supports) calls stop(), which
 * jumps back to the exported function with the message; allocations are freed there. */
static jmp_buf stop_point;
static char stop_message[512];

static void stop(const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  vsnprintf(stop_message, sizeof stop_message, format, ap);
  va_end(ap);
  longjmp(stop_point, 1);
}

/* Allocations of one call, in a list freed by release(). */
typedef union block {
  union block* next;
  wide align;
} block;
static block* allocated = NULL;

static void* grab(int64_t count, size_t size) {
  block* b;
  if (count < 0) count = 0;
  b = (block*)calloc(1, sizeof(block) + (size_t)count * size);
  if (!b) stop("out of memory (%lld elements of %u bytes)", (long long)count, (unsigned)size);
  b->next = allocated;
  allocated = b;
  return b + 1;
}

static wide* wides(int64_t count) { return (wide*)grab(count, sizeof(wide)); }

static void release(void) {
  while (allocated) {
    block* next = allocated->next;
    free(allocated);
    allocated = next;
  }
}

/* ==== element access through strides ======================================================= */

static int64_t numel(const nc_tensor* t) {
  int64_t n = 1;
  int d;
  for (d = 0; d < t->ndim; ++d) n *= t->shape[d];
  return n;
}

/* Storage offset (in elements) of the element with row-major flat index i. */
static int64_t offset_of(const nc_tensor* t, int64_t i) {
  int64_t off = 0;
  int d;
  for (d = t->ndim - 1; d >= 0; --d) {
    off += (i % t->shape[d]) * t->strides[d];
    i /= t->shape[d];
  }
  return off;
}

/* IEEE binary16 bits -> double (exact). */
static double half_to_double(uint16_t h) {
  const int e = (h >> 10) & 0x1f, f = h & 0x3ff;
  const double s = (h & 0x8000) ? -1.0 : 1.0;
  if (e == 0) return s * ldexp(f, -24);
  if (e == 31) return f ? NAN : s * INFINITY;
  return s * ldexp(1024 + f, e - 25);
}

/* OCP FP8 byte -> double (exact): e4m3fn (bias 7, no inf, NaN S.1111.111), e5m2 (bias 15). */
static double fp8_to_double(nc_dtype t, uint8_t b) {
  const int e4 = t == NC_FP8_E4M3FN, mbits = e4 ? 3 : 2, ebits = e4 ? 4 : 5, bias = e4 ? 7 : 15;
  const int e = (b >> mbits) & ((1 << ebits) - 1), m = b & ((1 << mbits) - 1), emax = (1 << ebits) - 1;
  const double s = (b & 0x80) ? -1.0 : 1.0;
  if (e4 && e == emax && m == (1 << mbits) - 1) return NAN;
  if (!e4 && e == emax) return m ? NAN : s * INFINITY;
  if (e == 0) return s * ldexp(m, 1 - bias - mbits);
  return s * ldexp(m | (1 << mbits), e - bias - mbits);
}

/* The element at storage offset o of t, as a double (exact for every dtype). */
static double at(const nc_tensor* t, int64_t o) {
  switch (t->dtype) {
    case NC_F64: return ((const double*)t->data)[o];
    case NC_F32: return ((const float*)t->data)[o];
    case NC_F16: return half_to_double(((const uint16_t*)t->data)[o]);
    case NC_BF16: {
      const uint32_t u = (uint32_t)((const uint16_t*)t->data)[o] << 16;
      float f;
      memcpy(&f, &u, 4);
      return f;
    }
    case NC_FP8_E4M3FN: case NC_FP8_E5M2: return fp8_to_double(t->dtype, ((const uint8_t*)t->data)[o]);
    case NC_INT8: return ((const int8_t*)t->data)[o];
  }
  return NAN;
}

/* Element with row-major flat index i. */
static double get(const nc_tensor* t, int64_t i) { return at(t, offset_of(t, i)); }

/* Every element of t, dense and row-major, read through its strides (NULL for no tensor). */
static double* load(const nc_tensor* t) {
  int64_t idx[NC_MAX_NDIM] = {0};
  int64_t n, i, off = 0;
  double* v;
  int d;
  if (!t) return NULL;
  n = numel(t);
  v = (double*)grab(n, sizeof(double));
  for (i = 0; i < n; ++i) {
    v[i] = at(t, off);
    for (d = t->ndim - 1; d >= 0; --d) { /* odometer: the next row-major index */
      off += t->strides[d];
      if (++idx[d] < t->shape[d]) break;
      off -= t->strides[d] * t->shape[d];
      idx[d] = 0;
    }
  }
  return v;
}

/* ==== rounding: one correct rounding from long double to each dtype ======================== */

/* A binary format: precision p (hidden bit included), frexp exponent emin of its smallest
 * normal 2^(emin - 1), largest finite value (src/core/dtype.cpp; OFP8 rev. 1.0 for fp8;
 * int8 as a format of precision 8 and emin 8, whose quantum is always 1). */
typedef struct {
  int p, emin;
  wide max;
} format;

static const format* format_of(nc_dtype t) {
  static const format f64 = {53, -1021, DBL_MAX}, f32 = {24, -125, FLT_MAX}, f16 = {11, -13, 65504.0L},
                      bf16 = {8, -125, 0x1.fep127L}, e4m3 = {4, -5, 448.0L}, e5m2 = {3, -13, 57344.0L}, i8 = {8, 8, 127.0L};
  switch (t) {
    case NC_F64: return &f64;
    case NC_F32: return &f32;
    case NC_F16: return &f16;
    case NC_BF16: return &bf16;
    case NC_FP8_E4M3FN: return &e4m3;
    case NC_FP8_E5M2: return &e5m2;
    case NC_INT8: return &i8;
  }
  return &f64;
}

/* hi + tail rounded once to the grid of a format of precision p and minimum exponent emin
 * (no overflow handling): to nearest, ties to even (or away from zero). tail is the
 * sign-carrying remainder of an exact value beyond hi, |tail| < half an ulp of hi in long
 * double (0 for a plain value): it decides where hi is exactly a midpoint of the grid (the
 * sticky bit), so a pair like TwoSum's is rounded once. The scaling by 2^-q is exact and the
 * remainder s - trunc(s) is exact, so this does not depend on the rounding mode. */
static wide round_grid(wide hi, wide tail, int p, int emin, int away) {
  int e, q;
  wide s, n, f, af;
  if (hi == 0 || isnan(hi) || isinf(hi)) return hi;
  (void)frexpl(hi, &e); /* hi = m 2^e, |m| in [0.5, 1) */
  q = (e < emin ? emin : e) - p;
  s = ldexpl(hi, -q);
  n = truncl(s);
  f = s - n;
  af = fabsl(f);
  if (af > 0.5L || (af == 0.5L && (tail != 0 ? (tail > 0) == (f > 0) : (away || fmodl(n, 2.0L) != 0)))) n += f > 0 ? 1 : -1;
  return ldexpl(n, q); /* keeps the sign of a zero: -0 for a tiny negative, as IEEE */
}

/* hi + tail rounded once to dtype t (ties away from zero when `away`): float formats overflow
 * to +-inf (fp8_e4m3fn, which has none, to NaN), int8 saturates to [-128, 127] and has no -0;
 * NaN stays NaN (int8 stores it as 0). */
static wide round_to(nc_dtype t, wide hi, wide tail, int away) {
  const format* f = format_of(t);
  wide r;
  if (isnan(hi)) return hi;
  if (t == NC_INT8) {
    if (hi >= 127) return 127;
    if (hi <= -128) return -128;
    r = round_grid(hi, tail, f->p, f->emin, away);
    return r == 0 ? 0 : r;
  }
  if (isinf(hi)) return t == NC_FP8_E4M3FN ? (wide)NAN : hi;
  r = round_grid(hi, tail, f->p, f->emin, away);
  if (fabsl(r) > f->max) return t == NC_FP8_E4M3FN ? (wide)NAN : r > 0 ? (wide)INFINITY : -(wide)INFINITY;
  return r;
}

/* The quantization Q(v) of the *_quant ops: with `saturate`, v clamped to +-max ([-128, 127]
 * for int8) first (OFP8 5.3.2 satfinite), then rounded per `away`; without, round_to's
 * overflow (e5m2 inf, e4m3fn NaN). */
static wide quantize(nc_dtype t, wide v, int away, int saturate) {
  if (isnan(v)) return v;
  if (saturate) {
    const wide hi = t == NC_INT8 ? 127 : format_of(t)->max, lo = t == NC_INT8 ? -128 : -hi;
    if (v >= hi) return hi;
    if (v <= lo) return lo;
  }
  return round_to(t, v, 0, away);
}

/* Stores r, a value of t's format (or inf / NaN), as element i (row-major flat index). */
static void store(nc_tensor* t, int64_t i, wide r) {
  const int64_t o = offset_of(t, i);
  switch (t->dtype) {
    case NC_F64: ((double*)t->data)[o] = (double)r; break; /* exact: r is a double */
    case NC_F32: ((float*)t->data)[o] = (float)r; break;   /* exact: r is a float */
    case NC_BF16: {
      const float f = isnan(r) ? NAN : (float)r; /* exact: a bf16 value is a float */
      uint32_t u;
      memcpy(&u, &f, 4);
      ((uint16_t*)t->data)[o] = (uint16_t)(u >> 16); /* the low half is zero */
      break;
    }
    case NC_F16: {
      uint16_t h = signbit(r) ? 0x8000 : 0;
      if (isnan(r)) h = 0x7e00;
      else if (isinf(r)) h |= 0x7c00;
      else if (r != 0) {
        int e;
        const wide m = frexpl(fabsl(r), &e); /* |r| = m 2^e, m in [0.5, 1) */
        if (e >= -13) h |= (uint16_t)(((e + 14) << 10) | ((int)ldexpl(m, 11) - 1024));
        else h |= (uint16_t)ldexpl(fabsl(r), 24); /* subnormal: a multiple of 2^-24 */
      }
      ((uint16_t*)t->data)[o] = h;
      break;
    }
    case NC_FP8_E4M3FN: case NC_FP8_E5M2: {
      const int e4 = t->dtype == NC_FP8_E4M3FN, mbits = e4 ? 3 : 2, bias = e4 ? 7 : 15;
      uint8_t b = signbit(r) ? 0x80 : 0;
      if (isnan(r)) b |= e4 ? 0x7f : 0x7e;
      else if (isinf(r)) b |= 0x7c; /* e5m2 only: e4m3fn rounds to NaN instead */
      else if (r != 0) {
        const wide a = fabsl(r);
        int e;
        if (a < ldexpl(1, 1 - bias)) b |= (uint8_t)ldexpl(a, bias - 1 + mbits); /* subnormal */
        else {
          const wide m = frexpl(a, &e);
          b |= (uint8_t)(((e - 1 + bias) << mbits) | ((int)ldexpl(m, mbits + 1) & ((1 << mbits) - 1)));
        }
      }
      ((uint8_t*)t->data)[o] = b;
      break;
    }
    case NC_INT8: ((int8_t*)t->data)[o] = isnan(r) ? 0 : (int8_t)r; break; /* int8 has no NaN: 0 */
  }
}

/* Element i of t = v rounded once (nearest even) to t's dtype; set() for a double (this
 * plugin computes in long double; tools/plugins/misbehaving_plugin.c writes with set()). */
#if defined(__GNUC__)
#define MAYBE_UNUSED __attribute__((unused))
#else
#define MAYBE_UNUSED
#endif
static void set_wide(nc_tensor* t, int64_t i, wide v) { store(t, i, round_to(t->dtype, v, 0, 0)); }
static void set(nc_tensor* t, int64_t i, double v) MAYBE_UNUSED;
static void set(nc_tensor* t, int64_t i, double v) { set_wide(t, i, v); }

/* ==== exact sums ============================================================================ */

/* TwoSum (Knuth): s + e == a + b exactly, s = fl(a + b). */
static void two_sum(wide a, wide b, wide* s, wide* e) {
  const wide t = a + b, bb = t - a;
  *s = t;
  *e = (a - (t - bb)) + (b - bb);
}

/* The exact sum a + b + c of three doubles as hi + lo, hi = the sum to nearest (long double),
 * lo the sign-carrying remainder (|lo| <= about half an ulp of hi; the part of the remainder
 * beyond lo is below 2^-128 of the sum): round_to(t, hi, lo) rounds the exact sum once. */
static void sum3(double a, double b, double c, wide* hi, wide* lo) {
  wide s1, e1, s2, e2, t, e3, l;
  if (!isfinite(a) || !isfinite(b) || !isfinite(c)) { /* inf or NaN: no remainder (TwoSum's would be NaN) */
    *hi = (wide)a + b + c;
    *lo = 0;
    return;
  }
  two_sum(a, b, &s1, &e1);
  two_sum(s1, c, &s2, &e2);
  two_sum(e1, e2, &t, &e3);
  two_sum(s2, t, hi, &l);
  *lo = l + e3;
}

/* ==== parameters ============================================================================ */

static const nc_param* param(const nc_problem* p, const char* name) {
  const nc_param* q = nc_param_find(p, name);
  if (!q) stop("parameter %s not given", name);
  return q;
}
static const char* text(const nc_problem* p, const char* name) { return param(p, name)->text; }
static int is(const nc_problem* p, const char* name, const char* word) { return strcmp(text(p, name), word) == 0; }

/* Index of `word` in the NULL-terminated list, or -1. */
static int word_index(const char* word, const char* const* words) {
  int i;
  for (i = 0; words[i]; ++i)
    if (strcmp(word, words[i]) == 0) return i;
  return -1;
}

enum { INSIDE_SQRT, OUTSIDE_SQRT, CLAMP_VAR, CLAMP_NORM };
enum { AFFINE_NONE, AFFINE_GAMMA, AFFINE_GAMMA_BETA, AFFINE_ONE_PLUS_W };
static const char* const placements[] = {"inside_sqrt", "outside_sqrt", "clamp_var", "clamp_norm", NULL};
static const char* const affines[] = {"none", "gamma", "gamma_beta", "one_plus_w", NULL};
static const char* const float_dtypes[] = {"f64", "f32", "f16", "bf16", NULL}; /* nc_dtype order */

static int affine_of(const nc_problem* p) { return word_index(text(p, "affine"), affines); }
static int unbiased(const nc_problem* p) { return is(p, "variance", "unbiased"); }
static int backward(const nc_problem* p) { return strcmp(p->direction, "backward") == 0; }

/* m = prod(normalized_shape): the width of a row of the row-wise ops. */
static int64_t row_width(const nc_problem* p) {
  const nc_param* q = param(p, "normalized_shape");
  int64_t m = 1;
  int32_t k;
  for (k = 0; k < q->count; ++k) m *= q->items[k];
  return m;
}

/* ==== the group kernels ===================================================================== */

/* How a group's statistic is formed (row_norm.hpp): mu = [center] (1/m) sum z,
 * v = (1/dof) sum (z - mu)^2 (dof = m, m - 1 for unbiased, 1 for l2_normalize's plain sum of
 * squares), D = D(v) per eps_placement. */
typedef struct {
  int center;
  int64_t dof;
  int place;
  wide eps;
} group_stat;

static group_stat make_stat(const nc_problem* p, int center, int64_t dof) {
  group_stat s;
  s.center = center;
  s.dof = dof;
  s.place = word_index(text(p, "eps_placement"), placements);
  s.eps = param(p, "eps")->number;
  return s;
}

/* D(v): inside_sqrt sqrt(v + eps), outside_sqrt sqrt(v) + eps, clamp_var sqrt(max(v, eps)),
 * clamp_norm max(sqrt(v), eps) (row_norm.hpp denominator). */
static wide denominator(const group_stat* s, wide v) {
  switch (s->place) {
    case OUTSIDE_SQRT: return sqrtl(v) + s->eps;
    case CLAMP_VAR: return sqrtl(v < s->eps ? s->eps : v);
    case CLAMP_NORM: {
      const wide r = sqrtl(v);
      return r < s->eps ? s->eps : r;
    }
    default: return sqrtl(v + s->eps);
  }
}

/* k = 2 D dD/dv (row_norm.hpp denominator_sensitivity): 1 inside the sqrt, D / sqrt(v) outside
 * (0 at v = 0), 0 or 1 for the clamps. */
static wide sensitivity(const group_stat* s, wide v, wide D) {
  switch (s->place) {
    case OUTSIDE_SQRT: return v > 0 ? D / sqrtl(v) : 0;
    case CLAMP_VAR: return v < s->eps ? 0 : 1;
    case CLAMP_NORM: return sqrtl(v) < s->eps ? 0 : 1;
    default: return 1;
  }
}

/* The moments of a group of m values z_j (+ lo_j: the exact remainder of a computed input, or
 * NULL): d_j = z_j + lo_j - mu, mu and v as in group_stat. Returns 0 when the group holds NaN or
 * inf. The mean is the plain mean corrected once by the mean of the deviations from it
 * (two-pass); a constant group has mu = its value and d = 0 exactly. */
static int moments(const group_stat* s, const wide* z, const wide* lo, int64_t m, wide* d, wide* mu, wide* v) {
  wide sum = 0, ss = 0;
  int64_t j;
  int constant = 1;
  for (j = 0; j < m; ++j) {
    if (!isfinite(z[j]) || (lo && !isfinite(lo[j]))) return 0;
    constant = constant && z[j] == z[0] && (!lo || lo[j] == lo[0]);
  }
  *mu = 0;
  if (s->center && constant && m > 0) {
    *mu = z[0] + (lo ? lo[0] : 0);
    for (j = 0; j < m; ++j) d[j] = 0;
  } else if (s->center) {
    /* mu = mu0 + c: mu0 the plain mean, c the mean of the deviations from it, kept apart so
     * that d = (z - mu0) - c loses nothing where z - mu0 is exact (z near mu0: shifted rows). */
    wide mu0, c;
    for (j = 0; j < m; ++j) sum += z[j] + (lo ? lo[j] : 0);
    mu0 = sum / m;
    sum = 0;
    for (j = 0; j < m; ++j) sum += (z[j] - mu0) + (lo ? lo[j] : 0);
    c = sum / m;
    for (j = 0; j < m; ++j) d[j] = ((z[j] - mu0) - c) + (lo ? lo[j] : 0);
    *mu = mu0 + c;
  } else {
    for (j = 0; j < m; ++j) d[j] = z[j] + (lo ? lo[j] : 0);
  }
  for (j = 0; j < m; ++j) ss += d[j] * d[j];
  *v = ss / s->dof;
  return 1;
}

/* Forward of one group: n_j = (z_j - mu) / D(v) (row_norm.hpp normalize_group, before the
 * affine); *mu, *D its statistics. A group holding NaN or inf gives NaN everywhere. */
static void normalize(const group_stat* s, const wide* z, const wide* lo, int64_t m, wide* n, wide* mu, wide* D) {
  wide v;
  int64_t j;
  if (!moments(s, z, lo, m, n, mu, &v)) {
    for (j = 0; j < m; ++j) n[j] = NAN;
    *mu = *D = NAN;
    return;
  }
  *D = denominator(s, v);
  for (j = 0; j < m; ++j) n[j] = n[j] / *D; /* eps = 0 on a zero group: 0/0 = NaN */
}

/* Backward of one group (row_norm_backward.hpp normalize_group_backward): with a_j = g_j dy_j
 * (gain g, NULL: 1), S = sum_j a_j n_j and k = 2 D dD/dv,
 *   dx_j = (a_j - [center] mean(a) - (k/dof) n_j S) / D.
 * Also returns n (for the parameter gradients). NaN everywhere for a group whose x or dy
 * holds NaN or inf. */
static void normalize_backward(const group_stat* s, const wide* x, const wide* dy, const wide* gain, int64_t m, wide* dx, wide* n) {
  wide mu, v, D, k, abar = 0, S = 0;
  int64_t j;
  int finite = moments(s, x, NULL, m, n, &mu, &v);
  for (j = 0; j < m; ++j) finite = finite && isfinite(dy[j]);
  if (!finite) {
    for (j = 0; j < m; ++j) dx[j] = n[j] = NAN;
    return;
  }
  D = denominator(s, v);
  k = sensitivity(s, v, D);
  for (j = 0; j < m; ++j) {
    const wide a = gain ? gain[j] * dy[j] : dy[j];
    n[j] = n[j] / D;
    abar += a;
    S += a * n[j];
  }
  abar = s->center ? abar / m : 0;
  for (j = 0; j < m; ++j) {
    const wide a = gain ? gain[j] * dy[j] : dy[j];
    dx[j] = (a - abar - k / s->dof * n[j] * S) / D;
  }
}

/* The affine gain g_j of a convention (1, gamma_j, 1 + w_j) and y = g_j n + [gamma_beta] beta_j. */
static wide gain_at(int affine, const double* gamma, int64_t j) {
  if (affine == AFFINE_NONE) return 1;
  if (affine == AFFINE_ONE_PLUS_W) return 1 + (wide)gamma[j];
  return gamma[j];
}
static wide apply_affine(int affine, const double* gamma, const double* beta, int64_t j, wide n) {
  const wide y = affine == AFFINE_NONE ? n : gain_at(affine, gamma, j) * n;
  return affine == AFFINE_GAMMA_BETA ? y + beta[j] : y;
}

/* Writes an optional output (saved statistic) element when the host asked for it. */
static void put_optional(const nc_problem* p, const char* name, int64_t i, wide v) {
  int32_t k;
  for (k = 0; k < p->num_outputs; ++k)
    if (strcmp(p->outputs[k].name, name) == 0) {
      set_wide(&p->outputs[k], i, v);
      p->output_written[k] = 1;
    }
}

/* A required output (checked present by the op's check). */
static nc_tensor* output(const nc_problem* p, const char* name) {
  nc_tensor* t = nc_output(p, name);
  if (!t) stop("output %s not given", name);
  return t;
}

static const double* input(const nc_problem* p, const char* name) { return load(nc_input(p, name)); }

/* ==== layer_norm, rms_norm ================================================================== */

/* Forward: per row of m = prod(normalized_shape) values, n = (x - [LN] mu) / D(v),
 * y = g round_nd(n) + b with round_nd the normalized_dtype's rounding (none: identity);
 * saved statistics mean (layer_norm) and rstd = 1 / D. */
static void rows_forward(const nc_problem* p, int center) {
  const nc_tensor* xt = nc_input(p, "x");
  const int64_t m = row_width(p), rows = m ? numel(xt) / m : 0;
  const double *x = load(xt), *gamma = input(p, "gamma"), *beta = input(p, "beta");
  const int affine = affine_of(p), nd = word_index(text(p, "normalized_dtype"), float_dtypes);
  const group_stat s = make_stat(p, center, unbiased(p) ? m - 1 : m);
  nc_tensor* y = output(p, "y");
  wide *z = wides(m), *n = wides(m), mu, D;
  int64_t r, j;
  for (r = 0; r < rows; ++r) {
    for (j = 0; j < m; ++j) z[j] = x[r * m + j];
    normalize(&s, z, NULL, m, n, &mu, &D);
    for (j = 0; j < m; ++j) {
      const wide nj = nd >= 0 ? round_to((nc_dtype)nd, n[j], 0, 0) : n[j];
      set_wide(y, r * m + j, apply_affine(affine, gamma, beta, j, nj));
    }
    if (center) put_optional(p, "mean", r, mu);
    put_optional(p, "rstd", r, 1 / D);
  }
}

/* Backward: dx per row (normalize_backward), dgamma_j = sum over rows of dy n (the same for
 * one_plus_w's w), dbeta_j = sum over rows of dy. */
static void rows_backward(const nc_problem* p, int center) {
  const nc_tensor* xt = nc_input(p, "x");
  const int64_t m = row_width(p), rows = m ? numel(xt) / m : 0;
  const double *x = load(xt), *dy = input(p, "dy"), *gamma = input(p, "gamma");
  const int affine = affine_of(p);
  const group_stat s = make_stat(p, center, unbiased(p) ? m - 1 : m);
  nc_tensor *dx = output(p, "dx"), *dgamma = nc_output(p, "dgamma"), *dbeta = nc_output(p, "dbeta");
  wide *xr = wides(m), *dr = wides(m), *g = wides(m), *gx = wides(m), *n = wides(m), *sg = wides(m), *sb = wides(m);
  int64_t r, j;
  for (j = 0; j < m; ++j) g[j] = gain_at(affine, gamma, j);
  for (r = 0; r < rows; ++r) {
    for (j = 0; j < m; ++j) {
      xr[j] = x[r * m + j];
      dr[j] = dy[r * m + j];
    }
    normalize_backward(&s, xr, dr, affine == AFFINE_NONE ? NULL : g, m, gx, n);
    for (j = 0; j < m; ++j) {
      set_wide(dx, r * m + j, gx[j]);
      sg[j] += dr[j] * n[j];
      sb[j] += dr[j];
    }
  }
  for (j = 0; j < m; ++j) {
    if (dgamma) set_wide(dgamma, j, sg[j]);
    if (dbeta) set_wide(dbeta, j, sb[j]);
  }
}

static void layer_norm_forward(const nc_problem* p) { rows_forward(p, 1); }
static void rms_norm_forward(const nc_problem* p) { rows_forward(p, 0); }
static void layer_norm_backward(const nc_problem* p) { rows_backward(p, 1); }
static void rms_norm_backward(const nc_problem* p) { rows_backward(p, 0); }

/* ==== group_norm, instance_norm ============================================================== */

/* x [N, C, *spatial] (group_norm.hpp): group (n, g) holds the contiguous channels g C/G ..
 * (g+1) C/G - 1 and every spatial position, m = (C/G) spatial values, normalized as a
 * layer_norm row with the per-channel gain; instance_norm is G = C. */
typedef struct {
  int64_t n, c, spatial, groups, cpg, m;
} channels;

static channels channel_layout(const nc_problem* p, int lead) {
  const nc_tensor* x = nc_input(p, "x");
  channels l;
  int d;
  l.n = x->shape[lead];
  l.c = x->shape[lead + 1];
  l.spatial = 1;
  for (d = lead + 2; d < x->ndim; ++d) l.spatial *= x->shape[d];
  l.groups = strcmp(p->op, "group_norm") == 0 ? (int64_t)param(p, "num_groups")->number : l.c;
  l.cpg = l.groups ? l.c / l.groups : 0;
  l.m = l.cpg * l.spatial;
  return l;
}

static void group_norm_forward(const nc_problem* p) {
  const channels l = channel_layout(p, 0);
  const double *x = input(p, "x"), *gamma = input(p, "gamma"), *beta = input(p, "beta");
  const int affine = affine_of(p);
  const group_stat s = make_stat(p, 1, unbiased(p) ? l.m - 1 : l.m);
  nc_tensor* y = output(p, "y");
  wide *z = wides(l.m), *n = wides(l.m), mu, D;
  int64_t grp, j;
  for (grp = 0; grp < l.n * l.groups; ++grp) {
    const int64_t off = grp * l.m, ch0 = (grp % l.groups) * l.cpg;
    for (j = 0; j < l.m; ++j) z[j] = x[off + j];
    normalize(&s, z, NULL, l.m, n, &mu, &D);
    for (j = 0; j < l.m; ++j) set_wide(y, off + j, apply_affine(affine, gamma, beta, ch0 + j / l.spatial, n[j]));
    put_optional(p, "mean", grp, mu);
    put_optional(p, "rstd", grp, 1 / D);
  }
}

/* dx per group with the per-channel gain; dgamma[c], dbeta[c] sum over n and spatial. */
static void group_norm_backward(const nc_problem* p) {
  const channels l = channel_layout(p, 0);
  const double *x = input(p, "x"), *dy = input(p, "dy"), *gamma = input(p, "gamma");
  const int affine = affine_of(p);
  const group_stat s = make_stat(p, 1, unbiased(p) ? l.m - 1 : l.m);
  nc_tensor *dx = output(p, "dx"), *dgamma = nc_output(p, "dgamma"), *dbeta = nc_output(p, "dbeta");
  wide *xr = wides(l.m), *dr = wides(l.m), *g = wides(l.m), *gx = wides(l.m), *n = wides(l.m);
  wide *sg = wides(l.c), *sb = wides(l.c);
  int64_t grp, j, ch;
  for (grp = 0; grp < l.n * l.groups; ++grp) {
    const int64_t off = grp * l.m, ch0 = (grp % l.groups) * l.cpg;
    for (j = 0; j < l.m; ++j) {
      xr[j] = x[off + j];
      dr[j] = dy[off + j];
      g[j] = gain_at(affine, gamma, ch0 + j / l.spatial);
    }
    normalize_backward(&s, xr, dr, affine == AFFINE_NONE ? NULL : g, l.m, gx, n);
    for (j = 0; j < l.m; ++j) {
      set_wide(dx, off + j, gx[j]);
      sg[ch0 + j / l.spatial] += dr[j] * n[j];
      sb[ch0 + j / l.spatial] += dr[j];
    }
  }
  for (ch = 0; ch < l.c; ++ch) {
    if (dgamma) set_wide(dgamma, ch, sg[ch]);
    if (dbeta) set_wide(dbeta, ch, sb[ch]);
  }
}

/* ==== batch_norm ============================================================================= */

/* batch_norm/reference.hpp: x [N, C, *spatial] (or [S, N, C, *spatial] with `sequence`: S
 * calls in a row). Per channel over its m = N spatial values:
 *   batch statistics (training, or track_running_stats = false): y as layer_norm's, `variance`;
 *   training with running stats, after each call: a = momentum, or 1 / num_batches_tracked
 *     (incremented first) for momentum none, rm <- (1 - a) rm + a mu,
 *     rv <- (1 - a) rv + a sum (x - mu)^2 / q, q = m - 1 (running_variance unbiased) or m;
 *     a channel holding NaN or inf makes both NaN;
 *   eval with running stats: y = g (x - rm) / D(rv) + b, elementwise.
 * Outputs running_mean, running_var (the state after the last call) and, for one call with
 * batch statistics, the saved mean and rstd per channel. */
typedef struct {
  int training, track, sequence;
} bn_mode;

static bn_mode bn_mode_of(const nc_problem* p) {
  bn_mode b;
  b.training = is(p, "training", "true");
  b.track = is(p, "track_running_stats", "true");
  b.sequence = is(p, "sequence", "true");
  return b;
}

/* Dense index of x[s, i, ch, j] (call s, sample i, channel ch, spatial position j). */
static int64_t bn_at(const channels* l, int64_t s, int64_t i, int64_t ch, int64_t j) {
  return ((s * l->n + i) * l->c + ch) * l->spatial + j;
}

static void batch_norm_forward(const nc_problem* p) {
  const bn_mode b = bn_mode_of(p);
  const nc_tensor* xt = nc_input(p, "x");
  const int64_t steps = b.sequence ? xt->shape[0] : 1;
  const channels l = channel_layout(p, b.sequence ? 1 : 0);
  const int64_t m = l.n * l.spatial;
  const double *x = load(xt), *gamma = input(p, "gamma"), *beta = input(p, "beta");
  const double *rm0 = input(p, "running_mean"), *rv0 = input(p, "running_var");
  const int affine = affine_of(p), batch_stats = b.training || !b.track, update = b.training && b.track;
  const int q_unbiased = b.track && is(p, "running_variance", "unbiased");
  const nc_param* mom = param(p, "momentum");
  const int cumulative = strcmp(mom->text, "none") == 0;
  const group_stat s = make_stat(p, 1, unbiased(p) ? m - 1 : m);
  const group_stat raw = make_stat(p, 1, 1); /* v = the plain centred sum of squares */
  int64_t tracked = (int64_t)param(p, "num_batches_tracked")->number;
  nc_tensor* y = output(p, "y");
  wide *rm = wides(l.c), *rv = wides(l.c), *z = wides(m), *n = wides(m), mu, D, ss;
  int64_t st, ch, i, j;
  for (ch = 0; ch < l.c; ++ch) {
    rm[ch] = rm0 ? rm0[ch] : 0;
    rv[ch] = rv0 ? rv0[ch] : 0;
  }
  for (st = 0; st < steps; ++st) {
    wide a = 0;
    if (update) a = cumulative ? 1 / (wide)++tracked : (wide)mom->number;
    for (ch = 0; ch < l.c; ++ch) {
      if (!batch_stats) { /* eval: the running statistics are constants */
        const wide Dr = denominator(&s, rv[ch]);
        for (i = 0; i < l.n; ++i)
          for (j = 0; j < l.spatial; ++j) {
            const int64_t e = bn_at(&l, st, i, ch, j);
            set_wide(y, e, apply_affine(affine, gamma, beta, ch, (x[e] - rm[ch]) / Dr));
          }
        continue;
      }
      for (i = 0; i < l.n; ++i)
        for (j = 0; j < l.spatial; ++j) z[i * l.spatial + j] = x[bn_at(&l, st, i, ch, j)];
      normalize(&s, z, NULL, m, n, &mu, &D);
      for (i = 0; i < l.n; ++i)
        for (j = 0; j < l.spatial; ++j) set_wide(y, bn_at(&l, st, i, ch, j), apply_affine(affine, gamma, beta, ch, n[i * l.spatial + j]));
      if (steps == 1) {
        put_optional(p, "mean", ch, mu);
        put_optional(p, "rstd", ch, 1 / D);
      }
      if (!update) continue;
      if (!moments(&raw, z, NULL, m, n, &mu, &ss)) {
        rm[ch] = rv[ch] = NAN;
        continue;
      }
      rm[ch] = (1 - a) * rm[ch] + a * mu;
      rv[ch] = (1 - a) * rv[ch] + a * (ss / (q_unbiased ? m - 1 : m));
    }
  }
  if (b.track)
    for (ch = 0; ch < l.c; ++ch) {
      set_wide(output(p, "running_mean"), ch, rm[ch]);
      set_wide(output(p, "running_var"), ch, rv[ch]);
    }
}

/* Backward of one call (sequence = false; batch_norm/reference_backward.hpp): through the
 * batch statistics per channel (normalize_backward) in training or without running stats;
 * in eval dx = g dy / D(rv) and n = (x - rm) / D(rv). dgamma[c] = sum dy n, dbeta[c] = sum dy. */
static void batch_norm_backward(const nc_problem* p) {
  const bn_mode b = bn_mode_of(p);
  const channels l = channel_layout(p, 0);
  const int64_t m = l.n * l.spatial;
  const double *x = input(p, "x"), *dy = input(p, "dy"), *gamma = input(p, "gamma");
  const double *rm = input(p, "running_mean"), *rv = input(p, "running_var");
  const int affine = affine_of(p), batch_stats = b.training || !b.track;
  const group_stat s = make_stat(p, 1, unbiased(p) ? m - 1 : m);
  nc_tensor *dx = output(p, "dx"), *dgamma = nc_output(p, "dgamma"), *dbeta = nc_output(p, "dbeta");
  wide *xr = wides(m), *dr = wides(m), *g = wides(m), *gx = wides(m), *n = wides(m);
  int64_t ch, i, j, k;
  for (ch = 0; ch < l.c; ++ch) {
    const wide gc = gain_at(affine, gamma, ch);
    wide sg = 0, sb = 0;
    for (i = 0; i < l.n; ++i)
      for (j = 0; j < l.spatial; ++j) {
        k = i * l.spatial + j;
        xr[k] = x[bn_at(&l, 0, i, ch, j)];
        dr[k] = dy[bn_at(&l, 0, i, ch, j)];
        g[k] = gc;
      }
    if (batch_stats) normalize_backward(&s, xr, dr, affine == AFFINE_NONE ? NULL : g, m, gx, n);
    else {
      const wide D = denominator(&s, rv[ch]);
      for (k = 0; k < m; ++k) {
        gx[k] = gc * dr[k] / D;
        n[k] = (xr[k] - rm[ch]) / D;
      }
    }
    for (i = 0; i < l.n; ++i)
      for (j = 0; j < l.spatial; ++j) {
        k = i * l.spatial + j;
        set_wide(dx, bn_at(&l, 0, i, ch, j), gx[k]);
        sg += dr[k] * n[k];
        sb += dr[k];
      }
    if (dgamma) set_wide(dgamma, ch, sg);
    if (dbeta) set_wide(dbeta, ch, sb);
  }
}

/* ==== l2_normalize, scale_norm =============================================================== */

/* l2_normalize/reference.hpp: over each group along the reduced axes (conv axes, negative from
 * the end, any subset; none given: the trailing normalized_shape), v = sum x^2 (no mean, no
 * estimator: dof 1), y = g x / D(v) (g = 1, or scale_norm's scalar input g). */
typedef struct {
  int64_t *base, *member, groups, m;
} reduction;

/* Row-major offsets in x of the combinations of the axes with red[k] == want. */
static int64_t* span(const nc_tensor* x, const int* red, int want, int64_t* count) {
  int64_t stride[NC_MAX_NDIM], total = 1, *off;
  int d;
  for (d = x->ndim - 1; d >= 0; --d) {
    stride[d] = d == x->ndim - 1 ? 1 : stride[d + 1] * x->shape[d + 1];
    if (red[d] == want) total *= x->shape[d];
  }
  off = (int64_t*)grab(total, sizeof(int64_t));
  *count = 1;
  for (d = 0; d < x->ndim; ++d) {
    int64_t c, i;
    if (red[d] != want) continue;
    for (c = *count - 1; c >= 0; --c) /* expand in place, back to front: row-major order */
      for (i = x->shape[d] - 1; i >= 0; --i) off[c * x->shape[d] + i] = off[c] + i * stride[d];
    *count *= x->shape[d];
  }
  return off;
}

static void reduced_axes(const nc_problem* p, const nc_tensor* x, int* red) {
  const nc_param* axes = param(p, "axes");
  const nc_param* ns = param(p, "normalized_shape");
  int d;
  for (d = 0; d < x->ndim; ++d) red[d] = 0;
  if (axes->count > 0) {
    for (d = 0; d < axes->count; ++d) red[axes->items[d] < 0 ? axes->items[d] + x->ndim : axes->items[d]] = 1;
  } else {
    for (d = x->ndim - ns->count; d < x->ndim; ++d) red[d] = 1;
  }
}

static reduction reduction_of(const nc_problem* p, const nc_tensor* x) {
  int red[NC_MAX_NDIM];
  reduction l;
  reduced_axes(p, x, red);
  l.base = span(x, red, 0, &l.groups);
  l.member = span(x, red, 1, &l.m);
  return l;
}

static void l2_forward(const nc_problem* p) {
  const nc_tensor* xt = nc_input(p, "x");
  const reduction l = reduction_of(p, xt);
  const double* x = load(xt);
  const nc_tensor* g = nc_input(p, "g"); /* scale_norm's scalar */
  const wide gain = g ? get(g, 0) : 1;
  const group_stat s = make_stat(p, 0, 1);
  nc_tensor* y = output(p, "y");
  wide *z = wides(l.m), *n = wides(l.m), mu, D;
  int64_t grp, j;
  for (grp = 0; grp < l.groups; ++grp) {
    for (j = 0; j < l.m; ++j) z[j] = x[l.base[grp] + l.member[j]];
    normalize(&s, z, NULL, l.m, n, &mu, &D);
    for (j = 0; j < l.m; ++j) set_wide(y, l.base[grp] + l.member[j], gain * n[j]);
  }
}

/* dx_j = (a_j - k n_j sum_i a_i n_i) / D with a = g dy (no centering, dof 1); scale_norm's
 * dg = sum over every element of dy n. */
static void l2_backward(const nc_problem* p) {
  const nc_tensor* xt = nc_input(p, "x");
  const reduction l = reduction_of(p, xt);
  const double *x = load(xt), *dy = input(p, "dy"), *g = input(p, "g");
  const group_stat s = make_stat(p, 0, 1);
  nc_tensor *dx = output(p, "dx"), *dg = nc_output(p, "dg");
  wide *xr = wides(l.m), *dr = wides(l.m), *gain = wides(l.m), *gx = wides(l.m), *n = wides(l.m), sum = 0;
  int64_t grp, j;
  for (j = 0; j < l.m; ++j) gain[j] = g ? g[0] : 1;
  for (grp = 0; grp < l.groups; ++grp) {
    for (j = 0; j < l.m; ++j) {
      xr[j] = x[l.base[grp] + l.member[j]];
      dr[j] = dy[l.base[grp] + l.member[j]];
    }
    normalize_backward(&s, xr, dr, g ? gain : NULL, l.m, gx, n);
    for (j = 0; j < l.m; ++j) {
      set_wide(dx, l.base[grp] + l.member[j], gx[j]);
      sum += dr[j] * n[j];
    }
  }
  if (dg) set_wide(dg, 0, sum);
}

/* ==== ada_layer_norm, ada_rms_norm =========================================================== */

/* ada_layer_norm/reference.hpp: x [B, *, d], scale s, shift b, gate g [B, d] shared by the
 * tokens of batch element b: n = N0(x) per row (layer_norm / rms_norm without affine),
 * y = (1 + s) n + b, gated h = x + g y. */
static void ada_forward(const nc_problem* p, int center) {
  const nc_tensor* xt = nc_input(p, "x");
  const int64_t d = xt->shape[xt->ndim - 1], rows = d ? numel(xt) / d : 0, per_batch = xt->shape[0] ? rows / xt->shape[0] : 1;
  const double *x = load(xt), *sc = input(p, "scale"), *sh = input(p, "shift"), *gt = input(p, "gate");
  const group_stat s = make_stat(p, center, unbiased(p) ? d - 1 : d);
  nc_tensor *y = output(p, "y"), *h = gt ? output(p, "h") : NULL;
  wide *z = wides(d), *n = wides(d), mu, D;
  int64_t r, j;
  for (r = 0; r < rows; ++r) {
    const int64_t pb = (r / per_batch) * d;
    for (j = 0; j < d; ++j) z[j] = x[r * d + j];
    normalize(&s, z, NULL, d, n, &mu, &D);
    for (j = 0; j < d; ++j) {
      const wide yv = (1 + (wide)sc[pb + j]) * n[j] + sh[pb + j];
      set_wide(y, r * d + j, yv);
      if (h) set_wide(h, r * d + j, z[j] + gt[pb + j] * yv);
    }
  }
}

/* Backward (gated = false): dx per row with the gain 1 + s; ds[b, j] = sum over the tokens of
 * b of dy n, db[b, j] = sum dy. */
static void ada_backward(const nc_problem* p, int center) {
  const nc_tensor* xt = nc_input(p, "x");
  const int64_t d = xt->shape[xt->ndim - 1], rows = d ? numel(xt) / d : 0, per_batch = xt->shape[0] ? rows / xt->shape[0] : 1;
  const nc_tensor* st = nc_input(p, "scale");
  const double *x = load(xt), *dy = input(p, "dy"), *sc = load(st);
  const group_stat s = make_stat(p, center, unbiased(p) ? d - 1 : d);
  nc_tensor *dx = output(p, "dx"), *ds = output(p, "ds"), *db = output(p, "db");
  wide *xr = wides(d), *dr = wides(d), *g = wides(d), *gx = wides(d), *n = wides(d);
  wide *sds = wides(numel(st)), *sdb = wides(numel(st));
  int64_t r, j;
  for (r = 0; r < rows; ++r) {
    const int64_t pb = (r / per_batch) * d;
    for (j = 0; j < d; ++j) {
      xr[j] = x[r * d + j];
      dr[j] = dy[r * d + j];
      g[j] = 1 + (wide)sc[pb + j];
    }
    normalize_backward(&s, xr, dr, g, d, gx, n);
    for (j = 0; j < d; ++j) {
      set_wide(dx, r * d + j, gx[j]);
      sds[pb + j] += dr[j] * n[j];
      sdb[pb + j] += dr[j];
    }
  }
  for (j = 0; j < numel(st); ++j) {
    set_wide(ds, j, sds[j]);
    set_wide(db, j, sdb[j]);
  }
}

static void ada_layer_norm_forward(const nc_problem* p) { ada_forward(p, 1); }
static void ada_rms_norm_forward(const nc_problem* p) { ada_forward(p, 0); }
static void ada_layer_norm_backward(const nc_problem* p) { ada_backward(p, 1); }
static void ada_rms_norm_backward(const nc_problem* p) { ada_backward(p, 0); }

/* ==== qk_norm ================================================================================ */

/* qk_norm/reference.hpp: q [B, H, T, d_k], k [B, H, S, d_k], each head vector normalized on its
 * own: rms form q^ = g n (RMSNorm, gains q_gamma / k_gamma per affine none | gamma |
 * one_plus_w), scores y[b,h,t,s] = q^_t . k^_s / sqrt(d_k); l2 form q^ = q / D(sum q^2)
 * (clamp_norm by default), y = g q^_t . k^_s. The scores are formed from the unrounded q^, k^. */
static wide* qk_normalize(const nc_problem* p, const char* name, const char* gain_name, int rms, nc_tensor* out) {
  const nc_tensor* t = nc_input(p, name);
  const int64_t dk = t->shape[3], rows = dk ? numel(t) / dk : 0;
  const double *v = load(t), *gamma = input(p, gain_name);
  const int affine = affine_of(p);
  const group_stat s = make_stat(p, 0, rms ? (unbiased(p) ? dk - 1 : dk) : 1);
  wide *all = wides(numel(t)), *z = wides(dk), mu, D;
  int64_t r, j;
  for (r = 0; r < rows; ++r) {
    for (j = 0; j < dk; ++j) z[j] = v[r * dk + j];
    normalize(&s, z, NULL, dk, all + r * dk, &mu, &D);
    for (j = 0; j < dk; ++j) {
      wide* e = &all[r * dk + j];
      if (rms) *e = apply_affine(affine, gamma, NULL, j, *e);
      set_wide(out, r * dk + j, *e);
    }
  }
  return all;
}

static void qk_norm_forward(const nc_problem* p) {
  const nc_tensor *q = nc_input(p, "q"), *k = nc_input(p, "k");
  const int rms = is(p, "qk_form", "rms");
  const int64_t BH = q->shape[0] * q->shape[1], T = q->shape[2], S = k->shape[2], dk = q->shape[3];
  const double* g = input(p, "g");
  const wide* qn = qk_normalize(p, "q", "q_gamma", rms, output(p, "q_hat"));
  const wide* kn = qk_normalize(p, "k", "k_gamma", rms, output(p, "k_hat"));
  const wide scale = rms ? 1 / sqrtl((wide)dk) : (wide)g[0];
  nc_tensor* y = output(p, "y");
  int64_t bt, s, l;
  for (bt = 0; bt < BH * T; ++bt)
    for (s = 0; s < S; ++s) {
      const wide *a = qn + bt * dk, *b = kn + ((bt / T) * S + s) * dk;
      wide dot = 0;
      for (l = 0; l < dk; ++l) dot += a[l] * b[l];
      set_wide(y, bt * S + s, scale * dot);
    }
}

/* ==== dyt ==================================================================================== */

/* dyt/reference.hpp (Dynamic Tanh): z = alpha x, t = tanh z, s = sech^2 z = 1 / cosh^2 z (never
 * 1 - t^2, which cancels for large |z|; 0 for an infinite z):
 *   forward  y = g t + b (g = 1 without gamma, b = 0 without beta);
 *   backward dx = dy g alpha s, dalpha = sum dy g x s, dgamma_j = sum dy t, dbeta_j = sum dy. */
static wide sech2(wide z) {
  const wide c = coshl(z);
  return isinf(z) ? 0 : 1 / (c * c);
}

static void dyt_forward(const nc_problem* p) {
  const nc_tensor* xt = nc_input(p, "x");
  const int64_t n = numel(xt), m = row_width(p);
  const double *x = load(xt), *alpha = input(p, "alpha"), *gamma = input(p, "gamma"), *beta = input(p, "beta");
  nc_tensor* y = output(p, "y");
  int64_t i;
  for (i = 0; i < n; ++i) {
    const wide t = tanhl((wide)alpha[0] * x[i]);
    const wide g = gamma ? (wide)gamma[i % m] : 1, b = beta ? (wide)beta[i % m] : 0;
    set_wide(y, i, g * t + b);
  }
}

static void dyt_backward(const nc_problem* p) {
  const nc_tensor* xt = nc_input(p, "x");
  const int64_t n = numel(xt), m = row_width(p);
  const double *x = load(xt), *dy = input(p, "dy"), *alpha = input(p, "alpha"), *gamma = input(p, "gamma");
  nc_tensor *dx = output(p, "dx"), *dalpha = output(p, "dalpha"), *dgamma = nc_output(p, "dgamma"), *dbeta = nc_output(p, "dbeta");
  wide *sg = wides(m), *sb = wides(m), sa = 0;
  const wide a = alpha[0];
  int64_t i, j;
  for (i = 0; i < n; ++i) {
    const wide z = a * x[i], t = tanhl(z), s = sech2(z), d = dy[i], g = gamma ? (wide)gamma[i % m] : 1;
    set_wide(dx, i, d * g * a * s);
    sa += d * g * x[i] * s;
    sg[i % m] += d * t;
    sb[i % m] += d;
  }
  set_wide(dalpha, 0, sa);
  for (j = 0; j < m; ++j) {
    if (dgamma) set_wide(dgamma, j, sg[j]);
    if (dbeta) set_wide(dbeta, j, sb[j]);
  }
}

/* ==== fused_add_rms_norm, fused_add_layer_norm =============================================== */

/* fused_add_norm/reference.hpp: h = x + residual (+ bias), exact, stored in residual's dtype
 * (output h); the norm reads z = h as stored (norm_input rounded) or the exact sum (unrounded,
 * carried as hi + lo); y = the row norm of z with the affine. Row r of such a problem: z, lo
 * (NULL when rounded) and h written. */
typedef struct {
  const double *x, *res, *bias;
  nc_dtype hdtype;
  int rounded;
  nc_tensor* h;
} residual_input;

static residual_input residual_of(const nc_problem* p) {
  residual_input ri;
  const nc_tensor* res = nc_input(p, "residual");
  ri.x = input(p, "x");
  ri.res = load(res);
  ri.bias = input(p, "bias");
  ri.hdtype = res ? res->dtype : NC_F64;
  ri.rounded = is(p, "norm_input", "rounded");
  ri.h = res ? output(p, "h") : NULL;
  return ri;
}

/* The norm input of row r (m values): z (and lo for the unrounded sum); h written. */
static void residual_row(const residual_input* ri, int64_t r, int64_t m, wide* z, wide* lo) {
  int64_t j;
  for (j = 0; j < m; ++j) {
    const int64_t i = r * m + j;
    wide hi, tail;
    if (!ri->res) {
      z[j] = ri->x[i];
      lo[j] = 0;
      continue;
    }
    sum3(ri->x[i], ri->res[i], ri->bias ? ri->bias[j] : 0.0, &hi, &tail);
    if (ri->h) store(ri->h, i, round_to(ri->h->dtype, hi, tail, 0));
    z[j] = ri->rounded ? round_to(ri->hdtype, hi, tail, 0) : hi;
    lo[j] = ri->rounded ? 0 : tail;
  }
}

static void fused_forward(const nc_problem* p, int center) {
  const nc_tensor* xt = nc_input(p, "x");
  const int64_t m = row_width(p), rows = m ? numel(xt) / m : 0;
  const residual_input ri = residual_of(p);
  const double *gamma = input(p, "gamma"), *beta = input(p, "beta");
  const int affine = affine_of(p);
  const group_stat s = make_stat(p, center, unbiased(p) ? m - 1 : m);
  nc_tensor* y = output(p, "y");
  wide *z = wides(m), *lo = wides(m), *n = wides(m), mu, D;
  int64_t r, j;
  for (r = 0; r < rows; ++r) {
    residual_row(&ri, r, m, z, lo);
    normalize(&s, z, lo, m, n, &mu, &D);
    for (j = 0; j < m; ++j) set_wide(y, r * m + j, apply_affine(affine, gamma, beta, j, n[j]));
  }
}

static void fused_add_layer_norm_forward(const nc_problem* p) { fused_forward(p, 1); }
static void fused_add_rms_norm_forward(const nc_problem* p) { fused_forward(p, 0); }

/* ==== rms_norm_quant, layer_norm_quant ======================================================= */

/* quant_norm/reference.hpp: y = the row norm of z (x, or the fused residual input as above),
 * exact; the scale s: static the input (divisor form; multiplier: 1 / the input), dynamic per
 * row max(max_j |y_j| / qmax, scale_floor) (qmax 448 e4m3fn, 57344 e5m2, 127 int8; NaN for a
 * row holding NaN), returned in binary32 (the multiplier form: 1/s); v = y / s with s as
 * stored (multiplier: y times the stored reciprocal); y_q = Q(v) per rounding and saturate. */
static void quant_forward(const nc_problem* p, int center) {
  const nc_tensor* xt = nc_input(p, "x");
  const int64_t m = row_width(p), rows = m ? numel(xt) / m : 0;
  const residual_input ri = residual_of(p);
  const double *gamma = input(p, "gamma"), *beta = input(p, "beta"), *given = input(p, "scale");
  const int affine = affine_of(p), dynamic = is(p, "quant_scale", "dynamic_per_token");
  const int divisor = is(p, "scale_form", "divisor"), saturate = is(p, "saturate", "true");
  const int away = is(p, "rounding", "nearest_away");
  const wide floor_ = param(p, "scale_floor")->number;
  const group_stat s = make_stat(p, center, unbiased(p) ? m - 1 : m);
  nc_tensor *y = output(p, "y"), *scale = dynamic ? output(p, "scale") : NULL;
  const wide qmax = y->dtype == NC_INT8 ? 127 : format_of(y->dtype)->max;
  wide *z = wides(m), *lo = wides(m), *n = wides(m), mu, D;
  int64_t r, j;
  for (r = 0; r < rows; ++r) {
    wide amax = 0, sr, mult = 0;
    int nan = 0;
    residual_row(&ri, r, m, z, lo);
    normalize(&s, z, lo, m, n, &mu, &D);
    for (j = 0; j < m; ++j) {
      n[j] = apply_affine(affine, gamma, beta, j, n[j]); /* y, exact */
      nan = nan || isnan(n[j]);
      if (fabsl(n[j]) > amax) amax = fabsl(n[j]);
    }
    if (dynamic) {
      sr = nan ? (wide)NAN : amax / qmax;
      if (sr < floor_) sr = floor_; /* NaN stays NaN */
      set_wide(scale, r, divisor ? sr : 1 / sr);
      /* v divides by the scale as stored (binary32); the multiplier form multiplies by the
       * stored reciprocal. */
      if (divisor) sr = round_to(NC_F32, sr, 0, 0);
      else mult = round_to(NC_F32, 1 / sr, 0, 0);
    } else {
      sr = given[0];
      mult = given[0];
    }
    for (j = 0; j < m; ++j) {
      const wide v = divisor ? n[j] / sr : n[j] * mult;
      store(y, r * m + j, quantize(y->dtype, v, away, saturate));
    }
  }
}

static void layer_norm_quant_forward(const nc_problem* p) { quant_forward(p, 1); }
static void rms_norm_quant_forward(const nc_problem* p) { quant_forward(p, 0); }

/* ==== what each op takes: keys, inputs, outputs, checks ====================================== */

/* Kinds of parameter values. */
enum { K_NONNEG, K_WORD, K_BOOL, K_SHAPE, K_AXES, K_DTYPE_OR_NONE, K_GROUPS, K_COUNT, K_MOMENTUM };

typedef struct {
  const char* name;
  int kind;
  const char* const* words; /* K_WORD: the values implemented */
} key;

static const char* const variances[] = {"biased", "unbiased", NULL};
static const char* const acc_dtypes[] = {"f64", "f32", "f16", "bf16", NULL}; /* long double is wider than each */
static const char* const directions[] = {"forward", "backward", NULL};
static const char* const norm_inputs[] = {"rounded", "unrounded", NULL};
static const char* const quant_scales[] = {"dynamic_per_token", "static_per_tensor", NULL};
static const char* const scale_forms[] = {"divisor", "multiplier", NULL};
static const char* const roundings[] = {"nearest_even", "nearest_away", NULL};
static const char* const qk_forms[] = {"rms", "l2", NULL};

/* The common keys every op carries (README "Case files"). */
static const key common_keys[] = {{"eps", K_NONNEG, NULL},        {"eps_placement", K_WORD, placements},
                                  {"variance", K_WORD, variances}, {"affine", K_WORD, affines},
                                  {"normalized_shape", K_SHAPE, NULL}, {"acc_dtype", K_WORD, acc_dtypes},
                                  {"direction", K_WORD, directions}, {NULL, 0, NULL}};
static const key row_keys[] = {{"normalized_dtype", K_DTYPE_OR_NONE, NULL}, {NULL, 0, NULL}};
static const key group_keys[] = {{"num_groups", K_GROUPS, NULL}, {NULL, 0, NULL}};
static const key no_keys[] = {{NULL, 0, NULL}};
static const key bn_keys[] = {{"momentum", K_MOMENTUM, NULL}, {"num_batches_tracked", K_COUNT, NULL}, {"training", K_BOOL, NULL},
                              {"track_running_stats", K_BOOL, NULL}, {"running_variance", K_WORD, variances},
                              {"sequence", K_BOOL, NULL}, {NULL, 0, NULL}};
static const key l2_keys[] = {{"axes", K_AXES, NULL}, {NULL, 0, NULL}};
static const key ada_keys[] = {{"gated", K_BOOL, NULL}, {NULL, 0, NULL}};
static const key qk_keys[] = {{"qk_form", K_WORD, qk_forms}, {NULL, 0, NULL}};
static const key fused_keys[] = {{"norm_input", K_WORD, norm_inputs}, {NULL, 0, NULL}};
static const key quant_keys[] = {{"norm_input", K_WORD, norm_inputs}, {"quant_scale", K_WORD, quant_scales},
                                 {"scale_form", K_WORD, scale_forms}, {"saturate", K_BOOL, NULL},
                                 {"rounding", K_WORD, roundings},     {"scale_floor", K_NONNEG, NULL},
                                 {NULL, 0, NULL}};

static const key* find_key(const key* keys, const char* name) {
  for (; keys->name; ++keys)
    if (strcmp(keys->name, name) == 0) return keys;
  return NULL;
}

/* Refuses a value this plugin does not implement. */
static void check_value(const nc_param* q, const key* k) {
  const double v = q->number;
  int ok = 1;
  switch (k->kind) {
    case K_NONNEG: ok = isfinite(v) && v >= 0; break;
    case K_WORD: ok = word_index(q->text, k->words) >= 0; break;
    case K_BOOL: ok = strcmp(q->text, "true") == 0 || strcmp(q->text, "false") == 0; break;
    case K_SHAPE: {
      int32_t i;
      ok = q->count >= 0 && q->count <= NC_MAX_NDIM; /* [] for the ops that do not read it */
      for (i = 0; ok && i < q->count; ++i) ok = q->items[i] > 0;
      break;
    }
    case K_AXES: ok = q->count >= 0 && q->count <= NC_MAX_NDIM; break;
    case K_DTYPE_OR_NONE: ok = strcmp(q->text, "none") == 0 || word_index(q->text, float_dtypes) >= 0; break;
    case K_GROUPS: ok = v >= 1 && v == floor(v); break;
    case K_COUNT: ok = v >= 0 && v == floor(v) && v < 9e15; break;
    case K_MOMENTUM: ok = strcmp(q->text, "none") == 0 || (v >= 0 && v <= 1); break;
  }
  if (!ok) stop("%s = %s not implemented", q->name, q->text);
}

/* Refuses unless `cond`. */
static void need(int cond, const char* format, const char* what) {
  if (!cond) stop(format, what);
}

/* The tensor of the problem's inputs or outputs named `name` has n elements (when present). */
static void need_numel(const nc_tensor* t, int64_t n, const char* what) {
  if (t && numel(t) != n) stop("%s has %lld elements, expected %lld", what, (long long)numel(t), (long long)n);
}

/* The affine parameters gamma (and beta) of m elements exactly per the affine. */
static void check_affine(const nc_problem* p, const char* gname, const char* bname, int64_t m, int allowed) {
  const int a = affine_of(p);
  need((allowed >> a) & 1, "affine = %s not implemented for this op", text(p, "affine"));
  need((a != AFFINE_NONE) == (nc_input(p, gname) != NULL), "input %s does not match the affine", gname);
  if (bname) need((a == AFFINE_GAMMA_BETA) == (nc_input(p, bname) != NULL), "input %s does not match the affine", bname);
  need_numel(nc_input(p, gname), m, gname);
  if (bname) need_numel(nc_input(p, bname), m, bname);
}
#define ALL_AFFINES 15
#define AFFINES_NOT_ONE_PLUS_W 7
#define AFFINE_NONE_ONLY 1

/* normalized_shape = the trailing dims of x; returns m. */
static int64_t check_trailing(const nc_problem* p, const nc_tensor* x) {
  const nc_param* ns = param(p, "normalized_shape");
  int32_t k;
  need(ns->count >= 1 && ns->count <= x->ndim, "normalized_shape %s is not the trailing dims of x", ns->text);
  for (k = 0; k < ns->count; ++k)
    need(ns->items[k] == x->shape[x->ndim - ns->count + k], "normalized_shape %s is not the trailing dims of x", ns->text);
  return row_width(p);
}

static void need_dof(const nc_problem* p, int64_t m) { need(!unbiased(p) || m >= 2, "%s variance needs 2 values per group", "unbiased"); }

/* dy (backward) has x's elements. */
static void check_dy(const nc_problem* p, const nc_tensor* x) {
  if (backward(p)) {
    need(nc_input(p, "dy") != NULL, "%s missing", "input dy");
    need_numel(nc_input(p, "dy"), numel(x), "dy");
  }
}

static void check_rows(const nc_problem* p) {
  const nc_tensor* x = nc_input(p, "x");
  const int64_t m = check_trailing(p, x);
  check_affine(p, "gamma", "beta", m, ALL_AFFINES);
  need_dof(p, m);
  check_dy(p, x);
}

static void check_channels(const nc_problem* p, int lead) {
  const nc_tensor* x = nc_input(p, "x");
  channels l;
  need(x->ndim >= 2 + lead, "%s needs x of shape [N, C, *spatial]", p->op);
  l = channel_layout(p, lead);
  need(l.groups >= 1 && l.c % l.groups == 0, "num_groups = %s does not divide C",
       strcmp(p->op, "group_norm") == 0 ? text(p, "num_groups") : "C");
  check_affine(p, "gamma", "beta", l.c, ALL_AFFINES);
  check_dy(p, x);
}

static void check_group_norm(const nc_problem* p) {
  check_channels(p, 0);
  need_dof(p, channel_layout(p, 0).m);
}

static void check_batch_norm(const nc_problem* p) {
  const bn_mode b = bn_mode_of(p);
  const int lead = b.sequence ? 1 : 0;
  channels l;
  need(!(backward(p) && b.sequence), "%s: backward covers one call (sequence = false)", p->op);
  check_channels(p, lead);
  l = channel_layout(p, lead);
  need((nc_input(p, "running_mean") != NULL) == b.track, "%s: running_mean does not match track_running_stats", p->op);
  need((nc_input(p, "running_var") != NULL) == b.track, "%s: running_var does not match track_running_stats", p->op);
  need_numel(nc_input(p, "running_mean"), l.c, "running_mean");
  need_numel(nc_input(p, "running_var"), l.c, "running_var");
  if (b.training || !b.track) need(l.n * l.spatial >= 2, "%s: batch statistics need 2 values per channel", p->op);
  need_dof(p, l.n * l.spatial);
}

static void check_l2(const nc_problem* p) {
  const nc_tensor* x = nc_input(p, "x");
  const nc_param* axes = param(p, "axes");
  int seen[NC_MAX_NDIM] = {0};
  int32_t k;
  need(!unbiased(p), "%s has no variance estimator (variance = unbiased not implemented)", p->op);
  check_affine(p, "gamma", NULL, 0, AFFINE_NONE_ONLY);
  for (k = 0; k < axes->count; ++k) {
    const int64_t a = axes->items[k] < 0 ? axes->items[k] + x->ndim : axes->items[k];
    need(a >= 0 && a < x->ndim && !seen[a], "axes %s out of range or repeated", axes->text);
    seen[a] = 1;
  }
  if (axes->count == 0) check_trailing(p, x);
  if (strcmp(p->op, "scale_norm") == 0) {
    need(nc_input(p, "g") != NULL, "%s missing", "input g");
    need_numel(nc_input(p, "g"), 1, "g");
  } else {
    need(nc_input(p, "g") == NULL, "%s takes no input g", p->op);
  }
  check_dy(p, x);
}

static void check_ada(const nc_problem* p) {
  const nc_tensor* x = nc_input(p, "x");
  const nc_param* ns = param(p, "normalized_shape");
  const int gated = is(p, "gated", "true");
  need(x->ndim >= 2, "%s needs x of shape [B, *, d]", p->op);
  need(ns->count == 1 && ns->items[0] == x->shape[x->ndim - 1], "%s normalizes the last dim only", p->op);
  check_affine(p, "gamma", "beta", 0, AFFINE_NONE_ONLY);
  need(nc_input(p, "scale") && nc_input(p, "shift"), "%s needs inputs scale and shift", p->op);
  need_numel(nc_input(p, "scale"), x->shape[0] * x->shape[x->ndim - 1], "scale");
  need_numel(nc_input(p, "shift"), x->shape[0] * x->shape[x->ndim - 1], "shift");
  need((nc_input(p, "gate") != NULL) == gated, "%s: input gate does not match gated", p->op);
  need_numel(nc_input(p, "gate"), x->shape[0] * x->shape[x->ndim - 1], "gate");
  need(!(backward(p) && gated), "%s: backward covers the ungated output (gated = false)", p->op);
  need_dof(p, x->shape[x->ndim - 1]);
  check_dy(p, x);
}

static void check_qk(const nc_problem* p) {
  const nc_tensor *q = nc_input(p, "q"), *k = nc_input(p, "k");
  need(q && k && q->ndim == 4 && k->ndim == 4, "%s needs q [B, H, T, d_k] and k [B, H, S, d_k]", p->op);
  need(k->shape[0] == q->shape[0] && k->shape[1] == q->shape[1] && k->shape[3] == q->shape[3], "%s: k's B, H, d_k differ from q's",
       p->op);
  if (is(p, "qk_form", "rms")) {
    check_affine(p, "q_gamma", NULL, q->shape[3], (1 << AFFINE_NONE) | (1 << AFFINE_GAMMA) | (1 << AFFINE_ONE_PLUS_W));
    check_affine(p, "k_gamma", NULL, q->shape[3], (1 << AFFINE_NONE) | (1 << AFFINE_GAMMA) | (1 << AFFINE_ONE_PLUS_W));
    need(nc_input(p, "g") == NULL, "%s: the rms form takes no g", p->op);
    need_dof(p, q->shape[3]);
  } else {
    check_affine(p, "q_gamma", NULL, 0, AFFINE_NONE_ONLY);
    need(nc_input(p, "k_gamma") == NULL, "%s: the l2 form takes no k_gamma", p->op);
    need(!unbiased(p), "%s (l2 form): variance = unbiased not implemented", p->op);
    need(nc_input(p, "g") != NULL, "%s missing", "input g");
    need_numel(nc_input(p, "g"), 1, "g");
  }
}

static void check_dyt(const nc_problem* p) {
  const nc_tensor* x = nc_input(p, "x");
  const int64_t m = check_trailing(p, x);
  need(!unbiased(p), "%s has no statistic (variance = unbiased not implemented)", p->op);
  check_affine(p, "gamma", "beta", m, AFFINES_NOT_ONE_PLUS_W);
  need(nc_input(p, "alpha") != NULL, "%s missing", "input alpha");
  need_numel(nc_input(p, "alpha"), 1, "alpha");
  check_dy(p, x);
}

/* The residual (x's shape; h in its dtype) and bias (normalized_shape, only with a residual). */
static void check_residual(const nc_problem* p, int required) {
  const nc_tensor *x = nc_input(p, "x"), *res = nc_input(p, "residual");
  need(res != NULL || !required, "%s needs input residual", p->op);
  need_numel(res, numel(x), "residual");
  need(res != NULL || !nc_input(p, "bias"), "%s: bias without residual", p->op);
  need_numel(nc_input(p, "bias"), row_width(p), "bias");
  need((res != NULL) == (nc_output(p, "h") != NULL), "%s: output h does not match the residual", p->op);
}

static void check_fused(const nc_problem* p) {
  check_rows(p);
  check_residual(p, 1);
}

static void check_quant(const nc_problem* p) {
  const nc_tensor* y = nc_output(p, "y");
  const int dynamic = is(p, "quant_scale", "dynamic_per_token");
  check_rows(p);
  check_residual(p, 0);
  need(y && (y->dtype == NC_FP8_E4M3FN || y->dtype == NC_FP8_E5M2 || y->dtype == NC_INT8), "%s quantizes into fp8_e4m3fn, fp8_e5m2 or int8",
       p->op);
  need((nc_input(p, "scale") != NULL) == !dynamic, "%s: input scale does not match quant_scale", p->op);
  need((nc_output(p, "scale") != NULL) == dynamic, "%s: output scale does not match quant_scale", p->op);
  need_numel(nc_input(p, "scale"), 1, "scale");
  need(dynamic || param(p, "scale_floor")->number == 0, "%s: scale_floor with a static scale", p->op);
}

/* ==== the op table =========================================================================== */

typedef void (*op_fn)(const nc_problem* p);

typedef struct {
  const char* name;
  const key* keys;          /* the op's own keys (beside common_keys) */
  const char* inputs;       /* the inputs it reads, "|"-separated (and dy in backward) */
  const char* outputs;      /* the outputs it writes forward */
  const char* grads;        /* the outputs it writes backward (NULL: no backward) */
  void (*check)(const nc_problem* p);
  op_fn forward, backward;
} op_entry;

static void check_group_norm_or_instance(const nc_problem* p) { check_group_norm(p); }

static const op_entry op_table[] = {
    {"layer_norm", row_keys, "|x|gamma|beta|", "|y|mean|rstd|", "|dx|dgamma|dbeta|", check_rows, layer_norm_forward, layer_norm_backward},
    {"rms_norm", row_keys, "|x|gamma|beta|", "|y|rstd|", "|dx|dgamma|dbeta|", check_rows, rms_norm_forward, rms_norm_backward},
    {"group_norm", group_keys, "|x|gamma|beta|", "|y|mean|rstd|", "|dx|dgamma|dbeta|", check_group_norm_or_instance, group_norm_forward,
     group_norm_backward},
    {"instance_norm", no_keys, "|x|gamma|beta|", "|y|mean|rstd|", "|dx|dgamma|dbeta|", check_group_norm_or_instance, group_norm_forward,
     group_norm_backward},
    {"batch_norm", bn_keys, "|x|gamma|beta|running_mean|running_var|", "|y|running_mean|running_var|mean|rstd|", "|dx|dgamma|dbeta|",
     check_batch_norm, batch_norm_forward, batch_norm_backward},
    {"l2_normalize", l2_keys, "|x|", "|y|", "|dx|", check_l2, l2_forward, l2_backward},
    {"scale_norm", l2_keys, "|x|g|", "|y|", "|dx|dg|", check_l2, l2_forward, l2_backward},
    {"ada_layer_norm", ada_keys, "|x|scale|shift|gate|", "|y|h|", "|dx|ds|db|", check_ada, ada_layer_norm_forward, ada_layer_norm_backward},
    {"ada_rms_norm", ada_keys, "|x|scale|shift|gate|", "|y|h|", "|dx|ds|db|", check_ada, ada_rms_norm_forward, ada_rms_norm_backward},
    {"qk_norm", qk_keys, "|q|k|q_gamma|k_gamma|g|", "|q_hat|k_hat|y|", NULL, check_qk, qk_norm_forward, NULL},
    {"dyt", no_keys, "|x|alpha|gamma|beta|", "|y|", "|dx|dalpha|dgamma|dbeta|", check_dyt, dyt_forward, dyt_backward},
    {"fused_add_rms_norm", fused_keys, "|x|residual|bias|gamma|beta|", "|y|h|", NULL, check_fused, fused_add_rms_norm_forward, NULL},
    {"fused_add_layer_norm", fused_keys, "|x|residual|bias|gamma|beta|", "|y|h|", NULL, check_fused, fused_add_layer_norm_forward, NULL},
    {"rms_norm_quant", quant_keys, "|x|residual|bias|gamma|beta|scale|", "|y|scale|h|", NULL, check_quant, rms_norm_quant_forward, NULL},
    {"layer_norm_quant", quant_keys, "|x|residual|bias|gamma|beta|scale|", "|y|scale|h|", NULL, check_quant, layer_norm_quant_forward,
     NULL},
};

/* Whether `name` is one of the "|a|b|" list. */
static int listed(const char* list, const char* name) {
  const size_t n = strlen(name);
  const char* s = list;
  while ((s = strstr(s, name)) != NULL) {
    if (s > list && s[-1] == '|' && s[n] == '|') return 1;
    s += 1;
  }
  return 0;
}

static const op_entry* find_op(const nc_problem* p) {
  size_t i;
  for (i = 0; i < sizeof op_table / sizeof op_table[0]; ++i)
    if (strcmp(op_table[i].name, p->op) == 0) return &op_table[i];
  stop("op %s not implemented", p->op);
  return NULL;
}

/* Everything nc_plugin_supports checks: the op and direction, every parameter (known key,
 * implemented value, every key given), the inputs (known names, float dtypes), the outputs
 * (known names), and the op's own shape rules. */
static const op_entry* check_problem(const nc_problem* p) {
  const op_entry* op = find_op(p);
  const int bwd = backward(p);
  int32_t i;
  const key* k;
  need(p->abi_version == NC_PLUGIN_ABI_VERSION, "%s", "host ABI version differs");
  need(bwd || strcmp(p->direction, "forward") == 0, "direction %s not implemented", p->direction);
  need(!bwd || op->grads != NULL, "%s has no backward here", p->op);
  for (i = 0; i < p->num_params; ++i) {
    const nc_param* q = &p->params[i];
    k = find_key(common_keys, q->name);
    if (!k) k = find_key(op->keys, q->name);
    if (!k) stop("%s = %s not implemented (a key this plugin does not know)", q->name, q->text);
    check_value(q, k);
  }
  for (k = common_keys; k->name; ++k) (void)param(p, k->name);
  for (k = op->keys; k->name; ++k) (void)param(p, k->name);
  need(strcmp(text(p, "direction"), p->direction) == 0, "direction parameter %s disagrees with the problem", text(p, "direction"));
  for (i = 0; i < p->num_inputs; ++i) {
    const nc_tensor* t = &p->inputs[i];
    need(listed(op->inputs, t->name) || (bwd && strcmp(t->name, "dy") == 0), "input %s not implemented", t->name);
    need(t->dtype == NC_F64 || t->dtype == NC_F32 || t->dtype == NC_F16 || t->dtype == NC_BF16, "input %s: dtype not implemented", t->name);
    need(t->ndim >= 0 && t->ndim <= NC_MAX_NDIM, "input %s: ndim out of range", t->name);
  }
  for (i = 0; i < p->num_outputs; ++i) {
    const nc_tensor* t = &p->outputs[i];
    need(listed(bwd ? op->grads : op->outputs, t->name), "output %s not implemented", t->name);
    need(t->dtype >= NC_F64 && t->dtype <= NC_INT8, "output %s: dtype not implemented", t->name);
  }
  need(nc_input(p, strcmp(p->op, "qk_norm") == 0 ? "q" : "x") != NULL, "%s", "input x missing");
  op->check(p);
  return op;
}

NC_PLUGIN_EXPORT int nc_plugin_supports(const nc_problem* p, char* reason, size_t n) {
  if (setjmp(stop_point)) {
    release();
    snprintf(reason, n, "example_plugin: %s", stop_message);
    return 0;
  }
  (void)check_problem(p);
  release();
  return 1;
}

NC_PLUGIN_EXPORT int nc_plugin_run(const nc_problem* p, char* error, size_t n) {
  const op_entry* op;
  if (setjmp(stop_point)) {
    release();
    snprintf(error, n, "example_plugin: %s", stop_message);
    return 1;
  }
  op = check_problem(p);
  if (backward(p)) op->backward(p);
  else op->forward(p);
  release();
  return 0;
}
