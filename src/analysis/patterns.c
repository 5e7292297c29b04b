/* Frequent CUDA kernel sequences (analyses.md §12): the kernels launched
 * under each outermost call of an operator, counted per sequence, and the
 * trace overlaid with the sequences found. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hta/counters.h"
#include "hta/rawjson.h"
#include "hta/util.h"
#include "analysis/callgraph.h"

HTA_TABLE_DEFINE(HTA_PATTERNS);

void hta_patterns_opts_default(hta_patterns_opts *o) { *o = (hta_patterns_opts){.min_len = 3, .top_k = 5}; }


typedef struct root {
    uint32_t row;
    char *pattern;   /* in the scratch arena */
    int64_t kdur;    /* ns: the kernels under it */
    int64_t dur;     /* ns: the operator itself */
    int32_t pat;     /* index into the result patterns */
} root;

typedef struct pat {
    const char *pattern; /* borrowed from a root */
    int64_t count, kdur, dur;
} pat;

/* View positions by time, then event order (qsort_r: no global state). */
static int by_time(const void *a, const void *b, void *ctx) {
    const hta_view *v = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (v->ts[x] != v->ts[y]) return v->ts[x] < v->ts[y] ? -1 : 1;
    uint32_t ix = v->r->index[v->row[x]], iy = v->r->index[v->row[y]];
    return (ix > iy) - (ix < iy);
}

static int by_pattern(const void *a, const void *b) {
    return strcmp(((const root *)a)->pattern, ((const root *)b)->pattern);
}

static int by_count(const void *a, const void *b) {
    const pat *x = a, *y = b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    return strcmp(x->pattern, y->pattern);
}

/* ---- overlay ---- */

typedef struct overlay {
    const int32_t *evpat; /* pattern of each event index, -1 none */
    uint64_t nev;
    char **mark; /* per pattern: its args member, "Patterns": {"<pattern>": count} */
    hta_raw_obj obj;
    uint64_t marked;
} overlay;

static int ov_event(void *ctx, hta_rawout *w, uint32_t index, const char *json, size_t len) {
    overlay *x = ctx;
    int32_t p = index < x->nev ? x->evpat[index] : -1;
    if (p < 0) return hta_rawout_event(w, json, len);
    int rc = hta_raw_obj_parse(&x->obj, json, len);
    if (rc) return rc == -2 ? hta_rawout_oom(w) : hta_rawout_event(w, json, len);
    x->marked++;
    return hta_rawout_add_arg(w, &x->obj, json, len, x->mark[p], strlen(x->mark[p]));
}

static int put_file(void *f, const char *s, size_t n) { return fwrite(s, 1, n, f) != n; }

static hta_status write_overlay(const hta_rank *r, const char *dir, const int32_t *evpat, const pat *pats,
                                size_t npats, hta_result *out, hta_error *err) {
    const char *base = strrchr(r->path, '/');
    base = base ? base + 1 : r->path;
    size_t cap = strlen(dir) + strlen(base) + 16;
    char *path = malloc(cap);
    overlay x = {evpat, r->n_events, calloc(npats ? npats : 1, sizeof(char *)), {0}, 0};
    hta_status st = HTA_OK;
    for (size_t p = 0; path && x.mark && p < npats && !st; p++) {
        size_t ml;
        FILE *f = open_memstream(&x.mark[p], &ml);
        int bad = !f || fputs("\"Patterns\": {", f) < 0 || hta_json_quote(pats[p].pattern, put_file, f) ||
                  fprintf(f, ": %lld}", (long long)pats[p].count) < 0;
        if ((f && fclose(f)) || bad) st = hta_oom(err);
    }
    if (!path || !x.mark) st = hta_oom(err);
    if (!st) {
        snprintf(path, cap, "%s/overlaid_%s", dir, base);
        hta_rawout_hooks h = {.event = ov_event, .ctx = &x};
        st = hta_rawout_derive(r->path, path, hta_raw_is_gzip(r->path), &h, err);
    }
    if (!st && hta_result_note(out, "overlaid trace: %s (%llu events, %llu marked with their pattern)", path,
                               (unsigned long long)r->n_events, (unsigned long long)x.marked))
        st = hta_oom(err);
    for (size_t p = 0; x.mark && p < npats; p++) free(x.mark[p]);
    free(x.mark);
    hta_raw_obj_free(&x.obj);
    free(path);
    return st;
}

/* ---- analysis ---- */

