/*
 * A plugin built against ABI 1 (the normcheck_plugin.h beside it, as released with ABI
 * version 1), kept unchanged so that the tests prove such plugins still load and run under
 * the current host (tests/cli/backends_test.sh). New plugins: ../example_plugin.c (ABI 2).
 *
 * Example normcheck plugin (C99): layer_norm and rms_norm, every convention and dtype of
 * ABI version 1, computed in binary64 and rounded once to the output dtype.
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

NC_PLUGIN_EXPORT const char* nc_plugin_name(void) { return "example_abi1 1.0 (binary64, two-pass, ABI 1)"; }

/* ---- element access through strides ------------------------------------------------ */

/* Offset (in elements) of the element with row-major flat index i. */
static int64_t offset_of(const nc_tensor* t, int64_t i) {
  int64_t off = 0;
  for (int d = t->ndim - 1; d >= 0; --d) {
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
  }
  return NAN;
}

/* v rounded once (nearest even) to a binary format of precision p whose smallest normal
 * is 2^(min_exp - 1), as a double; +-inf beyond max. */
static double round_to(double v, int p, int min_exp, double max) {
  int e;
  if (v == 0 || isnan(v) || isinf(v)) return v;
  frexp(v, &e);
  const int q = (e < min_exp ? min_exp : e) - p;
  const double r = ldexp(nearbyint(ldexp(v, -q)), q); /* default mode: nearest even */
  if (fabs(r) > max) return r > 0 ? INFINITY : -INFINITY;
  return r;
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
  }
}

/* ---- the plugin functions -------------------------------------------------------------- */

NC_PLUGIN_EXPORT int nc_plugin_supports(const nc_problem* p, char* reason, size_t n) {
  if (p->op != NC_LAYER_NORM && p->op != NC_RMS_NORM) {
    snprintf(reason, n, "example_plugin: only layer_norm and rms_norm (op %d)", (int)p->op);
    return 0;
  }
  return 1;
}

NC_PLUGIN_EXPORT int nc_plugin_run(const nc_problem* p, char* error, size_t n) {
  const nc_tensor* x = p->x;
  int64_t rows = 1, m = 1;
  for (int d = 0; d < x->ndim; ++d) {
    if (d < x->ndim - p->normalized_ndim) rows *= x->shape[d];
    else m *= x->shape[d];
  }
  if (p->variance == NC_VAR_UNBIASED && m < 2) {
    snprintf(error, n, "unbiased variance needs m >= 2");
    return 1;
  }
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t base = r * m;
    double amax = 0, mean = 0, acc = 0, d;
    int k = 0, finite = 1, big_eps = 0;
    for (int64_t j = 0; j < m; ++j) {
      const double v = get(x, base + j);
      finite = finite && isfinite(v);
      amax = fmax(amax, fabs(v));
    }
    if (amax > 0) frexp(amax, &k); /* scale by 2^-k: |values| now below 1 */
    for (int64_t j = 0; j < m; ++j) mean += ldexp(get(x, base + j), -k);
    mean = p->op == NC_LAYER_NORM ? mean / (double)m : 0.0;
    for (int64_t j = 0; j < m; ++j) {
      const double c = ldexp(get(x, base + j), -k) - mean;
      acc += c * c;
    }
    const double v = acc / (double)(p->variance == NC_VAR_UNBIASED && p->op == NC_LAYER_NORM ? m - 1 : m);
    /* eps in the scaled units: v is scaled by 2^-2k, sqrt(v) by 2^-k. Where that overflows
     * (tiny rows, k < -500), v <= 1 is negligible beside eps and d = f(eps) 2^-k. */
    const double eps2 = ldexp(p->eps, -2 * k), eps1 = ldexp(p->eps, -k);
    switch (p->eps_placement) {
      case NC_EPS_INSIDE_SQRT: big_eps = isinf(eps2); d = big_eps ? sqrt(p->eps) : sqrt(v + eps2); break;
      case NC_EPS_OUTSIDE_SQRT: big_eps = isinf(eps1); d = big_eps ? p->eps : sqrt(v) + eps1; break;
      case NC_EPS_CLAMP_VAR: big_eps = isinf(eps2); d = big_eps ? sqrt(p->eps) : sqrt(fmax(v, eps2)); break;
      case NC_EPS_CLAMP_NORM: big_eps = isinf(eps1); d = big_eps ? p->eps : fmax(sqrt(v), eps1); break;
      default: snprintf(error, n, "unknown eps_placement %d", (int)p->eps_placement); return 1;
    }
    for (int64_t j = 0; j < m; ++j) {
      const double c = ldexp(get(x, base + j), -k) - mean;
      double y = big_eps ? ldexp(c / d, k) : c / d;
      if (d == 0 && p->eps > 0) y = 0; /* eps underflowed beside a constant row: c = 0 */
      if (!finite) y = NAN;             /* a row holding NaN or inf gives NaN */
      if (p->affine == NC_AFFINE_GAMMA || p->affine == NC_AFFINE_GAMMA_BETA) y *= get(p->gamma, j);
      if (p->affine == NC_AFFINE_ONE_PLUS_W) y *= 1.0 + get(p->gamma, j);
      if (p->affine == NC_AFFINE_GAMMA_BETA) y += get(p->beta, j);
      set(p->y, base + j, y);
    }
  }
  return 0;
}
