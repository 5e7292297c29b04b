/* Results put together from parts: the per-rank results of the per-rank iteration appended in rank
 * order (hta_result_append), and a result as bytes and back (hta_result_pack / unpack) for results that
 * travel between processes (hta-mpi).  Cells are copied bit for bit, so a result put together prints
 * exactly as the one computed whole. */
#include <stdlib.h>
#include <string.h>

#include "hta/util.h"

#include "hta/table.h"

static size_t cell_size(hta_col_type ty) {
    return ty == HTA_COL_INT ? sizeof(int64_t) : ty == HTA_COL_FLOAT ? sizeof(double) : sizeof(char *);
}

static int same_columns(const hta_table *a, const hta_table *b) {
    if (a->ncols != b->ncols) return 0;
    for (size_t c = 0; c < a->ncols; c++)
        if (a->cols[c].type != b->cols[c].type || strcmp(a->cols[c].name, b->cols[c].name)) return 0;
    return 1;
}

/* Moves src's rows to the end of dst (same columns); src keeps its rows' count but no string. */
static int move_rows(hta_table *dst, hta_table *src) {
    size_t n = dst->nrows + src->nrows, cap = dst->cap ? dst->cap : 16;
    while (cap < n) cap *= 2;
    if (hta_table_reserve(dst, cap)) return -1;
    for (size_t c = 0; c < dst->ncols; c++) {
        hta_column *d = &dst->cols[c], *s = &src->cols[c];
        size_t cs = cell_size(d->type);
        if (s->null && !d->null) {
            if (!(d->null = calloc(dst->cap, 1))) return -1;
        }
        if (d->null) {
            if (s->null) memcpy(d->null + dst->nrows, s->null, src->nrows);
            else memset(d->null + dst->nrows, 0, src->nrows);
        }
        memcpy((char *)d->v.i + dst->nrows * cs, s->v.i, src->nrows * cs);
        if (s->type == HTA_COL_STR) memset(s->v.s, 0, src->nrows * sizeof *s->v.s);
        d->wrap |= s->wrap;
    }
    dst->nrows = n;
    return 0;
}

hta_status hta_result_append(hta_result *dst, hta_result *src, hta_error *err) {
    for (size_t i = 0; i < src->n; i++) {
        hta_table *s = src->tables[i], *d = hta_result_find(dst, s->name);
        if (!d) {
            if (hta_result_add(dst, s)) return src->tables[i] = NULL, hta_oom(err);
            src->tables[i] = NULL;
            continue;
        }
        if (!same_columns(d, s))
            return hta_fail(err, HTA_EINVAL, "table `%s`: the parts have different columns", s->name);
        if (move_rows(d, s)) return hta_oom(err);
    }
    /* notes: each once, in the order first given (a note about the run, not a rank, comes from every
     * part) */
    for (size_t i = 0; i < src->nnotes; i++) {
        int seen = 0;
        for (size_t k = 0; k < dst->nnotes && !seen; k++) seen = !strcmp(dst->notes[k], src->notes[i]);
        if (!seen && hta_result_note(dst, "%s", src->notes[i])) return hta_oom(err);
    }
    size_t keep = 0;
    for (size_t i = 0; i < src->n; i++)
        if (src->tables[i]) src->tables[keep++] = src->tables[i];
    src->n = keep;
    return HTA_OK;
}

/* ---- bytes ----
 * u64 counts and lengths, little-endian as the machine writes them: the processes of one MPI run share
 * one architecture.  Layout: ntables, then per table its name, ncols, nrows, per column its name, type,
 * wrap, has-null, cells (strings as length + 1 and text, 0 for NULL), null flags; then nnotes and notes. */
typedef hta_bytes buf;

static void put(buf *b, const void *x, size_t n) { hta_bytes_put(b, x, n); }
static void put_u64(buf *b, uint64_t v) { hta_bytes_put_u64(b, v); }
static void put_str(buf *b, const char *s) {
    put_u64(b, s ? strlen(s) + 1 : 0);
    if (s) put(b, s, strlen(s));
}

