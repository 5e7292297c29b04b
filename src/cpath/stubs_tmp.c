#include "cpath/internal.h"
hta_status hta_cpath_save(const hta_cp_graph *g, const char *path, hta_error *err) { return hta_fail(err, HTA_EINVAL, "todo"); }
hta_status hta_cpath_load(const char *path, hta_cp_graph **out, hta_error *err) { return hta_fail(err, HTA_EINVAL, "todo"); }
hta_status hta_cpath_rule_parse(const char *text, hta_cpath_rule *r, hta_error *err) { return hta_fail(err, HTA_EINVAL, "todo"); }
void hta_cpath_rule_free(hta_cpath_rule *r) {}
hta_status hta_cpath_whatif_weights(const hta_cp_graph *g, const hta_cpath_rule *rules,
                                    size_t nrules, int64_t *w, size_t *nchanged, hta_error *err) { return hta_fail(err, HTA_EINVAL, "todo"); }
hta_status hta_cpath_whatif_trace(const hta_trace *t, const hta_cp_graph *g, const int64_t *w,
                                  const char *out_path, hta_error *err) { return hta_fail(err, HTA_EINVAL, "todo"); }
