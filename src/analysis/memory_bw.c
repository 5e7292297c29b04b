/* Memory bandwidth per memory kind (analyses.md §11.1): the sum of the
 * bandwidths of the copies/memsets in flight. */
#include <stdlib.h>
#include <string.h>

#include "hta/counters.h"
#include "hta/util.h"
#include "hta/vocab.h"

void hta_membw_series_free(hta_membw_series *s) {
    free(s->ts);
    free(s->row);
    free(s->kind);
    free(s->bw);
    memset(s, 0, sizeof *s);
}

/* Index of kind name in s->names, added if new; names stay unsorted here.  HTA's kinds are a handful
 * ("Memset", "Memcpy Unknown", "Memcpy DtoH" ...: at most 14 characters, §1), so a short list searched
 * linearly holds them; a kind past the 16th would be left out (-1). */
static int kind_of(hta_membw_series *s, const char *nm) {
    for (size_t k = 0; k < s->nnames; k++)
        if (!strcmp(s->names[k], nm)) return (int)k;
    if (s->nnames == sizeof s->names / sizeof *s->names) return -1;
    snprintf(s->names[s->nnames], sizeof s->names[0], "%s", nm);
    return (int)s->nnames++;
}

/* Scratch from `scratch` (the caller's per-call arena, or a private one when
 * NULL), released before returning; the series in out is the caller's. */
hta_status hta_membw_series_build(const hta_view *v, hta_series_rules rules, hta_arena *scratch, hta_membw_series *out,
                                  hta_error *err) {
    const hta_trace *t = v->t;
    const hta_rank *r = v->r;
    memset(out, 0, sizeof *out);
    hta_arena own = HTA_ARENA_INIT;
    hta_arena *A = scratch ? scratch : &own;
    hta_arena_mark mark = hta_arena_save(A);
    hta_status st = HTA_OK;
    size_t nv = v->n, m = 0;
    /* memory rows by symbol: the kernel type is a property of the name (-2: not yet classified, -1: not
     * memory).  HTA's own type rule (§1), as its bandwidth series uses it: a hipMemcpy* name is
     * communication there, and dma_* is "Memcpy Unknown". */
    uint32_t nsym = hta_symtab_count(t->sym);
    int8_t *kind_sym = HTA_ANEW(A, int8_t, nsym);
    uint32_t *pos = HTA_ANEW(A, uint32_t, nv);
    int64_t *ts = NULL, *kd = NULL;
    double *val = NULL;
    uint32_t *perm = NULL;
    if (!kind_sym || !pos) goto oom;
    memset(kind_sym, -2, nsym ? nsym : 1);
    for (size_t k = 0; k < nv; k++) {
        uint32_t i = v->row[k];
        if (hta_row_stream(r, i) == -1) continue;
        uint32_t nm = r->name[i];
        if (kind_sym[nm] == -2) {
            const char *s = hta_sym(t->sym, nm);
            /* HTA's rule takes hip* copies for communication (analyses.md §1) */
            if ((rules == HTA_SERIES_HTA ? hta_kernel_type_of_hta(s) : hta_kernel_type_of(s)) == HTA_KT_MEMORY) {
                char buf[16];
                int kk = kind_of(out, hta_memory_kernel_type(s, buf));
                kind_sym[nm] = (int8_t)(kk < 0 ? -1 : kk);
            } else {
                kind_sym[nm] = -1;
            }
        }
        if (kind_sym[nm] >= 0) pos[m++] = (uint32_t)k;
    }
    /* names ascending, as HTA's groupby: each kind's place among at most 16, then the names moved there */
    uint16_t remap[16];
    for (size_t a = 0; a < out->nnames; a++) {
        size_t rank = 0;
        for (size_t b = 0; b < out->nnames; b++) rank += strcmp(out->names[b], out->names[a]) < 0;
        remap[a] = (uint16_t)rank;
    }
    char sorted[16][16] = {{0}};
    for (size_t a = 0; a < out->nnames; a++) memcpy(sorted[remap[a]], out->names[a], 16);
    memcpy(out->names, sorted, sizeof sorted);

    size_t n = 2 * m;
    ts = HTA_ANEW(A, int64_t, n);
    kd = HTA_ANEW(A, int64_t, n);
    val = HTA_ANEW(A, double, n);
    perm = HTA_ANEW(A, uint32_t, n);
    uint32_t *rows = HTA_ANEW(A, uint32_t, n); /* rows of the points, in perm order */
    out->ts = malloc((n ? n : 1) * sizeof *out->ts);
    out->row = malloc((n ? n : 1) * sizeof *out->row);
    out->kind = malloc((n ? n : 1) * sizeof *out->kind);
    out->bw = malloc((n ? n : 1) * sizeof *out->bw);
    if (!ts || !kd || !val || !perm || !rows || !out->ts || !out->row || !out->kind || !out->bw) goto oom;
    /* start points, then end points (HTA's concatenation order) */
    for (size_t j = 0; j < m; j++) {
        size_t k = pos[j];
        uint32_t i = v->row[k];
        int64_t d = v->dur[k] == 0 ? 1000 : v->dur[k]; /* zero length counts as 1 us */
        /* the trace's own "memory bandwidth (GB/s)" arg; 0 when absent (AMD), as in HTA */
        double bw = hta_row_arg_num(t, r, i, HTA_ARG_MEMORY_BW, 0.0);
        kd[j] = kd[m + j] = remap[kind_sym[r->name[i]]];
        ts[j] = v->ts[k];
        ts[m + j] = v->ts[k] + d;
        val[j] = bw;
        val[m + j] = -bw;
        out->row[j] = out->row[m + j] = i; /* temporary: row per point */
    }
    /* Time order with ties as in queue_length.c (stable by default, HTA's numpy order on request), then a
     * stable sort by kind: grouped by name, time order kept within (§11.1 step 3). */
    if (rules == HTA_SERIES_HTA) {
        HTA_TRY_GOTO(st, hta_argsort_numpy_i64(ts, n, perm, err), fail);
    } else {
        for (size_t k = 0; k < n; k++) perm[k] = (uint32_t)k;
        HTA_TRY_GOTO(st, hta_stable_sort_idx_i64(perm, n, ts, err), fail);
    }
    HTA_TRY_GOTO(st, hta_stable_sort_idx_i64(perm, n, kd, err), fail);
    double run = 0;
    for (size_t k = 0; k < n; k++) {
        uint32_t p = perm[k];
        if (k == 0 || kd[p] != out->kind[k - 1]) run = 0;
        run += val[p]; /* floating point in time order, as HTA (A14) */
        rows[k] = out->row[p];
        out->ts[k] = ts[p];
        out->kind[k] = (uint16_t)kd[p];
        out->bw[k] = run;
    }
    memcpy(out->row, rows, n * sizeof *rows);
    out->n = n;
    goto done;
oom:
    st = hta_oom(err);
fail:
    hta_membw_series_free(out);
done:
    hta_arena_reset(A, mark);
    hta_arena_free(&own);
    return st;
}