/* Patterns of one rank: rows appended to tb, the overlay written. */
static hta_status rank_patterns(hta_ctx *ctx, size_t ri, const hta_patterns_opts *o, hta_table *tb,
                                hta_result *out, hta_error *err) {
    const hta_trace *t = ctx->trace;
    const hta_rank *r = t->ranks[ri];
    const hta_view *v = NULL;
    hta_cgraph g = {0};
    root *roots = NULL;
    pat *pats = NULL;
    int32_t *evpat = NULL, *bucket_of = NULL;
    uint32_t *mem = NULL, *start = NULL;
    unsigned char *match = NULL;
    size_t nroots = 0, npats = 0;
    hta_status st = hta_ctx_view(ctx, ri, &v, err);
    if (st) return st;
    /* scratch of this rank: released at `done`, whatever happened */
    hta_arena *A = &ctx->scratch;
    hta_arena_mark mark = hta_arena_save(A);
    HTA_TRY_GOTO(st, hta_cgraph_build(v, A, &g, err), done);
    uint32_t nsym = hta_symtab_count(t->sym);
    match = hta_arena_calloc(A, nsym ? nsym : 1, 1); /* 0 unknown, 1 no, 2 yes */
    if (!match) goto oom;
    int32_t min_depth = INT32_MAX;
    for (size_t k = 0; k < v->n; k++) {
        uint32_t i = v->row[k], nm = r->name[i];
        if (!match[nm]) match[nm] = strstr(hta_sym(t->sym, nm), o->op) ? 2 : 1;
        if (match[nm] == 2 && g.depth[i] < min_depth) min_depth = g.depth[i];
    }
    /* kernels per candidate root: each kernel belongs to its launch's ancestor at min_depth */
    int64_t *kcount = hta_arena_calloc(A, r->n ? r->n : 1, sizeof *kcount);
    int64_t *kdur = hta_arena_calloc(A, r->n ? r->n : 1, sizeof *kdur);
    if (!kcount || !kdur) goto oom;
    if (min_depth != INT32_MAX)
        for (size_t k = 0; k < v->n; k++) {
            uint32_t i = v->row[k];
            int32_t p = hta_cgraph_kernel_parent(r, &g, i);
            if (p < 0) continue;
            int32_t a = hta_cgraph_top(r, &g, (uint32_t)p, min_depth);
            if (a >= 0) kcount[a]++, kdur[a] += v->dur[k];
        }
    bucket_of = HTA_ANEW(A, int32_t, r->n);
    roots = HTA_ANEW(A, root, v->n);
    if (!bucket_of || !roots) goto oom;
    for (size_t i = 0; i < r->n; i++) bucket_of[i] = -1;
    for (size_t k = 0; k < v->n && min_depth != INT32_MAX; k++) {
        uint32_t i = v->row[k];
        if (match[r->name[i]] != 2 || g.depth[i] != min_depth || kcount[i] < o->min_len) continue;
        bucket_of[i] = (int32_t)nroots;
        roots[nroots++] = (root){i, NULL, kdur[i], v->dur[k], -1};
    }
    /* members of each root's subtree (CPU descendants and kernels), by bucket */
    start = hta_arena_calloc(A, nroots + 2, sizeof *start);
    int32_t *member_root = HTA_ANEW(A, int32_t, v->n);
    if (!start || !member_root) goto oom;
    for (size_t k = 0; k < v->n; k++) {
        uint32_t i = v->row[k];
        int32_t a = -1;
        if (nroots) {
            int32_t p = hta_cgraph_kernel_parent(r, &g, i);
            if (p >= 0) a = hta_cgraph_top(r, &g, (uint32_t)p, min_depth);
            else if (g.depth[i] >= min_depth && hta_row_stream(r, i) == -1) a = hta_cgraph_top(r, &g, i, min_depth);
            else if (bucket_of[i] >= 0) a = (int32_t)i; /* a root outside the graph */
        }
        member_root[k] = a >= 0 ? bucket_of[a] : -1;
        if (member_root[k] >= 0) start[member_root[k] + 1]++;
    }
    for (size_t b = 0; b < nroots; b++) start[b + 1] += start[b];
    mem = HTA_ANEW(A, uint32_t, start[nroots]);
    uint32_t *fill = hta_arena_calloc(A, nroots + 1, sizeof *fill);
    if (!mem || !fill) goto oom;
    for (size_t k = 0; k < v->n; k++)
        if (member_root[k] >= 0) mem[start[member_root[k]] + fill[member_root[k]]++] = (uint32_t)k;
    /* pattern of each root: its name, then its kernels by time */
    uint32_t *kv = HTA_ANEW(A, uint32_t, start[nroots]);
    if (!kv) goto oom;
    for (size_t b = 0; b < nroots; b++) {
        size_t nk = 0, len = strlen(hta_sym(t->sym, r->name[roots[b].row])) + 1;
        for (uint32_t m = start[b]; m < start[b + 1]; m++)
            if (hta_row_stream(r, v->row[mem[m]]) != -1) {
                kv[nk++] = mem[m];
                len += hta_sym_len(t->sym, r->name[v->row[mem[m]]]) + 1;
            }
        qsort_r(kv, nk, sizeof *kv, by_time, (void *)v);
        char *s = hta_arena_alloc(A, len);
        if (!s) goto oom;
        size_t o2 = (size_t)sprintf(s, "%s", hta_sym(t->sym, r->name[roots[b].row]));
        for (size_t k = 0; k < nk; k++) o2 += (size_t)sprintf(s + o2, "|%s", hta_sym(t->sym, r->name[v->row[kv[k]]]));
        roots[b].pattern = s;
    }
    /* count per pattern, then order by count descending and pattern */
    root *sorted = HTA_ANEW(A, root, nroots);
    pats = HTA_ANEW(A, pat, nroots);
    if (!sorted || !pats) goto oom;
    memcpy(sorted, roots, nroots * sizeof *roots);
    qsort(sorted, nroots, sizeof *sorted, by_pattern);
    for (size_t b = 0; b < nroots; b++) {
        if (!npats || strcmp(pats[npats - 1].pattern, sorted[b].pattern))
            pats[npats++] = (pat){sorted[b].pattern, 0, 0, 0};
        pats[npats - 1].count++;
        pats[npats - 1].kdur += sorted[b].kdur;
        pats[npats - 1].dur += sorted[b].dur;
    }
    qsort(pats, npats, sizeof *pats, by_count);
    for (size_t p = 0; p < npats; p++) {
        long row = hta_table_add_row(tb);
        if (row < 0 || hta_table_set_str(tb, (size_t)row, HTA_PATTERNS_PATTERN, pats[p].pattern)) goto oom;
        hta_table_set_int(tb, (size_t)row, HTA_PATTERNS_COUNT, pats[p].count);
        hta_table_set_float(tb, (size_t)row, HTA_PATTERNS_KERNEL_US, (double)pats[p].kdur / 1000.0);
        hta_table_set_float(tb, (size_t)row, HTA_PATTERNS_OP_US, (double)pats[p].dur / 1000.0);
        hta_table_set_int(tb, (size_t)row, HTA_PATTERNS_RANK, r->rank);
    }
    if (!npats && hta_result_note(out, "rank %d: no call of an operator containing '%s' launches %d or more kernels",
                                  r->rank, o->op, o->min_len))
        goto oom;
    if (o->overlay && npats) {
        if ((st = hta_output_dir(o->overlay, err))) goto fail;
        evpat = HTA_ANEW(A, int32_t, r->n_events);
        if (!evpat) goto oom;
        for (uint64_t e = 0; e < r->n_events; e++) evpat[e] = -1;
        size_t topk = o->top_k < 0 ? 0 : (size_t)o->top_k;
        for (size_t b = 0; b < nroots; b++) {
            size_t p = 0;
            while (p < npats && p < topk && strcmp(pats[p].pattern, roots[b].pattern)) p++;
            if (p >= npats || p >= topk) continue;
            for (uint32_t m = start[b]; m < start[b + 1]; m++) evpat[r->index[v->row[mem[m]]]] = (int32_t)p;
        }
        if ((st = write_overlay(r, o->overlay, evpat, pats, npats, out, err))) goto fail;
    }
    goto done;
oom:
    st = hta_oom(err);
fail:
done:
    hta_arena_reset(A, mark);
    return st;
}

hta_status hta_patterns(hta_ctx *ctx, const hta_patterns_opts *o, hta_result *out, hta_error *err) {
    HTA_OPTS_OR_DEFAULT(hta_patterns_opts, o);
    hta_table *tb = hta_table_from_def(&HTA_PATTERNS_TABLE);
    if (!tb) return hta_oom(err);
    if (!o->op || !*o->op) {
        if (hta_result_add(out, tb)) return hta_oom(err);
        return hta_result_note(out, "empty operator name: no patterns") ? hta_oom(err) : HTA_OK;
    }
    for (size_t k = 0; k < hta_ctx_nranks(ctx); k++) {
        hta_status st = rank_patterns(ctx, k, o, tb, out, err);
        hta_ctx_view_done(ctx, k);
        if (st) {
            hta_table_free(tb);
            return st;
        }
    }
    return hta_result_add(out, tb) ? hta_oom(err) : HTA_OK;
}
