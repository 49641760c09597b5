/*
 * Misbehaving normcheck plugins, for the tests that prove a plugin's failure is contained
 * (tests/cli/backends_test.sh). Each build defines one NC_FAULT_* and wraps the correct
 * example plugin:
 *   NC_FAULT_SEGFAULT     writes through a null pointer on the trigger case
 *   NC_FAULT_ABORT        calls abort() on the trigger case
 *   NC_FAULT_HANG         never returns on the trigger case (sleeps forever)
 *   NC_FAULT_WRONG_SHAPE  writes one row more than y holds on the trigger case
 *   NC_FAULT_WRITES_INPUT writes into its input x on the trigger case (inputs are read-only)
 *   NC_FAULT_WRONG_DTYPE  declares y binary32 (it is binary64) and writes floats on the trigger case
 *   NC_FAULT_NAN          NaN everywhere, on every case (a wrong answer: FAILED, not ERROR)
 *   NC_FAULT_CHATTY       prints to stdout on every call, otherwise correct
 *   NC_FAULT_BAD_ABI      reports ABI version 999 (refused at load)
 *   NC_FAULT_PICKY        correct, but declines f16 data (supports() = 0: SKIPPED with its reason)
 *   NC_FAULT_FORGED_FRAME finds the host's protocol pipe and writes a reply header claiming
 *                         2^36 bytes of y on the trigger case (the parent must refuse the size
 *                         before allocating: ERROR for that case, the run goes on)
 *   NC_FAULT_HOG          touches 1 GiB in 16 MiB steps on the trigger case, then answers
 *                         correctly (over --backend-memory it is killed: ERROR; under it, PASS)
 *   NC_FAULT_DENSE_ROWS   reads every input as dense row-major from its data pointer, its
 *                         strides ignored (a kernel that assumes contiguous tensors: on a
 *                         padded or permuted view it reads the padding or another row)
 *   NC_FAULT_WRITES_NOTHING returns 0 without writing any output (the host's fill is a
 *                         signaling NaN: a case whose exact y is NaN must not pass)
 *   NC_FAULT_SKIPS_BYTE_OUTPUTS writes every output but the 8-bit ones (fp8, int8), whose
 *                         host fill (0xff bytes: NaN, -1) is a value: the host's second run
 *                         over 0x00 bytes must find them unwritten
 *   NC_FAULT_NO_MEAN_TERM layer_norm's backward without the -mean(g dy) term of dx (the
 *                         correct dx plus mean(g dy) / D per row; inside_sqrt): a classic
 *                         hand-derived gradient that forgets the mean's dependence on x
 * The trigger case is x = [1, 2, 3, 4] in f64 (cases/layer_norm/worked_examples.toml ln_1234).
 */
#define nc_plugin_run example_run
#define nc_plugin_abi_version example_abi_version
#define nc_plugin_supports example_supports
#include "example_plugin.c"
#undef nc_plugin_run
#undef nc_plugin_abi_version
#undef nc_plugin_supports

#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#ifdef NC_FAULT_FORGED_FRAME
#include <fcntl.h>
#include <sys/stat.h>
#endif

static int is_trigger(const nc_problem* p) {
  const nc_tensor* x = nc_input(p, "x");
  return x && strcmp(p->op, "layer_norm") == 0 && x->dtype == NC_F64 && x->ndim == 1 && x->shape[0] == 4 && get(x, 0) == 1 && get(x, 1) == 2 && get(x, 2) == 3 &&
         get(x, 3) == 4;
}

NC_PLUGIN_EXPORT uint32_t nc_plugin_abi_version(void) {
#ifdef NC_FAULT_BAD_ABI
  return 999;
#else
  return example_abi_version();
#endif
}

NC_PLUGIN_EXPORT int nc_plugin_supports(const nc_problem* p, char* reason, size_t n) {
#ifdef NC_FAULT_PICKY
  if (nc_input(p, "x") && nc_input(p, "x")->dtype == NC_F16) {
    snprintf(reason, n, "misbehaving_plugin: no f16 kernel");
    return 0;
  }
#endif
  return example_supports(p, reason, n);
}

NC_PLUGIN_EXPORT int nc_plugin_run(const nc_problem* p, char* error, size_t n) {
  const int trigger = is_trigger(p);
  (void)trigger;
#if defined(NC_FAULT_SEGFAULT)
  if (trigger) {
    volatile int* null = NULL;
    *null = 1;
  }
#elif defined(NC_FAULT_ABORT)
  if (trigger) {
    fprintf(stderr, "misbehaving_plugin: giving up on [1, 2, 3, 4]\n");
    abort();
  }
#elif defined(NC_FAULT_HANG)
  if (trigger)
    for (;;) sleep(1000);
#elif defined(NC_FAULT_WRONG_SHAPE)
  if (trigger) {
    /* Believes y holds one more row than x: the last m writes land past its end. */
    const int rc = example_run(p, error, n);
    double* y = (double*)nc_output(p, "y")->data;
    for (int j = 0; j < 4; ++j) y[4 + j] = 0.5;
    return rc;
  }
#elif defined(NC_FAULT_WRITES_INPUT)
  if (trigger) {
    const nc_tensor* x = nc_input(p, "x");
    ((double*)x->data)[0] = 0; /* casts the const away: the host sees the storage change */
  }
#elif defined(NC_FAULT_WRONG_DTYPE)
  if (trigger) {
    nc_tensor* y = nc_output(p, "y");
    y->dtype = NC_F32;
    for (int j = 0; j < 4; ++j) ((float*)y->data)[j] = 0.25f;
    return 0;
  }
#elif defined(NC_FAULT_NAN)
  {
    /* Every required output (y forward, dx and the gradients backward): the example plugin
       serves backward problems too, whose outputs hold no y. */
    const int rc = example_run(p, error, n);
    for (int32_t k = 0; k < p->num_outputs; ++k)
      if (!p->output_optional[k])
        for (int64_t i = 0; i < numel(&p->outputs[k]); ++i) set(&p->outputs[k], i, NAN);
    return rc;
  }
#elif defined(NC_FAULT_FORGED_FRAME)
  if (trigger) {
    /* The host keeps the protocol on a private copy of its stdout: a write-only pipe above
       fd 2. Write the header of an OKAY frame (tag "OKAY", u64 length) claiming 2^36 bytes. */
    const unsigned char tag[4] = {'O', 'K', 'A', 'Y'};
    const uint64_t claimed = (uint64_t)1 << 36;
    for (int fd = 3; fd < 64; ++fd) {
      struct stat st;
      const int fl = fcntl(fd, F_GETFL);
      if (fl < 0 || (fl & O_ACCMODE) != O_WRONLY || fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode)) continue;
      if (write(fd, tag, sizeof tag) != (ssize_t)sizeof tag || write(fd, &claimed, sizeof claimed) != (ssize_t)sizeof claimed)
        return 1;
    }
  }
