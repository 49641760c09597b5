/*
 * Example normcheck plugin (C99, ABI 2): layer_norm and rms_norm, every convention and dtype,
 * any strided input, computed in binary64 and rounded once to the output dtype.
 *
 * Numerics: per row, two passes in binary64 (mean, then the sum of squared deviations, or
 * the mean of squares for rms_norm) over values scaled by a power of two, 2^-k with 2^k
 * near the row's largest magnitude, so that squares neither overflow (values near 1e300)
 * nor underflow (subnormals); the scaling is exact and cancels in the quotient. eps is
 * scaled by 2^-2k (inside the sqrt, clamp_var) or 2^-k (outside_sqrt, clamp_norm) to match.
 * Each output element is then (x - mean) / d * gamma + beta in binary64, rounded once to the
 * output dtype (round to nearest even, subnormals, overflow to inf). With binary64 a f32,
 * f16 or bf16 result is within ~0.5 ULP plus the eps rounding; a f64 result is a
 * backward-stable two-pass kernel (gate: stab <= 9 + sqrt(m)).
 *
 * Build: see tools/plugins/CMakeLists.txt (cc -shared -fPIC -I src/backends example_plugin.c).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "normcheck_plugin.h"

NC_PLUGIN_EXPORT uint32_t nc_plugin_abi_version(void) { return NC_PLUGIN_ABI_VERSION; }

NC_PLUGIN_EXPORT const char* nc_plugin_name(void) { return "example_plugin 2.0 (binary64, two-pass)"; }

/* ---- element access through strides ------------------------------------------------ */

static int64_t numel(const nc_tensor* t) {
  int64_t n = 1;
  int d;
  for (d = 0; d < t->ndim; ++d) n *= t->shape[d];
  return n;
}

/* Offset (in elements) of the element with row-major flat index i. */
static int64_t offset_of(const nc_tensor* t, int64_t i) {
  int64_t off = 0;
  int d;
  for (d = t->ndim - 1; d >= 0; --d) {
    off += (i % t->shape[d]) * t->strides[d];
    i /= t->shape[d];
  }
  return off;
}

static double half_to_double(uint16_t h) {
  const int e = (h >> 10) & 0x1f, f = h & 0x3ff;
  const double s = (h & 0x8000) ? -1.0 : 1.0;
  if (e == 0) return s * ldexp(f, -24);
  if (e == 31) return f ? NAN : s * INFINITY;
  return s * ldexp(1024 + f, e - 25);
}

static double get(const nc_tensor* t, int64_t i) {
  const int64_t o = offset_of(t, i);
  switch (t->dtype) {
    case NC_F64: return ((const double*)t->data)[o];
    case NC_F32: return ((const float*)t->data)[o];
    case NC_F16: return half_to_double(((const uint16_t*)t->data)[o]);
    case NC_BF16: {
      uint32_t u = (uint32_t)((const uint16_t*)t->data)[o] << 16;
      float f;
      memcpy(&f, &u, 4);
      return f;
    }
    default: return NAN; /* 8-bit formats are outputs only */
  }
}

/* v rounded once (nearest even) to a binary format of precision p whose smallest normal
 * is 2^(min_exp - 1), as a double; +-inf beyond max. */
static double round_to(double v, int p, int min_exp, double max) {
  int e;
  if (v == 0 || isnan(v) || isinf(v)) return v;
  frexp(v, &e);
  {
    const int q = (e < min_exp ? min_exp : e) - p;
    const double r = ldexp(nearbyint(ldexp(v, -q)), q); /* default mode: nearest even */
    if (fabs(r) > max) return r > 0 ? INFINITY : -INFINITY;
    return r;
  }
}

static void set(nc_tensor* t, int64_t i, double v) {
  const int64_t o = offset_of(t, i);
  switch (t->dtype) {
    case NC_F64: ((double*)t->data)[o] = v; break;
    case NC_F32: ((float*)t->data)[o] = (float)v; break; /* IEEE conversion: RNE */
    case NC_BF16: {
      float f = isnan(v) ? NAN : (float)round_to(v, 8, -125, 0x1.fep127);
      uint32_t u;
      memcpy(&u, &f, 4);
      ((uint16_t*)t->data)[o] = (uint16_t)(u >> 16); /* exact: the low half is zero */
      break;
    }
    case NC_F16: {
      const double r = isnan(v) ? v : round_to(v, 11, -13, 65504.0);
      uint16_t h = signbit(r) ? 0x8000 : 0;
      if (isnan(r)) h = 0x7e00;
      else if (isinf(r)) h |= 0x7c00;
      else if (r != 0) {
        int e;
        const double m = frexp(fabs(r), &e); /* |r| = m 2^e, m in [0.5, 1) */
        if (e >= -13) h |= (uint16_t)(((e + 14) << 10) | ((int)ldexp(m, 11) - 1024));
        else h |= (uint16_t)ldexp(fabs(r), 24); /* subnormal: multiple of 2^-24 */
      }
      ((uint16_t*)t->data)[o] = h;
      break;
    }
    default: break;
  }
}

/* ---- parameters ------------------------------------------------------------------------ */

static double param_number(const nc_problem* p, const char* name, double fallback) {
  const nc_param* q = nc_param_find(p, name);
  return q ? q->number : fallback;
}

