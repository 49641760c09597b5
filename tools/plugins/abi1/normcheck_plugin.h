/*
 * normcheck_plugin.h: the C ABI of a normcheck backend plugin (plain C99).
 *
 * A plugin is a shared library that exports three functions (and optionally a fourth):
 *
 *   uint32_t nc_plugin_abi_version(void);
 *       Return NC_PLUGIN_ABI_VERSION as compiled into the plugin. normcheck refuses a
 *       plugin whose version differs from its own, with an error naming both.
 *   int nc_plugin_supports(const nc_problem* p, char* reason, size_t reason_size);
 *       Return 1 if the plugin evaluates p as specified (op, convention, dtypes, shapes),
 *       else 0 and a NUL-terminated reason in `reason` (reason_size bytes, truncate).
 *       The case is then reported SKIPPED with that reason. The tensors' data are valid,
 *       but a plugin should decide from op, convention, dtypes and shapes.
 *   int nc_plugin_run(const nc_problem* p, char* error, size_t error_size);
 *       Evaluate p: read the inputs, write every element of the output p->y. Return 0 on
 *       success, else nonzero and a NUL-terminated message in `error` (the case is then
 *       ERROR, exit code 3).
 *   const char* nc_plugin_name(void);                                         (optional)
 *       A short name and version ("mylib 1.2, AVX2 kernels"), put in front of the
 *       plugin's skip reasons.
 *
 * Build: cc -std=c99 -O2 -shared -fPIC -I<prefix>/include/normcheck myplugin.c -o libmy.so
 * Run:   normcheck run --backend plugin:/path/to/libmy.so
 *
 * Isolation: normcheck loads the plugin in a separate worker process and talks to it over
 * a pipe. A crash (segfault, abort), an exit, or a call that does not return within
 * --timeout seconds fails only the case being evaluated (status ERROR, with the signal or
 * the timeout as the reason); the worker is restarted for the next case. Writing past
 * the end of the output, or changing the output descriptor, is detected and fails the case.
 * Calls arrive one at a time from one thread; a plugin may keep global state, but must
 * not rely on it surviving (the process is restarted after a failure). Anything the
 * plugin prints on stdout or stderr goes to the worker's stderr, whose last lines are
 * quoted in error messages.
 *
 * Ownership: every pointer in nc_problem belongs to normcheck and is valid only during the
 * call. Inputs are read-only; the output buffer p->y->data is allocated by normcheck
 * (filled with NaN bit patterns beforehand, so an unwritten element shows).
 */
#ifndef NORMCHECK_PLUGIN_H
#define NORMCHECK_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version of this ABI. Bumped on any change to the structs or functions below. */
#define NC_PLUGIN_ABI_VERSION 1u

/* Most dimensions of a tensor. */
#define NC_MAX_NDIM 8

/* Symbol visibility for the exported functions. */
#if defined(_WIN32)
#define NC_PLUGIN_EXPORT __declspec(dllexport)
#else
#define NC_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* Element types. Storage: NC_F64 IEEE binary64 (double), NC_F32 binary32 (float),
 * NC_F16 IEEE binary16 bits (uint16_t), NC_BF16 bfloat16 bits (uint16_t: the upper 16
 * bits of a binary32). Little-endian, as the host. */
typedef enum nc_dtype { NC_F64 = 0, NC_F32 = 1, NC_F16 = 2, NC_BF16 = 3 } nc_dtype;

/* Ops (DESIGN.md "op"). ABI version 1 sends NC_LAYER_NORM and NC_RMS_NORM; the other
 * values are reserved for the op families and come with their own fields in a later
 * version of this ABI. */
typedef enum nc_op {
  NC_LAYER_NORM = 0, /* y = (x - mean) / d(var) (* gamma (+ beta)) over the last normalized_ndim dims */
  NC_RMS_NORM = 1,   /* y = x / d(mean(x^2)) (* gamma (+ beta)) over the last normalized_ndim dims */
  NC_GROUP_NORM = 2,
  NC_INSTANCE_NORM = 3,
  NC_BATCH_NORM = 4,
  NC_L2_NORMALIZE = 5,
  NC_SCALE_NORM = 6,
  NC_ADA_LAYER_NORM = 7,
  NC_ADA_RMS_NORM = 8,
  NC_QK_NORM = 9
} nc_op;

