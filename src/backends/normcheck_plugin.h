/*
 * normcheck_plugin.h: the C ABI of a normcheck backend plugin (plain C99), version 2.
 *
 * A plugin is a shared library that exports three functions (and optionally a fourth):
 *
 *   uint32_t nc_plugin_abi_version(void);
 *       Return NC_PLUGIN_ABI_VERSION as compiled into the plugin (2). normcheck also loads
 *       plugins built against ABI 1 (layer_norm and rms_norm, forward, dense tensors; see
 *       the end of this file) and refuses any other version, with an error naming both.
 *   int nc_plugin_supports(const nc_problem* p, char* reason, size_t reason_size);
 *       Return 1 if the plugin evaluates p as specified (op, direction, every parameter,
 *       dtypes, shapes and the strides of the inputs), else 0 and a NUL-terminated reason in
 *       `reason` (reason_size bytes, truncate). The case is then reported SKIPPED with that
 *       reason. A plugin must refuse what it does not implement, including parameters it
 *       does not know (new ones are added as the op table grows): one that ignores a key
 *       runs the case under another convention. The tensors' data are valid.
 *   int nc_plugin_run(const nc_problem* p, char* error, size_t error_size);
 *       Evaluate p: read the inputs, write every element of every required output (and
 *       of the optional outputs it chooses to return, setting output_written). Return 0 on
 *       success, else nonzero and a NUL-terminated message in `error` (the case is then
 *       ERROR, exit code 3).
 *   const char* nc_plugin_name(void);                                         (optional)
 *       A short name and version ("mylib 1.2, AVX2 kernels"), put in front of the
 *       plugin's skip reasons and shown in reports.
 *
 * Build: cc -std=c99 -O2 -shared -fPIC -I<prefix>/include/normcheck myplugin.c -o libmy.so
 * Run:   normcheck run --backend plugin:/path/to/libmy.so
 *
 * What a problem is: README "Ops, their inputs, outputs and convention keys" lists every op,
 * its inputs and outputs by name, and its convention keys; `normcheck run --list` and the
 * case files show concrete problems. The ABI describes every op the same way (named
 * tensors, named parameters), so a new op needs no change here.
 *
 * Isolation: normcheck loads the plugin in a separate worker process and talks to it over
 * a pipe. A crash (segfault, abort), an exit, or a call that does not return within
 * --timeout seconds fails only the case being evaluated (status ERROR, with the signal or
 * the timeout as the reason); the worker is restarted for the next case. Writing into an
 * input, outside an output (4096 guard bytes before and after each), or changing an output
 * descriptor is detected and fails the case. Calls arrive one at a time from one thread; a
 * plugin may keep global state, but must not rely on it surviving (the process is restarted
 * after a failure). Anything the plugin prints on stdout or stderr goes to the worker's
 * stderr, whose last lines are quoted in error messages.
 *
 * Ownership: every pointer in nc_problem belongs to normcheck and is valid only during the
 * call. Inputs are read-only; outputs are allocated by normcheck (filled with NaN bit
 * patterns beforehand, so an unwritten element shows).
 */
#ifndef NORMCHECK_PLUGIN_H
#define NORMCHECK_PLUGIN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version of this ABI. Bumped on any change to the structs or functions below. */
#define NC_PLUGIN_ABI_VERSION 2u

/* Most dimensions of a tensor. */
#define NC_MAX_NDIM 8

/* Symbol visibility for the exported functions. */
#if defined(_WIN32)
#define NC_PLUGIN_EXPORT __declspec(dllexport)
#else
#define NC_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* Element types, little-endian as the host. Storage: NC_F64 IEEE binary64 (double), NC_F32
 * binary32 (float), NC_F16 IEEE binary16 bits (uint16_t), NC_BF16 bfloat16 bits (uint16_t:
 * the upper 16 bits of a binary32), NC_FP8_E4M3FN / NC_FP8_E5M2 the OCP FP8 byte (uint8_t),
 * NC_INT8 int8_t. The 8-bit types are output dtypes of the quantizing ops only
 * (rms_norm_quant, layer_norm_quant). */
typedef enum nc_dtype {
  NC_F64 = 0, NC_F32 = 1, NC_F16 = 2, NC_BF16 = 3, NC_FP8_E4M3FN = 4, NC_FP8_E5M2 = 5, NC_INT8 = 6
} nc_dtype;

/* A strided tensor. Element (i_0, ..., i_{ndim-1}) is at
 *   ((T*)data)[i_0 * strides[0] + ... + i_{ndim-1} * strides[ndim-1]]
 * with T the storage type of `dtype`. Strides count ELEMENTS, not bytes, and are >= 0.
 * Inputs may be views (nc_problem.layout): `data` then points into a larger buffer (a storage
 * offset), rows may be padded or the dims permuted (column-major, channels-last), and every
 * element of that buffer outside the view holds NaN; index through the strides. Outputs are
 * dense and row-major (strides[k] = product of shape[k+1..]). */
typedef struct nc_tensor {
  const char* name; /* "x", "gamma", "beta", "dy", "y", "dx", "mean", ... */
  nc_dtype dtype;
  int32_t ndim;     /* 0 .. NC_MAX_NDIM */
  int64_t shape[NC_MAX_NDIM];
  int64_t strides[NC_MAX_NDIM];
  void* data;       /* element (0, ..., 0); inputs: read-only */
} nc_tensor;

