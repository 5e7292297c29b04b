/* The session of the Python C API: a run context opened once (the ranks loaded once, their views kept
 * for every analysis of the session), its window, its loader warnings, and the rank's rows as columns
 * for the package's Trace object. */
#include <stdlib.h>
#include <string.h>

#include "hta/util.h"
#include "pyapi/internal.h"

int hta_py_abi(void) { return HTA_PY_ABI; }

hta_status py_need(const hta_py_ctx *c, hta_error *err) {
    return c && c->ctx ? HTA_OK : hta_fail(err, HTA_EINVAL, "the trace was closed");
}

static void keep_warning(void *user, const char *msg) {
    hta_py_ctx *c = user;
    (void)hta_strlist_add(&c->warn, &c->nwarn, "%s", msg); /* lost to a full memory: the load reports that */
}

hta_status hta_py_open(const char *path, const char *opts, hta_py_ctx **out, hta_error *err) {
    *out = NULL;
    if (!path) return hta_fail(err, HTA_EINVAL, "no trace path given");
    py_opts o;
    HTA_TRY(py_opts_parse(opts, &o, err));
    static const char *const keys[] = {"ranks", "hta_compat", "include_last_step", "threads", NULL};
    hta_py_ctx *c = calloc(1, sizeof *c);
    hta_ctx_opts co = {0};
    int64_t *ranks = NULL;
    int32_t *r32 = NULL;
    size_t nranks = 0;
    long long threads = 0;
    hta_status st = c ? py_opts_check(&o, "TraceAnalysis", keys, err) : hta_oom(err);
    if (!st) st = py_opt_flag(&o, "hta_compat", &co.hta_compat, err);
    if (!st) st = py_opt_flag(&o, "include_last_step", &co.view.include_last_profiler_step, err);
    if (!st) st = py_opt_int(&o, "threads", &threads, err);
    if (!st && (threads < 0 || threads > 64)) st = hta_fail(err, HTA_EINVAL, "threads: %lld (0-64)", threads);
    if (!st && py_opt(&o, "ranks")) {
        st = py_parse_int_list("ranks", py_opt(&o, "ranks"), &ranks, &nranks, err);
        if (!st && !(r32 = malloc((nranks ? nranks : 1) * sizeof *r32))) st = hta_oom(err);
        for (size_t i = 0; !st && i < nranks; i++) r32[i] = (int32_t)ranks[i];
        co.ranks = r32;
        co.nranks = nranks;
    }
    if (!st) {
        co.threads = (int)threads;
        co.warn = keep_warning;
        co.warn_ctx = c;
        st = hta_ctx_open(path, &co, &c->ctx, err);
    }
    free(ranks);
    free(r32);
    py_opts_free(&o);
    if (st) {
        hta_py_close(c);
        return st;
    }
    /* every analysis of the session reads the same views: built once, kept */
    hta_ctx_keep_views(c->ctx, 1);
    *out = c;
    return HTA_OK;
}

void hta_py_close(hta_py_ctx *c) {
    if (!c) return;
    hta_ctx_free(c->ctx);
    for (size_t i = 0; i < c->nwarn; i++) free(c->warn[i]);
    free(c->warn);
    free(c->window_spec);
    free(c->syms);
    free(c);
}

size_t hta_py_nwarnings(const hta_py_ctx *c) { return c ? c->nwarn : 0; }
const char *hta_py_warning(const hta_py_ctx *c, size_t i) { return c && i < c->nwarn ? c->warn[i] : NULL; }

hta_status hta_py_set_window(hta_py_ctx *c, const char *window, hta_error *err) {
    HTA_TRY(py_need(c, err));
    const char *old = c->window_spec ? c->window_spec : "";
    if (!window) window = "";
    if (!strcmp(old, window)) return HTA_OK;
    hta_window w = {0};
    char *spec = NULL;
    if (*window) {
        if (!(spec = strdup(window))) return hta_oom(err);
        hta_status st = hta_window_parse(spec, &w, err);
        if (st) {
            free(spec);
            return st;
        }
    }
    /* the old text goes only after the context stops pointing into it */
    hta_status st = hta_ctx_set_window(c->ctx, &w, err);
    free(c->window_spec);
    c->window_spec = st ? NULL : spec;
    if (st) free(spec);
    return st;
}

/* ---- the trace as columns ---- */

size_t hta_py_nranks(const hta_py_ctx *c) { return c && c->ctx ? hta_ctx_nranks(c->ctx) : 0; }

static const hta_rank *rank_of(const hta_py_ctx *c, size_t k) {
    return k < hta_py_nranks(c) ? hta_ctx_rank(c->ctx, k) : NULL;
}

int32_t hta_py_rank(const hta_py_ctx *c, size_t k) {
    const hta_rank *r = rank_of(c, k);
    return r ? r->rank : -1;
}

const char *hta_py_rank_path(const hta_py_ctx *c, size_t k) {
    const hta_rank *r = rank_of(c, k);
    return r ? r->path : NULL;
}

size_t hta_py_rank_nrows(const hta_py_ctx *c, size_t k) {
    const hta_rank *r = rank_of(c, k);
    return r ? r->n : 0;
}