/* Where eps enters the denominator d(v) of the statistic v (variance for layer_norm,
 * mean of squares for rms_norm):
 *   NC_EPS_INSIDE_SQRT   d = sqrt(v + eps)        (PyTorch, ONNX)
 *   NC_EPS_OUTSIDE_SQRT  d = sqrt(v) + eps
 *   NC_EPS_CLAMP_VAR     d = sqrt(max(v, eps))
 *   NC_EPS_CLAMP_NORM    d = max(sqrt(v), eps)    (torch.nn.functional.normalize) */
typedef enum nc_eps_placement {
  NC_EPS_INSIDE_SQRT = 0, NC_EPS_OUTSIDE_SQRT = 1, NC_EPS_CLAMP_VAR = 2, NC_EPS_CLAMP_NORM = 3
} nc_eps_placement;

/* Variance estimator of layer_norm: biased sum/m, unbiased sum/(m - 1). */
typedef enum nc_variance { NC_VAR_BIASED = 0, NC_VAR_UNBIASED = 1 } nc_variance;

/* Affine convention: none: y = n; gamma: y = gamma n; gamma_beta: y = gamma n + beta;
 * one_plus_w: y = (1 + gamma) n (Gemma's RMSNorm; the parameter arrives as gamma). */
typedef enum nc_affine {
  NC_AFFINE_NONE = 0, NC_AFFINE_GAMMA = 1, NC_AFFINE_GAMMA_BETA = 2, NC_AFFINE_ONE_PLUS_W = 3
} nc_affine;

/* A strided tensor. Element (i_0, ..., i_{ndim-1}) is at
 *   ((T*)data)[i_0 * strides[0] + ... + i_{ndim-1} * strides[ndim-1]]
 * with T the storage type of `dtype`. Strides count ELEMENTS, not bytes, and are >= 0.
 * normcheck currently passes dense row-major tensors (strides[k] = product of
 * shape[k+1..]); a plugin should still index through the strides. */
typedef struct nc_tensor {
  const char* name; /* "x", "gamma", "beta", "y" */
  nc_dtype dtype;
  int32_t ndim;     /* 0 .. NC_MAX_NDIM */
  int64_t shape[NC_MAX_NDIM];
  int64_t strides[NC_MAX_NDIM];
  void* data;       /* inputs: read-only */
} nc_tensor;

/* One evaluation. Each statistic reduces over the last `normalized_ndim` dimensions of x
 * (m = the product of their extents values per statistic); the leading dimensions index
 * the rows. gamma and beta have the shape of those trailing dimensions. */
typedef struct nc_problem {
  uint32_t abi_version;            /* NC_PLUGIN_ABI_VERSION of the host */
  nc_op op;
  double eps;                      /* >= 0, finite: the exact binary64 value of the case */
  nc_eps_placement eps_placement;
  nc_variance variance;
  nc_affine affine;
  int32_t normalized_ndim;         /* 1 .. x->ndim */
  nc_dtype acc_dtype;              /* accumulation type a conforming kernel uses (f32, or f64 for f64 data) */
  nc_dtype out_dtype;              /* == y->dtype */
  const nc_tensor* x;
  const nc_tensor* gamma;          /* NULL when affine == NC_AFFINE_NONE */
  const nc_tensor* beta;           /* NULL unless affine == NC_AFFINE_GAMMA_BETA */
  nc_tensor* y;                    /* output: shape of x, dtype out_dtype; do not modify the descriptor */
} nc_problem;

/* Prototypes of the functions a plugin exports (see the top of this file). */
typedef uint32_t (*nc_plugin_abi_version_fn)(void);
typedef const char* (*nc_plugin_name_fn)(void);
typedef int (*nc_plugin_supports_fn)(const nc_problem* p, char* reason, size_t reason_size);
typedef int (*nc_plugin_run_fn)(const nc_problem* p, char* error, size_t error_size);

NC_PLUGIN_EXPORT uint32_t nc_plugin_abi_version(void);
NC_PLUGIN_EXPORT const char* nc_plugin_name(void);
NC_PLUGIN_EXPORT int nc_plugin_supports(const nc_problem* p, char* reason, size_t reason_size);
NC_PLUGIN_EXPORT int nc_plugin_run(const nc_problem* p, char* error, size_t error_size);

#ifdef __cplusplus
}
#endif

#endif /* NORMCHECK_PLUGIN_H */