/* One convention parameter: every key of the problem's op (README's op table), the common
 * ones (eps, eps_placement, variance, affine, normalized_shape, acc_dtype, direction) and the
 * op's own (num_groups, momentum, training, normalized_dtype, ...), each with its value. */
typedef struct nc_param {
  const char* name;      /* the key as case files spell it: "eps", "eps_placement", ... */
  const char* text;      /* the value as a word: "inside_sqrt", "true", "false", "none" (no
                            value: momentum none, normalized_dtype none), a number printed
                            with 17 significant digits, or a list "[64]" */
  double number;         /* numbers: the value, exactly (eps is the case's binary64 eps);
                            true/false: 1/0; words, lists and none: NaN */
  int32_t count;         /* lists (normalized_shape, axes): the number of items (0, text "[]",
                            where the op does not read the key: every key of the op's table is
                            sent, a common one included); else 0 */
  const int64_t* items;  /* lists: the items; else NULL */
} nc_param;

/* One evaluation. `direction` "forward": the op's outputs from its inputs; "backward": the
 * gradients (dx and the parameters' gradients, named "d" + the parameter) of a scalar loss
 * given its gradient dy with respect to y (input "dy"). */
typedef struct nc_problem {
  uint32_t abi_version;          /* NC_PLUGIN_ABI_VERSION of the host (2) */
  const char* op;                /* "layer_norm", "rms_norm", "group_norm", ... */
  const char* direction;         /* "forward" | "backward" */
  const char* layout;            /* how the inputs are laid out: "contiguous" | "offset" |
                                    "padded" | "transposed" | "channels_last" (the strides
                                    say it too; README "Case files", layout) */
  nc_dtype out_dtype;            /* the problem's output dtype (each output's own is its dtype) */
  int32_t num_params;
  const nc_param* params;
  int32_t num_inputs;
  const nc_tensor* inputs;
  int32_t num_outputs;
  nc_tensor* outputs;            /* every output the op defines in this direction, each in
                                    its dtype and shape; do not modify the descriptors */
  const int32_t* output_optional;/* [num_outputs]: 1 = optional (the saved statistics "mean"
                                    and "rstd"): the plugin may leave it out */
  int32_t* output_written;       /* [num_outputs], all 0 on entry: set to 1 for each optional
                                    output the plugin wrote (normcheck then gates it; one left
                                    at 0 is reported as not returned). Required outputs must
                                    always be written; their flag is not read. */
} nc_problem;

/* Lookups by name (NULL when absent). */
static inline const nc_tensor* nc_input(const nc_problem* p, const char* name) {
  int32_t i;
  for (i = 0; i < p->num_inputs; ++i)
    if (strcmp(p->inputs[i].name, name) == 0) return &p->inputs[i];
  return NULL;
}
static inline nc_tensor* nc_output(const nc_problem* p, const char* name) {
  int32_t i;
  for (i = 0; i < p->num_outputs; ++i)
    if (strcmp(p->outputs[i].name, name) == 0) return &p->outputs[i];
  return NULL;
}
static inline const nc_param* nc_param_find(const nc_problem* p, const char* name) {
  int32_t i;
  for (i = 0; i < p->num_params; ++i)
    if (strcmp(p->params[i].name, name) == 0) return &p->params[i];
  return NULL;
}
/* Whether parameter `name` is present and its text is `text` ("inside_sqrt", "true"). */
static inline int nc_param_is(const nc_problem* p, const char* name, const char* text) {
  const nc_param* q = nc_param_find(p, name);
  return q != NULL && strcmp(q->text, text) == 0;
}

/* Prototypes of the functions a plugin exports (see the top of this file). */
typedef uint32_t (*nc_plugin_abi_version_fn)(void);
typedef const char* (*nc_plugin_name_fn)(void);
typedef int (*nc_plugin_supports_fn)(const nc_problem* p, char* reason, size_t reason_size);
typedef int (*nc_plugin_run_fn)(const nc_problem* p, char* error, size_t error_size);

NC_PLUGIN_EXPORT uint32_t nc_plugin_abi_version(void);
NC_PLUGIN_EXPORT const char* nc_plugin_name(void);
NC_PLUGIN_EXPORT int nc_plugin_supports(const nc_problem* p, char* reason, size_t reason_size);
NC_PLUGIN_EXPORT int nc_plugin_run(const nc_problem* p, char* error, size_t error_size);

/*
 * ABI 1 (still loaded): nc_plugin_abi_version() returned 1 and nc_plugin_supports/run took
 *   struct { uint32_t abi_version; int op (0 layer_norm, 1 rms_norm); double eps;
 *            int eps_placement (0 inside_sqrt, 1 outside_sqrt, 2 clamp_var, 3 clamp_norm);
 *            int variance (0 biased, 1 unbiased);
 *            int affine (0 none, 1 gamma, 2 gamma_beta, 3 one_plus_w);
 *            int32_t normalized_ndim; int acc_dtype; int out_dtype;
 *            const nc_tensor *x, *gamma, *beta; nc_tensor* y; }
 * with dense tensors. normcheck sends such a plugin forward layer_norm and rms_norm problems
 * on contiguous inputs in f64/f32/f16/bf16 without normalized_dtype, and reports every other
 * problem SKIPPED ("plugin ABI 1 ...").
 */

#ifdef __cplusplus
}
#endif

#endif /* NORMCHECK_PLUGIN_H */
