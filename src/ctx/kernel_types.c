/* The kernel type of every device row of a rank (hta_ctx_kernel_types, hta/context.h): the one place
 * where names, the --comm-kernel globs and the launch's call stack decide what is communication, so
 * that kernels, temporal, overlap, idle and the report agree.  Built once per rank and kept. */
#include <stdlib.h>
#include <string.h>

#include "hta/context.h"
#include "hta/vocab.h"

/* 0: not yet known; 1: no; 2: yes.  Per CPU row: whether it runs inside a communication operator, as
 * the operators' nesting says: the walk goes up through operators (cpu_op) and host calls only, and
 * stops at anything else (a user annotation, a Python frame), so that a long annotation or an
 * asynchronous collective's range that happens to enclose a whole forward pass makes nothing in it
 * communication.  Each row is decided once: a walk stops at the first decided row and then marks every
 * row it passed, so the whole rank costs O(rows). */
static unsigned char under_comm(const hta_rank *r, const unsigned char *op_comm, const unsigned char *through,
                                unsigned char *memo, int32_t row, int32_t *path) {
    size_t np = 0;
    unsigned char v = 1;
    for (int32_t x = row; x != HTA_NO_ROW; x = r->parent[x]) {
        if (memo[x]) {
            v = memo[x];
            break;
        }
        path[np++] = x;
        if (op_comm[r->name[x]]) {
            v = 2;
            break;
        }
        if (!through[r->cat[x]]) break;
    }
    for (size_t i = 0; i < np; i++) memo[path[i]] = v;
    return v;
}

static hta_status build(hta_ctx *c, size_t k, uint8_t *ty, hta_error *err) {
    const hta_trace *t = c->trace;
    const hta_rank *r = t->ranks[k];
    size_t nsym = hta_symtab_count(t->sym), n = r->n;
    uint8_t *bysym = malloc(nsym ? nsym : 1);          /* 0xff: not yet classified */
    unsigned char *op_comm = calloc(nsym ? nsym : 1, 1); /* per name: a communication operator */
    unsigned char *memo = calloc(n ? n : 1, 1);
    int32_t *path = malloc((n ? n : 1) * sizeof *path);
    unsigned char *through = malloc(t->ncats ? t->ncats : 1); /* per category: the walk goes on */
    if (!bysym || !op_comm || !memo || !path || !through) {
        free(bysym), free(op_comm), free(memo), free(path), free(through);
        return hta_oom(err);
    }
    for (size_t q = 0; q < t->ncats; q++) {
        hta_cat_class cl = hta_cat_classify(hta_sym(t->sym, t->cats[q]));
        through[q] = cl == HTA_CC_CPU_OP || cl == HTA_CC_RUNTIME;
    }
    memset(bysym, 0xff, nsym ? nsym : 1);
    if (!c->hta_compat)
        for (size_t s = 0; s < nsym; s++) op_comm[s] = (unsigned char)hta_is_comm_op_name(hta_sym(t->sym, (uint32_t)s));
    for (size_t i = 0; i < n; i++) {
        if (r->stream[i] == 0) { /* no stream: a CPU row */
            ty[i] = HTA_KT_OTHER;
            continue;
        }
        uint32_t nm = r->name[i];
        if (bysym[nm] == 0xff) {
            const char *s = hta_sym(t->sym, nm);
            hta_kernel_type kt = c->hta_compat ? hta_kernel_type_of_hta(s) : hta_kernel_type_of(s);
            if (hta_name_matches_glob(s, c->comm_globs, c->ncomm_globs)) kt = HTA_KT_COMMUNICATION;
            bysym[nm] = (uint8_t)kt;
        }
        ty[i] = bysym[nm];
        /* the rest of a collective's kernels (copies into the flat buffer, reductions) are its
         * communication too; copies and sets keep their type */
        int32_t l = r->partner[i];
        if (!c->hta_compat && ty[i] == HTA_KT_COMPUTATION && l >= 0 && r->stream[l] == 0 &&
            under_comm(r, op_comm, through, memo, l, path) == 2)
            ty[i] = HTA_KT_COMMUNICATION;
    }
    free(bysym), free(op_comm), free(memo), free(path), free(through);
    return HTA_OK;
}

hta_status hta_ctx_kernel_types(hta_ctx *c, size_t k, const uint8_t **types, hta_error *err) {
    if (!c->ktypes[k]) {
        size_t n = c->trace->ranks[k]->n;
        uint8_t *ty = malloc(n ? n : 1);
        if (!ty) return hta_oom(err);
        hta_status st = build(c, k, ty, err);
        if (st) {
            free(ty);
            return st;
        }
        c->ktypes[k] = ty;
    }
    *types = c->ktypes[k];
    return HTA_OK;
}
