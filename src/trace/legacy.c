/* PyTorch <= 1.9 (Kineto's first schema, e.g. the 2021 tb_plugin samples) wrote the same events under
 * other names: categories Operator, Runtime, Kernel, Memcpy, Memset for cpu_op, cuda_runtime, kernel,
 * gpu_memcpy, gpu_memset (ProfilerStep#N and enumerate(DataLoader) are Operators there), and the
 * runtime calls' and kernels' link to their operator as "external id".  Read as today's names, such a
 * trace has the same steps, operators and launches in every analysis as a new one.  HTA reads the names
 * as written (hta_load_opts.hta_names, --hta-compat): its Operator rows are no CPU operators. */
#include "trace/legacy.h"

#include <stdlib.h>
#include <string.h>

static const char *const OLD[][2] = {
    {"Operator", "cpu_op"}, {"Runtime", "cuda_runtime"}, {"Kernel", "kernel"},
    {"Memcpy", "gpu_memcpy"}, {"Memset", "gpu_memset"},
};
#define NOLD (sizeof OLD / sizeof *OLD)

static long cat_index(const hta_trace *t, const char *name) {
    int64_t s = hta_symtab_find(t->sym, name, strlen(name));
    for (size_t c = 0; s >= 0 && c < t->ncats; c++)
        if (t->cats[c] == (uint32_t)s) return (long)c;
    return -1;
}

hta_status hta_legacy_names(hta_trace *t, int *legacy, hta_error *err) {
    *legacy = 0;
    /* per category: the index its rows move to (itself when renamed in place or not old) */
    uint16_t *to = malloc((t->ncats ? t->ncats : 1) * sizeof *to);
    unsigned char *old = calloc(t->ncats ? t->ncats : 1, 1); /* per category: one of OLD */
    if (!to || !old) {
        free(to), free(old);
        return hta_oom(err);
    }
    for (size_t c = 0; c < t->ncats; c++) to[c] = (uint16_t)c;
    for (size_t k = 0; k < NOLD; k++) {
        long o = cat_index(t, OLD[k][0]);
        if (o < 0) continue;
        *legacy = 1;
        old[o] = 1;
        long m = cat_index(t, OLD[k][1]);
        if (m >= 0) {
            /* both spellings in one trace (ranks of two PyTorch versions): one category */
            to[o] = (uint16_t)m;
        } else {
            uint32_t s = hta_symtab_intern(t->sym, OLD[k][1], strlen(OLD[k][1]));
            if (s == UINT32_MAX) {
                free(to), free(old);
                return hta_oom(err);
            }
            t->cats[o] = s;
        }
    }
    int32_t ext = t->arg_sym[HTA_ARG_EXTERNAL_ID_LEGACY];
    for (size_t i = 0; i < t->nranks; i++) {
        hta_rank *r = t->ranks[i];
        if (*legacy)
            for (size_t j = 0; j < r->n; j++) {
                r->legacy_schema |= old[r->cat[j]];
                r->cat[j] = to[r->cat[j]];
            }
        if (ext < 0) continue;
        *legacy = 1;
        for (size_t j = 0; j < r->n; j++) {
            if (r->external_id[j] != -1) continue;
            const hta_arg *a = hta_row_arg(r, j, ext);
            if (a && a->type == HTA_V_INT) r->external_id[j] = a->v.i, r->legacy_schema = 1;
        }
    }
    free(to), free(old);
    return HTA_OK;
}