hta_status hta_result_pack(const hta_result *r, char **out, size_t *len, hta_error *err) {
    buf b = {0};
    put_u64(&b, r->n);
    for (size_t i = 0; i < r->n; i++) {
        const hta_table *t = r->tables[i];
        put_str(&b, t->name);
        put_u64(&b, t->ncols);
        put_u64(&b, t->nrows);
        for (size_t c = 0; c < t->ncols; c++) {
            const hta_column *col = &t->cols[c];
            put_str(&b, col->name);
            put_u64(&b, (uint64_t)col->type);
            put_u64(&b, (uint64_t)col->wrap);
            put_u64(&b, col->null != NULL);
            if (col->type == HTA_COL_STR)
                for (size_t k = 0; k < t->nrows; k++) put_str(&b, col->v.s[k]);
            else
                put(&b, col->v.i, t->nrows * 8);
            if (col->null) put(&b, col->null, t->nrows);
        }
    }
    put_u64(&b, r->nnotes);
    for (size_t i = 0; i < r->nnotes; i++) put_str(&b, r->notes[i]);
    if (b.oom) {
        free(b.p);
        return hta_oom(err);
    }
    *out = b.p;
    *len = b.n;
    return HTA_OK;
}

typedef struct rd {
    const char *p;
    size_t n, at;
    int bad;
} rd;

static const void *take(rd *r, size_t n) {
    if (r->bad || n > r->n - r->at) {
        r->bad = 1;
        return NULL;
    }
    const void *x = r->p + r->at;
    r->at += n;
    return x;
}
static uint64_t take_u64(rd *r) {
    uint64_t v = 0;
    const void *x = take(r, sizeof v);
    if (x) memcpy(&v, x, sizeof v);
    return v;
}
/* a string of the bytes, copied; *isnull for a NULL one.  NULL with r->bad on a short buffer or no memory */
static char *take_str(rd *r, int *isnull) {
    uint64_t l = take_u64(r);
    *isnull = l == 0;
    if (r->bad || !l) return NULL;
    const char *s = take(r, l - 1);
    char *c = s ? malloc(l) : NULL;
    if (!c) {
        r->bad = 1;
        return NULL;
    }
    memcpy(c, s, l - 1);
    c[l - 1] = 0;
    return c;
}

hta_status hta_result_unpack(const char *bytes, size_t len, const hta_table_def *const *defs, hta_result *out,
                             hta_error *err) {
    rd r = {bytes, len, 0, 0};
    hta_result_init(out);
    uint64_t nt = take_u64(&r);
    int isnull;
    for (uint64_t i = 0; i < nt && !r.bad; i++) {
        hta_table *t = calloc(1, sizeof *t);
        if (!t || !(t->name = take_str(&r, &isnull)) || hta_result_add(out, t)) {
            if (t) free(t->name), free(t);
            r.bad = 1;
            break;
        }
        for (size_t d = 0; defs && defs[d]; d++)
            if (!strcmp(defs[d]->name, t->name)) t->def = defs[d];
        uint64_t nc = take_u64(&r), nr = take_u64(&r);
        if (r.bad || nc > len || nr > len || !(t->cols = calloc(nc ? nc : 1, sizeof *t->cols))) {
            r.bad = 1;
            break;
        }
        t->cap = nr ? nr : 1;
        for (uint64_t c = 0; c < nc && !r.bad; c++) {
            hta_column *col = &t->cols[t->ncols];
            col->name = take_str(&r, &isnull);
            col->type = (hta_col_type)take_u64(&r);
            col->wrap = (int)take_u64(&r);
            int hasnull = take_u64(&r) != 0;
            if (r.bad || !col->name || col->type > HTA_COL_STR || !(col->v.i = calloc(t->cap, 8))) {
                free(col->name);
                r.bad = 1;
                break;
            }
            t->ncols++;
            if (col->type == HTA_COL_STR) {
                for (uint64_t k = 0; k < nr && !r.bad; k++) col->v.s[k] = take_str(&r, &isnull);
            } else {
                const void *x = take(&r, nr * 8);
                if (x) memcpy(col->v.i, x, nr * 8);
            }
            if (hasnull && !r.bad) {
                const void *x = take(&r, nr);
                if (x && (col->null = malloc(t->cap))) memcpy(col->null, x, nr);
                else r.bad = 1;
            }
        }
        t->nrows = nr;
    }
    uint64_t nn = take_u64(&r);
    for (uint64_t i = 0; i < nn && !r.bad; i++) {
        char *s = take_str(&r, &isnull);
        if (!s || hta_result_note(out, "%s", s)) r.bad = 1;
        free(s);
    }
    if (r.bad) {
        hta_result_free(out);
        return hta_fail(err, HTA_EFORMAT, "a packed result: short or damaged (%zu bytes)", len);
    }
    return HTA_OK;
}
