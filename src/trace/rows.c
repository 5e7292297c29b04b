/* Row-level accessors over the columnar tables (hta/trace.h): a row's args by key, and HTA's category
 * classes. */
#include <string.h>

#include "hta/trace.h"

/* A row holds a handful of args (the keys with a slot, plus the counters of a CUPTI range), so a linear
 * scan of its slice is enough. key_sym < 0: the key occurs nowhere in the trace. */
const hta_arg *hta_row_arg(const hta_rank *r, size_t i, int64_t key_sym) {
    if (key_sym < 0) return NULL;
    for (uint32_t k = r->args_off[i]; k < r->args_off[i + 1]; k++)
        if (r->args[k].key == (uint32_t)key_sym) return &r->args[k];
    return NULL;
}

/* HTA copies arg values as written and its types are documentation only (TF§5.1), so a number may come as
 * an integer or a float; anything else gets the caller's default, HTA's value for an absent key. */
int64_t hta_row_arg_int(const hta_trace *t, const hta_rank *r, size_t i, hta_arg_key k, int64_t dflt) {
    const hta_arg *a = hta_row_arg(r, i, t->arg_sym[k]);
    if (!a) return dflt;
    if (a->type == HTA_V_INT) return a->v.i;
    if (a->type == HTA_V_FLOAT) return (int64_t)a->v.f;
    return dflt;
}

double hta_row_arg_num(const hta_trace *t, const hta_rank *r, size_t i, hta_arg_key k, double dflt) {
    const hta_arg *a = hta_row_arg(r, i, t->arg_sym[k]);
    if (!a) return dflt;
    if (a->type == HTA_V_INT) return (double)a->v.i;
    if (a->type == HTA_V_FLOAT) return a->v.f;
    return dflt;
}

const char *hta_row_arg_text(const hta_trace *t, const hta_rank *r, size_t i, hta_arg_key k,
                             const char *dflt) {
    const hta_arg *a = hta_row_arg(r, i, t->arg_sym[k]);
    if (!a || (a->type != HTA_V_STR && a->type != HTA_V_JSON)) return dflt;
    return hta_sym(t->sym, a->v.sym);
}

/* HTA's categories (TF§4.3), matched exactly and case-sensitively: old Kineto spellings (Kernel, Memcpy,
 * Memset, Runtime) and MTIA's categories fall in the same classes as the current CUDA names. */
hta_cat_class hta_cat_classify(const char *c) {
    static const struct {
        const char *name;
        hta_cat_class cc;
    } tab[] = {
        {"cpu_op", HTA_CC_CPU_OP},          {"user_annotation", HTA_CC_USER_ANNOTATION},
        {"gpu_user_annotation", HTA_CC_GPU_USER_ANNOTATION},
        {"python_function", HTA_CC_PYTHON_FUNCTION},
        {"cuda_runtime", HTA_CC_RUNTIME},   {"cuda_driver", HTA_CC_RUNTIME},
        {"mtia_runtime", HTA_CC_RUNTIME},   {"Runtime", HTA_CC_RUNTIME},
        {"kernel", HTA_CC_KERNEL},          {"Kernel", HTA_CC_KERNEL},
        {"mtia_ccp_events", HTA_CC_KERNEL}, {"gpu_memcpy", HTA_CC_MEMCPY},
        {"Memcpy", HTA_CC_MEMCPY},          {"gpu_memset", HTA_CC_MEMSET},
        {"Memset", HTA_CC_MEMSET},          {"cuda_sync", HTA_CC_CUDA_SYNC},
        {"cuda_profiler_range", HTA_CC_PROFILER_RANGE},
    };
    for (size_t k = 0; k < sizeof tab / sizeof *tab; k++)
        if (!strcmp(tab[k].name, c)) return tab[k].cc;
    return HTA_CC_OTHER;
}

/* The metadata keeps every top-level key in file order; a key written twice is read as JSON readers do,
 * the last one wins. */
const char *hta_rank_meta(const hta_rank *r, const char *key) {
    for (size_t i = r->nmeta; i-- > 0;)
        if (!strcmp(r->meta[i].key, key)) return r->meta[i].json;
    return NULL;
}