/* ---- the row norms ----------------------------------------------------------------------- */

static int row_norm(const nc_problem* p, char* error, size_t n) {
  const nc_tensor* x = nc_input(p, "x");
  const nc_tensor *gamma = nc_input(p, "gamma"), *beta = nc_input(p, "beta");
  nc_tensor* y = nc_output(p, "y");
  const nc_param* ns = nc_param_find(p, "normalized_shape");
  const int layer = strcmp(p->op, "layer_norm") == 0;
  const int unbiased = nc_param_is(p, "variance", "unbiased");
  const int affine_gamma = nc_param_is(p, "affine", "gamma"), affine_gb = nc_param_is(p, "affine", "gamma_beta");
  const int one_plus_w = nc_param_is(p, "affine", "one_plus_w");
  const double eps = param_number(p, "eps", 0);
  int64_t rows, m = 1, r;
  int d;
  for (d = 0; d < ns->count; ++d) m *= ns->items[d];
  rows = m ? numel(x) / m : 0;
  if (unbiased && layer && m < 2) {
    snprintf(error, n, "unbiased variance needs m >= 2");
    return 1;
  }
  for (r = 0; r < rows; ++r) {
    const int64_t base = r * m;
    double amax = 0, mean = 0, acc = 0, dd = 0;
    int k = 0, finite = 1, big_eps = 0;
    int64_t j;
    for (j = 0; j < m; ++j) {
      const double v = get(x, base + j);
      finite = finite && isfinite(v);
      amax = fmax(amax, fabs(v));
    }
    if (amax > 0) frexp(amax, &k); /* scale by 2^-k: |values| now below 1 */
    for (j = 0; j < m; ++j) mean += ldexp(get(x, base + j), -k);
    mean = layer ? mean / (double)m : 0.0;
    for (j = 0; j < m; ++j) {
      const double c = ldexp(get(x, base + j), -k) - mean;
      acc += c * c;
    }
    {
      const double v = acc / (double)(unbiased && layer ? m - 1 : m);
      /* eps in the scaled units: v is scaled by 2^-2k, sqrt(v) by 2^-k. Where that overflows
       * (tiny rows, k < -500), v <= 1 is negligible beside eps and d = f(eps) 2^-k. */
      const double eps2 = ldexp(eps, -2 * k), eps1 = ldexp(eps, -k);
      if (nc_param_is(p, "eps_placement", "inside_sqrt")) big_eps = isinf(eps2), dd = big_eps ? sqrt(eps) : sqrt(v + eps2);
      else if (nc_param_is(p, "eps_placement", "outside_sqrt")) big_eps = isinf(eps1), dd = big_eps ? eps : sqrt(v) + eps1;
      else if (nc_param_is(p, "eps_placement", "clamp_var")) big_eps = isinf(eps2), dd = big_eps ? sqrt(eps) : sqrt(fmax(v, eps2));
      else big_eps = isinf(eps1), dd = big_eps ? eps : fmax(sqrt(v), eps1);
    }
    for (j = 0; j < m; ++j) {
      const double c = ldexp(get(x, base + j), -k) - mean;
      double yv = big_eps ? ldexp(c / dd, k) : c / dd;
      if (dd == 0 && eps > 0) yv = 0; /* eps underflowed beside a constant row: c = 0 */
      if (!finite) yv = NAN;          /* a row holding NaN or inf gives NaN */
      if (affine_gamma || affine_gb) yv *= get(gamma, j);
      if (one_plus_w) yv *= 1.0 + get(gamma, j);
      if (affine_gb) yv += get(beta, j);
      set(y, base + j, yv);
    }
  }
  return 0;
}

/* ---- the plugin functions -------------------------------------------------------------- */

/* The keys this plugin reads, with the values it implements; any other key, or another value
 * of one of these, is declined (a plugin that ignored a key would run another convention). */
static int known(const nc_problem* p, char* reason, size_t n) {
  int32_t i;
  for (i = 0; i < p->num_params; ++i) {
    const nc_param* q = &p->params[i];
    if (!strcmp(q->name, "eps") || !strcmp(q->name, "eps_placement") || !strcmp(q->name, "variance") ||
        !strcmp(q->name, "affine") || !strcmp(q->name, "normalized_shape") || !strcmp(q->name, "acc_dtype") ||
        !strcmp(q->name, "direction"))
      continue;
    if (!strcmp(q->name, "normalized_dtype") && !strcmp(q->text, "none")) continue;
    snprintf(reason, n, "example_plugin: %s = %s not implemented", q->name, q->text);
    return 0;
  }
  return 1;
}

NC_PLUGIN_EXPORT int nc_plugin_supports(const nc_problem* p, char* reason, size_t n) {
  if (strcmp(p->op, "layer_norm") != 0 && strcmp(p->op, "rms_norm") != 0) {
    snprintf(reason, n, "example_plugin: only layer_norm and rms_norm (op %s)", p->op);
    return 0;
  }
  if (strcmp(p->direction, "forward") != 0) {
    snprintf(reason, n, "example_plugin: forward only");
    return 0;
  }
  return known(p, reason, n);
}

NC_PLUGIN_EXPORT int nc_plugin_run(const nc_problem* p, char* error, size_t n) { return row_norm(p, error, n); }