int hta_py_rank_flags(const hta_py_ctx *c, size_t k) {
    const hta_rank *r = rank_of(c, k);
    if (!r) return 0;
    return (r->dur_not_int ? HTA_PY_DUR_NOT_INT : 0) | (r->pid_text ? HTA_PY_PID_TEXT : 0) |
           (r->tid_text ? HTA_PY_TID_TEXT : 0) | (r->ts_fractional ? HTA_PY_TS_FRACTIONAL : 0);
}

const void *hta_py_rank_col(const hta_py_ctx *c, size_t k, const char *name, char *code) {
    const hta_rank *r = rank_of(c, k);
    if (!r || !name) return NULL;
    static const struct {
        const char *name;
        char code;
        size_t off;
    } cols[] = {
        {"ts", 'q', offsetof(hta_rank, ts)},
        {"dur", 'q', offsetof(hta_rank, dur)},
        {"correlation", 'q', offsetof(hta_rank, correlation)},
        {"external_id", 'q', offsetof(hta_rank, external_id)},
        {"name", 'I', offsetof(hta_rank, name)},
        {"thread", 'I', offsetof(hta_rank, thread)},
        {"index", 'I', offsetof(hta_rank, index)},
        {"cat", 'H', offsetof(hta_rank, cat)},
        {"stream", 'H', offsetof(hta_rank, stream)},
        {"partner", 'i', offsetof(hta_rank, partner)},
        {"parent", 'i', offsetof(hta_rank, parent)},
        {"iteration", 'i', offsetof(hta_rank, iteration)},
        {"depth", 'h', offsetof(hta_rank, depth)},
    };
    for (size_t i = 0; i < sizeof cols / sizeof *cols; i++)
        if (!strcmp(cols[i].name, name)) {
            *code = cols[i].code;
            return *(void *const *)((const char *)r + cols[i].off);
        }
    return NULL;
}

size_t hta_py_rank_nthreads(const hta_py_ctx *c, size_t k) {
    const hta_rank *r = rank_of(c, k);
    return r ? r->nthreads : 0;
}

void hta_py_rank_threads(const hta_py_ctx *c, size_t k, int64_t *pid, int64_t *tid) {
    const hta_rank *r = rank_of(c, k);
    for (size_t i = 0; r && i < r->nthreads; i++) {
        pid[i] = r->threads[i].pid_sym >= 0 ? -1 : r->threads[i].pid;
        tid[i] = r->threads[i].tid_sym >= 0 ? -1 : r->threads[i].tid;
    }
}

const char *hta_py_rank_thread_text(const hta_py_ctx *c, size_t k, size_t thread, int tid) {
    const hta_rank *r = rank_of(c, k);
    if (!r || thread >= r->nthreads) return NULL;
    int64_t s = tid ? r->threads[thread].tid_sym : r->threads[thread].pid_sym;
    return s >= 0 ? hta_sym(c->ctx->trace->sym, (uint32_t)s) : NULL;
}

const int64_t *hta_py_rank_streams(const hta_py_ctx *c, size_t k, size_t *n) {
    const hta_rank *r = rank_of(c, k);
    *n = r ? r->nstreams : 0;
    return r ? r->streams : NULL;
}

const uint32_t *hta_py_cats(const hta_py_ctx *c, size_t *n) {
    *n = c && c->ctx ? c->ctx->trace->ncats : 0;
    return *n ? c->ctx->trace->cats : NULL;
}

const char *hta_py_symbols(hta_py_ctx *c, size_t *n, size_t *len) {
    *n = *len = 0;
    if (!c || !c->ctx) return NULL;
    const hta_symtab *s = c->ctx->trace->sym;
    if (!c->syms) {
        uint32_t m = hta_symtab_count(s);
        size_t total = 0;
        for (uint32_t i = 0; i < m; i++) total += strlen(hta_sym(s, i)) + 1;
        char *b = malloc(total ? total : 1);
        if (!b) return NULL;
        size_t at = 0;
        for (uint32_t i = 0; i < m; i++) {
            size_t l = strlen(hta_sym(s, i)); /* C strings: a NUL inside a name ends it everywhere */
            memcpy(b + at, hta_sym(s, i), l);
            b[at + l] = 0;
            at += l + 1;
        }
        c->syms = b;
        c->nsyms = m;
        c->syms_len = total;
    }
    *n = c->nsyms;
    *len = c->syms_len;
    return c->syms;
}

hta_status hta_py_view(hta_py_ctx *c, size_t k, const uint32_t **row, const int64_t **ts, const int64_t **dur,
                       size_t *n, hta_error *err) {
    HTA_TRY(py_need(c, err));
    if (k >= hta_ctx_nranks(c->ctx)) return hta_fail(err, HTA_EINVAL, "no rank position %zu", k);
    const hta_view *v;
    HTA_TRY(hta_ctx_view(c->ctx, k, &v, err));
    *row = v->row;
    *ts = v->ts;
    *dur = v->dur;
    *n = v->n;
    return HTA_OK;
}
