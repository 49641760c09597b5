/* The plugin header is plain C99: this file includes it and uses every type and helper; ctest
 * compiles it with -std=c99 -pedantic -Werror (tests/CMakeLists.txt, plugin_header_c99). */
#include "normcheck_plugin.h"

NC_PLUGIN_EXPORT uint32_t nc_plugin_abi_version(void) { return NC_PLUGIN_ABI_VERSION; }
NC_PLUGIN_EXPORT const char* nc_plugin_name(void) { return "c99 header check"; }
NC_PLUGIN_EXPORT int nc_plugin_supports(const nc_problem* p, char* reason, size_t n) {
  (void)reason;
  (void)n;
  return nc_input(p, "x") != NULL && nc_param_is(p, "eps_placement", "inside_sqrt");
}
NC_PLUGIN_EXPORT int nc_plugin_run(const nc_problem* p, char* error, size_t n) {
  const nc_param* eps = nc_param_find(p, "eps");
  nc_tensor* y = nc_output(p, "y");
  nc_dtype d = NC_INT8;
  (void)error;
  (void)n;
  (void)d;
  if (y == NULL || eps == NULL || eps->count != 0 || eps->items != NULL) return 1;
  return p->output_optional[0] + p->output_written[0] + (int)p->abi_version - 2;
}