#elif defined(NC_FAULT_HOG)
  if (trigger) {
    enum { kStep = 16 << 20, kSteps = 64 };
    char* held = malloc((size_t)kStep * kSteps);
    if (!held) return 1;
    for (int i = 0; i < kSteps; ++i) {
      memset(held + (size_t)i * kStep, 1, kStep); /* written, so resident */
      const struct timespec pause = {0, 20 * 1000 * 1000};
      nanosleep(&pause, NULL);
    }
    const int rc = example_run(p, error, n);
    free(held);
    return rc;
  }
#elif defined(NC_FAULT_CHATTY)
  printf("misbehaving_plugin: chatter on stdout that must not reach normcheck's protocol\n");
  fflush(stdout);
#elif defined(NC_FAULT_DENSE_ROWS)
  {
    nc_problem q = *p;
    nc_tensor ins[16];
    if (p->num_inputs > 16) return example_run(p, error, n);
    for (int32_t k = 0; k < p->num_inputs; ++k) {
      int64_t s = 1;
      ins[k] = p->inputs[k];
      for (int d = ins[k].ndim - 1; d >= 0; --d) {
        ins[k].strides[d] = s;
        s *= ins[k].shape[d];
      }
    }
    q.inputs = ins;
    return example_run(&q, error, n);
  }
#elif defined(NC_FAULT_WRITES_NOTHING)
  (void)error;
  (void)n;
  return 0;
#elif defined(NC_FAULT_SKIPS_BYTE_OUTPUTS)
  {
    nc_problem q = *p;
    nc_tensor outs[16];
    void* scratch[16] = {0};
    int rc;
    int32_t k;
    if (p->num_outputs > 16) return example_run(p, error, n);
    for (k = 0; k < p->num_outputs; ++k) {
      outs[k] = p->outputs[k];
      if (outs[k].dtype == NC_FP8_E4M3FN || outs[k].dtype == NC_FP8_E5M2 || outs[k].dtype == NC_INT8) {
        int64_t span = 1; /* 1 + sum (extent - 1) stride: the bytes the view reaches */
        int d;
        for (d = 0; d < outs[k].ndim; ++d)
          if (outs[k].shape[d] > 0) span += (outs[k].shape[d] - 1) * outs[k].strides[d];
        scratch[k] = malloc((size_t)span);
        if (!scratch[k]) return 1;
        outs[k].data = scratch[k]; /* the example writes here; the host's buffer is untouched */
      }
    }
    q.outputs = outs;
    rc = example_run(&q, error, n);
    for (k = 0; k < p->num_outputs; ++k) free(scratch[k]);
    return rc;
  }
#elif defined(NC_FAULT_NO_MEAN_TERM)
  {
    const int rc = example_run(p, error, n);
    const nc_tensor *x = nc_input(p, "x"), *dy = nc_input(p, "dy"), *g = nc_input(p, "gamma");
    nc_tensor* dx = nc_output(p, "dx");
    const nc_param* ns = nc_param_find(p, "normalized_shape");
    if (rc != 0 || strcmp(p->op, "layer_norm") != 0 || !dx || !dy || !ns || !nc_param_is(p, "eps_placement", "inside_sqrt")) return rc;
    int64_t m = 1, r, j;
    for (j = 0; j < ns->count; ++j) m *= ns->items[j];
    for (r = 0; m > 0 && r < numel(x) / m; ++r) {
      long double mu = 0, v = 0, a = 0;
      for (j = 0; j < m; ++j) mu += get(x, r * m + j);
      mu /= m;
      for (j = 0; j < m; ++j) v += (get(x, r * m + j) - mu) * (get(x, r * m + j) - mu);
      v /= m;
      for (j = 0; j < m; ++j) {
        const double gain = !g ? 1.0 : nc_param_is(p, "affine", "one_plus_w") ? 1.0 + get(g, j) : get(g, j);
        a += gain * get(dy, r * m + j);
      }
      for (j = 0; j < m; ++j)
        set(dx, r * m + j, (double)(get(dx, r * m + j) + a / m / sqrtl(v + nc_param_find(p, "eps")->number)));
    }
    return rc;
  }
#endif
  return example_run(p, error, n);
}
