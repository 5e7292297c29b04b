/* The job in bounded memory (hta/sim.h, hta_job_*; job/internal.h): the passes over the ranks, and
 * the job's tables (rows through src/cpath/sim_report.c, sim_ranks.c), from the replay and the paths' pieces. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job/internal.h"
#include "core/bigbuf.h"
#include "core/vec.h"
#include "hta/util.h"
#include "hta/vocab.h"


/* ---- visiting the ranks ---- */

typedef hta_status (*visit_fn)(struct hta_job *j, hta_ctx *ctx, size_t k, size_t pos, void *arg, hta_error *err);

typedef struct source {
    hta_ctx *ctx;
    hta_ctx **keep;      /* per file of the plan: the caller's kept contexts (hta_job_opts.keep), or NULL */
    int resident;        /* the ranks' graphs kept between passes (j->graph), each file read once */
    const hta_rank_plan *plan;
    const hta_ctx_opts *co;
    int threads;
    int visits;          /* visits so far: loaders' warnings are given on the first only */
    size_t failed;
    int in_load;
    sj_exch *x;          /* the passes shared among processes (hta_job_dist), or NULL */
} source;

typedef struct closure {
    struct hta_job *j;
    visit_fn fn;
    void *arg;
    sj_exch *x;
} closure;

static hta_status each(hta_ctx *ctx, size_t index, void *user, hta_error *err) {
    closure *c = user;
    return c->fn(c->j, ctx, 0, index, c->arg, err);
}

static void quiet(void *ctx, const char *msg) { (void)ctx, (void)msg; }

/* shared passes: the first pass's warnings kept for the exchange, which gives every process's in rank order */
static void keep_warning(void *user, size_t index, const char *msg) { sj_exch_warn(((closure *)user)->x, index, msg); }

/* A pass over kept graphs (no context): fn(j, NULL, 0, pos) for each position, `threads` at once. */
typedef struct kept_pass {
    struct hta_job *j;
    const size_t *which;
    size_t n;
    visit_fn fn;
    void *arg;
    atomic_size_t next;
    atomic_int stop;
    hta_status *st;
    hta_error *err;
} kept_pass;

static void *kept_worker(void *a) {
    kept_pass *k = a;
    for (;;) {
        size_t i = atomic_fetch_add(&k->next, 1);
        if (i >= k->n || atomic_load(&k->stop)) break;
        k->st[i] = k->fn(k->j, NULL, 0, k->which[i], k->arg, &k->err[i]);
        if (k->st[i]) atomic_store(&k->stop, 1);
    }
    return NULL;
}

static hta_status visit_kept(struct hta_job *j, source *src, const size_t *which, size_t n, visit_fn fn, void *arg,
                             hta_error *err) {
    kept_pass k = {j, which, n, fn, arg, 0, 0, calloc(n ? n : 1, sizeof(hta_status)), calloc(n ? n : 1, sizeof(hta_error))};
    if (!k.st || !k.err) {
        free(k.st);
        free(k.err);
        return hta_oom(err);
    }
    atomic_init(&k.next, 0);
    atomic_init(&k.stop, 0);
    hta_parallel(src->threads, n, kept_worker, &k);
    hta_status st = HTA_OK;
    for (size_t i = 0; i < n && !st; i++)
        if ((st = k.st[i])) *err = k.err[i], src->failed = which[i], src->in_load = 0;
    free(k.st);
    free(k.err);
    return st;
}

/* Visits ranks which[0 .. n) with fn.  Shared among processes (src->x): this process's share of them, then
 * what the pass produced for them exchanged as w says (job/wire.c), so that every process holds the
 * same job after it; an SJ_WIRE_ROOT pass is the root's alone.  rows: fn reads the ranks' rows (a context);
 * else, where every rank's graph is kept (sj_rank_keep), no file is loaded. */
static hta_status visit(struct hta_job *j, source *src, const size_t *which, size_t n, const sj_wire *w,
                        visit_fn fn, void *arg, int rows, hta_error *err) {
    if (src->ctx) {
        for (size_t i = 0; i < n; i++) HTA_TRY(fn(j, src->ctx, which[i], which[i], arg, err));
        return HTA_OK;
    }
    int kept = !rows && j->graph && !src->x;
    for (size_t i = 0; kept && i < n; i++) kept = j->graph[which[i]].info;
    if (kept) return visit_kept(j, src, which, n, fn, arg, err);
    hta_ctx_opts co = *src->co;
    int first = !src->visits++;
    if (!first) co.warn = quiet, co.warn_ctx = NULL;
    closure c = {j, fn, arg, src->x};
    if (!src->x || w->kind == SJ_WIRE_ROOT) {
        if (src->x && !src->x->d->root) return HTA_OK;
        hta_each_opts eo = {which, n, src->threads, NULL, src->keep};
        return hta_ctx_each_rank(src->plan, &co, &eo, each, &c, &src->failed, &src->in_load, err);
    }
    size_t *mine = NULL, nm = 0, failed = SIZE_MAX;
    int in_load = 0;
    hta_status st = sj_exch_mine(src->x, which, n, &mine, &nm, err);
    if (!st) {
        hta_each_opts eo = {mine, nm, src->threads, first ? keep_warning : NULL, NULL};
        st = hta_ctx_each_rank(src->plan, &co, &eo, each, &c, &failed, &in_load, err);
    }
    st = sj_exchange(j, src->x, w, mine, nm, st, &failed, &in_load, first ? co.warn : NULL, co.warn_ctx, err);
    if (st) src->failed = failed, src->in_load = in_load;
    free(mine);
    return st;
}

static const sj_wire wire_rank = {SJ_WIRE_RANK, NULL, NULL}, wire_none = {SJ_WIRE_NONE, NULL, NULL},
                     wire_root = {SJ_WIRE_ROOT, NULL, NULL};

static hta_status skel_fn(struct hta_job *j, hta_ctx *ctx, size_t k, size_t pos, void *arg, hta_error *err) {
    return sj_skeleton(j, ctx, k, pos, arg != NULL, err);
}

static hta_status keep_fn(struct hta_job *j, hta_ctx *ctx, size_t k, size_t pos, void *arg, hta_error *err) {
    return sj_rank_keep(j, ctx, k, pos, err);
}

/* ---- the job ---- */

/* The graphs kept between passes: none once the passes are done. */
static void drop_graphs(struct hta_job *j) {
    for (size_t p = 0; j->graph && p < j->nr; p++) {
        hta_sim_free(j->graph[p].s);
        sj_chains_drop(&j->graph[p].ch);
        free(j->graph[p].pw_edge);
        free(j->graph[p].tr_edge);
    }
    free(j->graph);
    j->graph = NULL;
}

void hta_job_free(hta_job *j) {
    if (!j) return;
    drop_graphs(j);
    for (size_t p = 0; p < j->nr; p++) {
        sj_rank *R = &j->r[p];
        for (size_t q = 0; R->skel && q < j->nscn; q++) sj_skel_free(&R->skel[q]);
        free(R->skel);
        free(R->coll);
        free(R->steps);
        sj_tot_free(R);
        if (j->inst_of) free(j->inst_of[p]);
    }
    for (size_t q = 0; q < j->nscn; q++) {
        for (size_t p = 0; p < j->nr; p++) {
            if (j->arr && j->arr[q]) free(j->arr[q][p]);
            if (j->end && j->end[q]) free(j->end[q][p]);
            if (j->step_t && j->step_t[q]) free(j->step_t[q][p]);
        }
        if (j->arr) free(j->arr[q]);
        if (j->end) free(j->end[q]);
        if (j->step_t) free(j->step_t[q]);
        if (j->bar) free(j->bar[q]);
        for (size_t r = 0; j->scn[q].med && r < j->scn[q].nrules; r++) {
            if (!j->scn[q].med[r]) continue;
            free(j->scn[q].med[r]->key);
            free(j->scn[q].med[r]->f);
            free(j->scn[q].med[r]);
        }
        free(j->scn[q].med);
    }
    free(j->arr);
    free(j->end);
    free(j->step_t);
    free(j->bar);
    free(j->scn);
    free(j->inst_of);
    free(j->inst);
    free(j->part);
    free(j->delta);
    free(j->order);
    free(j->tkey);
    free(j->tslot);
    free(j->r);
    hta_symtab_free(j->sym);
    pthread_mutex_destroy(&j->lock);
    free(j);
}

int64_t hta_job_span(const hta_job *j, size_t scn) {
    int64_t a = INT64_MAX, z = INT64_MIN;
    for (size_t p = 0; p < j->nr; p++) {
        const sj_rank *R = &j->r[p];
        if (!R->present || !R->nev || R->first == INT64_MAX) continue;
        if (R->first - j->delta[p] < a) a = R->first - j->delta[p];
        if (j->step_t[scn][p][2 * R->nsteps] > z) z = j->step_t[scn][p][2 * R->nsteps];
    }
    return z > a ? z - a : 0;
}

size_t hta_job_nsteps(const hta_job *j) {
    size_t n = 0;
    for (size_t p = 0; p < j->nr; p++) n += j->r[p].nsteps;
    return n;
}

void hta_job_step(const hta_job *j, size_t scn, size_t i, int32_t *rank, int64_t *number, int64_t *dur_ns) {
    size_t p = 0;
    while (p < j->nr && i >= j->r[p].nsteps) i -= j->r[p].nsteps, p++;
    *rank = j->r[p].rank;
    *number = j->r[p].steps[i].number;
    *dur_ns = j->step_t[scn][p][2 * i + 1] - j->step_t[scn][p][2 * i];
}

/* The rules' checks one rank's graph makes (hta_sim_weights), over the job: each must select an edge somewhere. */
static hta_status check_rules(const struct hta_job *j, hta_error *err) {
    for (size_t q = 1; q < j->nscn; q++) {
        const sj_scn *sc = &j->scn[q];
        if (sc->lenient) continue;
        for (size_t r = 0; r < sc->nrules; r++) {
            const hta_cpath_rule *ru = &sc->rules[r];
            if (ru->median) {
                size_t p = 0;
                while (p < j->nr && !(j->r[p].present && j->r[p].rank == ru->num)) p++;
                if (p == j->nr)
                    return hta_fail(err, HTA_EINVAL, "what-if rule 'rank:%d=median': no rank %d in the trace",
                                    (int)ru->num, (int)ru->num);
            }
            size_t hits = 0;
            for (size_t p = 0; p < j->nr; p++)
                if (j->r[p].present) hits += j->r[p].skel[q].hits[r];
            if (!hits) {
                char rt[600];
                return hta_fail(err, HTA_EINVAL, "what-if rule '%s' matches nothing", cp_rule_text(ru, rt, sizeof rt));
            }
        }
    }
    return HTA_OK;
}

static hta_status alloc_times(struct hta_job *j, hta_error *err) {
    j->arr = calloc(j->nscn, sizeof *j->arr);
    j->end = calloc(j->nscn, sizeof *j->end);
    j->step_t = calloc(j->nscn, sizeof *j->step_t);
    j->bar = calloc(j->nscn, sizeof *j->bar);
    if (!j->arr || !j->end || !j->step_t || !j->bar) return hta_oom(err);
    for (size_t q = 0; q < j->nscn; q++) {
        j->arr[q] = calloc(j->nr ? j->nr : 1, sizeof **j->arr);
        j->end[q] = calloc(j->nr ? j->nr : 1, sizeof **j->end);
        j->step_t[q] = calloc(j->nr ? j->nr : 1, sizeof **j->step_t);
        j->bar[q] = malloc((j->ninst ? j->ninst : 1) * sizeof **j->bar);
        if (!j->arr[q] || !j->end[q] || !j->step_t[q] || !j->bar[q]) return hta_oom(err);
        for (size_t p = 0; p < j->nr; p++) {
            size_t nc = j->r[p].ncoll ? j->r[p].ncoll : 1, ns = 2 * j->r[p].nsteps + 1;
            j->arr[q][p] = malloc(nc * sizeof ***j->arr);
            j->end[q][p] = malloc(nc * sizeof ***j->end);
            j->step_t[q][p] = malloc(ns * sizeof ***j->step_t);
            if (!j->arr[q][p] || !j->end[q][p] || !j->step_t[q][p]) return hta_oom(err);
        }
    }
    return HTA_OK;
}

/* ---- paths ---- */

typedef struct paths {
    sj_query *q;        /* sorted by position, then scenario */
    size_t n;
    size_t *first;      /* per position: its queries q[first[p] .. first[p + 1]) */
} paths;

static hta_status local_fn(struct hta_job *j, hta_ctx *ctx, size_t k, size_t pos, void *arg, hta_error *err) {
    paths *P = arg;
    return sj_local(j, ctx, k, pos, P->q + P->first[pos], P->first[pos + 1] - P->first[pos], err);
}

static sj_query query(size_t pos, size_t scn, int at, size_t idx, int64_t from) {
    sj_query q;
    memset(&q, 0, sizeof q);
    q.pos = (uint32_t)pos, q.scn = (uint32_t)scn, q.at = at, q.idx = (uint32_t)idx, q.from = from;
    return q;
}

/* by position, scenario, then what is asked (the order they are made in: arrivals, step ends, the last), so
 * that piece() finds one by halving */
HTA_QSORT_CMP(cmp_query, sj_query,
              HTA_CMP4(x->pos, y->pos, x->scn, y->scn, x->at, y->at, x->idx, y->idx) ?: HTA_CMP(x->from, y->from))

/* Runs queries q[0 .. n) (any order; sorted here) over the ranks they name. */
static hta_status run_queries(struct hta_job *j, source *src, paths *P, hta_error *err) {
    if (P->n > 1) qsort(P->q, P->n, sizeof *P->q, cmp_query);
    free(P->first);
    P->first = calloc(j->nr + 1, sizeof *P->first);
    size_t *which = malloc((j->nr ? j->nr : 1) * sizeof *which), nw = 0;
    if (!P->first || !which) {
        free(which);
        return hta_oom(err);
    }
    for (size_t i = 0; i < P->n; i++) P->first[P->q[i].pos + 1]++;
    for (size_t p = 0; p < j->nr; p++) {
        if (P->first[p + 1]) which[nw++] = p;
        P->first[p + 1] += P->first[p];
    }
    sj_wire w = {SJ_WIRE_QUERY, P->q, P->first};
    hta_status st = nw ? visit(j, src, which, nw, &w, local_fn, P, 0, err) : HTA_OK;
    free(which);
    return st;
}

/* The answer to query (scn, pos, at, idx) with from = INT64_MIN among q (sorted: cmp_query; one query a key):
 * found by halving, as a path asks once per piece (a scan per piece made a path of many collectives quadratic). */
static const sj_query *piece(const paths *P, size_t scn, size_t pos, int at, uint32_t idx) {
    size_t lo = P->first[pos], hi = P->first[pos + 1], end = hi;
    while (lo < hi) { /* the first at or after the key */
        size_t m = lo + (hi - lo) / 2;
        const sj_query *x = &P->q[m];
        if (HTA_CMP3(x->scn, (uint32_t)scn, x->at, at, x->idx, idx) < 0) lo = m + 1;
        else hi = m;
    }
    const sj_query *x = lo < end ? &P->q[lo] : NULL;
    return x && x->scn == scn && x->at == at && x->idx == idx ? x : NULL;
}

/* One hop of the path: at a barrier, from the last arriver's rank to the rank it goes on in. */
typedef struct hop {
    int64_t t;
    uint32_t inst;
    int32_t from, to;
} hop;

/* A piece of the whole path (for the overlay): where it starts, and the barrier it ends at. */
typedef struct seg {
    uint32_t pos;
    int at;
    uint32_t idx;
    int64_t inst;       /* -1: the path's first piece (it ends at a source) */
    sj_part last;       /* the barrier's last arriver: the next piece back */
    sim_flow *fl;       /* the overlay: its arrows, last to first */
    size_t nfl, capfl;
} seg;

typedef struct trail {
    seg *segs;          /* want_hops: the pieces, last to first */
    size_t nsegs, capsegs;
    sj_acc acc;
    int64_t first;      /* the time where it stops */
    int need_cut;
    sj_query cut;       /* the walk to make, from the last piece's start, when need_cut */
    hop *hops;
    size_t nhops, caphops;
} trail;

static void acc_add(sj_acc *a, const sj_acc *b) {
    for (int c = 0; c < SJ_NCLS; c++) a->cls[c] += b->cls[c], a->col[c] += b->col[c];
    a->present |= b->present;
    a->edges += b->edges;
}

/* The path back from (pos, at, idx) to time `from`, as hta_sim_path walks the joined graph: pieces chained
 * at barriers, each barrier left through its last arriver (the first participant whose arrival is the
 * barrier's time).  Stops where a piece would be cut (need_cut, with the walk to make). */
static int follow(const struct hta_job *j, const paths *P, size_t scn, size_t pos, int at, uint32_t idx,
                  int64_t from, trail *tr, int want_hops) {
    memset(&tr->acc, 0, sizeof tr->acc);
    tr->need_cut = 0;
    tr->nhops = 0;
    for (;;) {
        const sj_query *x = piece(P, scn, pos, at, idx);
        if (!x) return -1;
        if (want_hops) {
            if (HTA_GROW(tr->segs, tr->capsegs, tr->nsegs + 1)) return -2;
            tr->segs[tr->nsegs++] = (seg){(uint32_t)pos, at, idx, -1, {0, 0}, NULL, 0, 0};
        }
        if (from != INT64_MIN && x->out.t1 <= from) {
            tr->first = x->out.t1;
            return 0;
        }
        if (from != INT64_MIN && x->out.t0 <= from) {
            tr->need_cut = 1;
            tr->cut = query(pos, scn, at, idx, from);
            return 0;
        }
        acc_add(&tr->acc, &x->out.acc);
        if (x->out.inst < 0) {
            tr->first = x->out.t0;
            return 0;
        }
        const sj_inst *in = &j->inst[x->out.inst];
        int64_t b = j->bar[scn][x->out.inst];
        const sj_part *last = NULL;
        for (uint32_t q = in->first; q < in->first + in->n && !last; q++)
            if (j->arr[scn][j->part[q].rank][j->part[q].coll] == b) last = &j->part[q];
        if (!last) return -1;
        if (want_hops) tr->segs[tr->nsegs - 1].inst = x->out.inst, tr->segs[tr->nsegs - 1].last = *last;
        /* the edge from the last arriver into the barrier (a dependency, no weight) */
        tr->acc.present |= 1u; /* class "" */
        tr->acc.edges++;
        if (want_hops && last->rank != pos) {
            if (HTA_GROW(tr->hops, tr->caphops, tr->nhops + 1)) return -2;
            tr->hops[tr->nhops++] = (hop){b, (uint32_t)x->out.inst, j->r[last->rank].rank, j->r[pos].rank};
        }
        pos = last->rank;
        at = SJ_AT_ARRIVAL;
        idx = last->coll;
    }
}

/* ---- tables ---- */

static double us(int64_t ns) { return (double)ns / 1000.0; }

static hta_status summary(const sj_acc *a, const hta_table_def *d, hta_result *out, hta_error *err) {
    const char *names[SJ_NCLS];
    __int128 sums[SJ_NCLS];
    size_t n = 0;
    for (int c = 0; c < SJ_NCLS; c++)
        if (a->present >> c & 1) names[n] = sj_class_names[c], sums[n++] = a->cls[c];
    return cp_summary_of(names, sums, n, d, out, err);
}

/* The last arriver of instance e under scenario 0: the first participant whose arrival is the latest. */
static const sj_part *last_of(const struct hta_job *j, const sj_inst *in) {
    const sj_part *best = &j->part[in->first];
    for (uint32_t q = in->first; q < in->first + in->n; q++)
        if (j->arr[0][j->part[q].rank][j->part[q].coll] > j->arr[0][best->rank][best->coll]) best = &j->part[q];
    return best;
}

static hta_status collectives_table(const struct hta_job *j, hta_result *out) {
    hta_table *tb = hta_table_from_def(&HTA_SIM_COLL_TABLE);
    if (!tb) return HTA_ENOMEM;
    for (size_t e = 0; e < j->ninst; e++) {
        const sj_inst *in = &j->inst[e];
        if (!in->matched) continue;
        const sj_part *last = last_of(j, in);
        int64_t sum = 0, mx = 0;
        for (uint32_t q = in->first; q < in->first + in->n; q++) {
            int64_t w = j->bar[0][e] - j->arr[0][j->part[q].rank][j->part[q].coll];
            if (w < 0) w = 0;
            sum += w;
            if (w > mx) mx = w;
        }
        if (sim_coll_row(tb, in->pg == UINT32_MAX ? "" : hta_sym(j->sym, in->pg),
                         hta_sym(j->sym, j->r[last->rank].coll[last->coll].name), in->seq, in->step, in->n,
                         j->r[last->rank].rank, sum, mx, in->tau))
            goto oom;
    }
    return hta_result_add(out, tb) ? HTA_ENOMEM : HTA_OK;
oom:
    hta_table_free(tb);
    return HTA_ENOMEM;
}

typedef sim_bl bl;

HTA_QSORT_CMP(cmp_key, bl, HTA_CMP2(x->step, y->step, x->rank, y->rank))

static hta_status blame_table(const struct hta_job *j, hta_result *out) {
    size_t n = 0;
    for (size_t e = 0; e < j->ninst; e++)
        if (j->inst[e].matched) n += j->inst[e].n + 1;
    bl *v = malloc((n ? n : 1) * sizeof *v);
    if (!v) return HTA_ENOMEM;
    size_t m = 0;
    for (size_t e = 0; e < j->ninst; e++) {
        const sj_inst *in = &j->inst[e];
        if (!in->matched) continue;
        int64_t caused = 0;
        for (uint32_t q = in->first; q < in->first + in->n; q++) {
            int64_t w = j->bar[0][e] - j->arr[0][j->part[q].rank][j->part[q].coll];
            if (w < 0) w = 0;
            v[m++] = (bl){in->step, j->r[j->part[q].rank].rank, 0, 0, w};
            caused += w;
        }
        v[m++] = (bl){in->step, j->r[last_of(j, in)->rank].rank, 1, caused, 0};
    }
    if (m > 1) qsort(v, m, sizeof *v, cmp_key);
    size_t u = 0;
    for (size_t i = 0; i < m; i++) {
        if (u && v[u - 1].step == v[i].step && v[u - 1].rank == v[i].rank) {
            v[u - 1].last += v[i].last, v[u - 1].caused += v[i].caused, v[u - 1].waited += v[i].waited;
            continue;
        }
        v[u++] = v[i];
    }
    hta_status st = sim_blame_table(v, u, out);
    free(v);
    return st;
}

static hta_status hops_table(const struct hta_job *j, const trail *tr, int64_t t0, hta_result *out) {
    hta_table *tb = hta_table_from_def(&HTA_SIM_HOPS_TABLE);
    if (!tb) return HTA_ENOMEM;
    for (size_t i = tr->nhops; i-- > 0;) { /* path order: first to last */
        const hop *h = &tr->hops[i];
        const sj_inst *in = &j->inst[h->inst];
        const sj_part *p0 = &j->part[in->first];
        if (sim_hop_row(tb, h->t - t0, in->step, h->from, h->to, hta_sym(j->sym, j->r[p0->rank].coll[p0->coll].name),
                        in->pg == UINT32_MAX ? "" : hta_sym(j->sym, in->pg), in->seq)) {
            hta_table_free(tb);
            return HTA_ENOMEM;
        }
    }
    return hta_result_add(out, tb) ? HTA_ENOMEM : HTA_OK;
}

/* The span the what-if totals cover under scenario q: the steps', else the whole run's. */
static void span(const struct hta_job *j, const paths *P, size_t q, int64_t *a, int64_t *z) {
    *a = INT64_MAX;
    *z = INT64_MIN;
    int steps = 0;
    for (size_t p = 0; p < j->nr; p++)
        for (size_t i = 0; i < j->r[p].nsteps; i++) {
            steps = 1;
            if (j->step_t[q][p][2 * i] < *a) *a = j->step_t[q][p][2 * i];
            if (j->step_t[q][p][2 * i + 1] > *z) *z = j->step_t[q][p][2 * i + 1];
        }
    if (steps) return;
    for (size_t p = 0; p < j->nr; p++) {
        const sj_query *x = P ? piece(P, q, p, SJ_AT_LAST, 0) : NULL;
        if (!x) continue;
        if (x->min_t < *a) *a = x->min_t;
        if (x->last_t > *z) *z = x->last_t;
    }
    if (*a > *z) *a = *z = 0;
}

/* A finished trail: cut where needed (one more visit of the ranks concerned). */
static hta_status finish(struct hta_job *j, source *src, trail *tr, size_t n, hta_error *err) {
    paths C = {0};
    size_t nc = 0;
    for (size_t i = 0; i < n; i++) nc += tr[i].need_cut;
    if (!nc) return HTA_OK;
    if (!(C.q = malloc(nc * sizeof *C.q))) return hta_oom(err);
    for (size_t i = 0; i < n; i++)
        if (tr[i].need_cut) C.q[C.n++] = tr[i].cut;
    hta_status st = run_queries(j, src, &C, err);
    for (size_t i = 0; !st && i < n; i++) {
        if (!tr[i].need_cut) continue;
        const sj_query *x = NULL;
        for (size_t k = C.first[tr[i].cut.pos]; k < C.first[tr[i].cut.pos + 1] && !x; k++) {
            const sj_query *y = &C.q[k];
            if (y->scn == tr[i].cut.scn && y->at == tr[i].cut.at && y->idx == tr[i].cut.idx && y->from == tr[i].cut.from)
                x = y;
        }
        if (!x) {
            st = hta_fail(err, HTA_EINVAL, "the job's path lost a piece; please report it");
            break;
        }
        acc_add(&tr[i].acc, &x->out.acc);
        tr[i].first = x->out.t0;
        tr[i].need_cut = 0;
    }
    free(C.q);
    free(C.first);
    return st;
}

/* ---- the overlay (--overlay): every rank's events on the job's clock, the path's marked ---- */

typedef struct ovl {
    struct hta_job *j;
    trail *whole;
    sim_ow *w;
    /* the rank being visited */
    size_t pos;
    const hta_sim *s;
    const int64_t *t;
    const uint32_t *arrival;
    int64_t off;
    uint32_t stub_first;
    const uint32_t *stub_inst;
    unsigned char *crit;
    seg *cur;
    int oom;
} ovl;

static int push_flow(seg *sg, const sim_flow *f) {
    if (sg->nfl == sg->capfl) {
        size_t nc = sg->capfl ? 2 * sg->capfl : 64;
        sim_flow *y = realloc(sg->fl, nc * sizeof *y);
        if (!y) return -1;
        sg->fl = y;
        sg->capfl = nc;
    }
    sg->fl[sg->nfl++] = *f;
    return 0;
}

/* An edge of the path in the visited rank: its events marked, its arrow kept (the joined graph's barrier node
 * is the instance's first participant's kernel). */
static void ov_edge(void *ctx, uint32_t e) {
    ovl *o = ctx;
    const hta_cp_graph *g = o->s->g;
    const hta_cp_edge *x = &g->edge[e];
    const hta_cp_event *ev = &g->ev[hta_cp_node_ev(g, x->v)];
    int32_t rank = o->j->r[o->pos].rank;
    o->crit[hta_cp_node_ev(g, x->v)] = 1;
    sim_flow f;
    memset(&f, 0, sizeof f);
    int same;
    if (x->u >= o->stub_first) {
        const sj_inst *in = &o->j->inst[o->stub_inst[x->u - o->stub_first]];
        const sj_part *fp = &o->j->part[in->first];
        f.pid_u = (int64_t)o->j->r[fp->rank].rank * 2 + 1;
        f.tid_u = o->j->r[fp->rank].coll[fp->coll].stream;
        same = fp->rank == o->pos && hta_cp_node_ev(g, o->arrival[fp->coll]) == hta_cp_node_ev(g, x->v);
        f.hop = o->j->r[fp->rank].rank != rank;
    } else {
        const hta_cp_thread *u = &g->thr[g->ev[hta_cp_node_ev(g, x->u)].thr];
        o->crit[hta_cp_node_ev(g, x->u)] = 1;
        same = hta_cp_node_ev(g, x->u) == hta_cp_node_ev(g, x->v);
        f.pid_u = (int64_t)rank * 2 + (u->stream != -1);
        f.tid_u = u->stream != -1 ? u->stream : u->tid;
    }
    if (same) return;
    f.ts_u = o->t[x->u] + o->off;
    const hta_cp_thread *vt = &g->thr[ev->thr];
    f.pid_v = (int64_t)rank * 2 + (vt->stream != -1);
    f.tid_v = vt->stream != -1 ? vt->stream : vt->tid;
    f.ts_v = o->t[x->v] + o->off;
    f.type = x->type;
    if (push_flow(o->cur, &f)) o->oom = 1;
}

static hta_status ov_fn(struct hta_job *j, hta_ctx *ctx, size_t k, size_t pos, void *arg, hta_error *err) {
    ovl *o = arg;
    sj_rank_graph_t rg;
    uint32_t *stub_inst = NULL;
    signed char *cls = NULL;
    hta_cp_bb *bb = NULL;
    hta_status st;
    HTA_TRY(sj_rank_graph(j, ctx, k, pos, &rg, err));
    if ((st = sj_rank_times(j, &rg, pos, 0, err))) goto done;
    hta_sim *s = rg.s;
    const int64_t *w = rg.w, *t = rg.t;
    const uint32_t stub_first = rg.stub_first, *arrival = rg.arrival;
    const hta_cp_graph *g = s->g;
    const sj_rank *R = &j->r[pos];
    o->crit = calloc(g->nev ? g->nev : 1, 1);
    stub_inst = malloc((g->nnode - stub_first + 1) * sizeof *stub_inst);
    cls = malloc(g->nedge ? g->nedge : 1);
    bb = hta_cpath_bb_new(g, j->data_load, j->ndata_load);
    if (!o->crit || !stub_inst || !cls || !bb) goto oom;
    memset(cls, -1, g->nedge ? g->nedge : 1);
    size_t ns = 0;
    for (size_t c = 0; c < R->ncoll; c++)
        if (j->inst[j->inst_of[pos][c]].matched) stub_inst[ns++] = j->inst_of[pos][c];
    uint32_t last = 0;
    for (uint32_t v = 1; v < stub_first; v++)
        if (t[v] > t[last]) last = v;
    o->pos = pos, o->s = s, o->t = t, o->arrival = arrival, o->off = sj_off(j, pos), o->stub_first = stub_first;
    o->stub_inst = stub_inst;
    sj_walker wk = {s, w, t, o->off, stub_first, stub_inst, bb, cls, ov_edge, o};
    for (size_t i = 0; i < o->whole->nsegs; i++) {
        seg *sg = &o->whole->segs[i];
        if (sg->inst >= 0) { /* the barrier's node: its first participant's kernel */
            const sj_part *fp = &j->part[j->inst[sg->inst].first];
            if (fp->rank == pos) o->crit[hta_cp_node_ev(g, arrival[fp->coll])] = 1;
        }
        if (sg->pos != pos) continue;
        uint32_t v = sg->at == SJ_AT_ARRIVAL ? arrival[sg->idx] : sg->at == SJ_AT_STEP_END ? R->steps[sg->idx].end : last;
        o->crit[hta_cp_node_ev(g, v)] = 1;
        o->cur = sg;
        sj_piece pc;
        sj_walk(&wk, v, INT64_MIN, &pc);
        if (o->oom) goto oom;
    }
    for (size_t x = 0; x < g->nev; x++)
        sim_ow_event(o->w, g, &g->ev[x], R->rank, t[hta_cp_ev_start(g, x)] + o->off, t[hta_cp_ev_end(g, x)] + o->off,
                     o->crit[x]);
    st = HTA_OK;
    goto done;
oom:
    st = hta_oom(err);
done:
    free(o->crit);
    o->crit = NULL;
    free(stub_inst);
    free(cls);
    hta_cpath_bb_free(bb);
    sj_rank_graph_free(&rg);
    return st;
}

/* --what-if-trace for the job: each rank's trace at its simulated schedule (scenario 1, the rules), under the
 * replayed barriers, written to the folder under the rank file's own name; one rank's graph at a time. */
static hta_status trace_fn(struct hta_job *j, hta_ctx *ctx, size_t k, size_t pos, void *arg, hta_error *err) {
    const char *dir = arg;
    sj_rank_graph_t rg;
    char *out = NULL;
    HTA_TRY(sj_rank_graph(j, ctx, k, pos, &rg, err));
    hta_status st = sj_rank_times(j, &rg, pos, j->nscn > 1 ? 1 : 0, err);
    const char *in = hta_ctx_rank(ctx, k)->path, *base = strrchr(in, '/');
    base = base ? base + 1 : in;
    if (st) {
    } else if (asprintf(&out, "%s/%s", dir, base) < 0) {
        out = NULL, st = hta_oom(err);
    } else {
        st = hta_sim_trace(ctx, rg.s, rg.t, out, err);
    }
    free(out);
    sj_rank_graph_free(&rg);
    return st;
}

/* The overlay file: process names, every rank's events (one rank at a time, in order), the path's arrows. */
static hta_status overlay(struct hta_job *j, source *src, trail *whole, int64_t t0, const char *path,
                          hta_error *err) {
    sim_ow *w = NULL;
    HTA_TRY(sim_ow_open(path, t0, &w, err));
    size_t *which = malloc((j->nr ? j->nr : 1) * sizeof *which), n = 0;
    hta_status st = HTA_OK;
    if (!which) {
        sim_ow_close(w, 0);
        return hta_oom(err);
    }
    for (size_t p = 0; p < j->nr; p++)
        if (j->r[p].present && j->r[p].nev) sim_ow_rank(w, j->r[p].rank), which[n++] = p;
    ovl o = {j, whole, w, 0, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL, 0};
    int th = src->threads;
    src->threads = 1; /* in rank order, straight into the file */
    st = visit(j, src, which, n, &wire_root, ov_fn, &o, 0, err);
    src->threads = th;
    /* the arrows in path order: first piece first, each piece's last to first reversed, the hop between */
    for (size_t k = whole->nsegs; !st && k-- > 0;) {
        const seg *sg = &whole->segs[k];
        for (size_t i = sg->nfl; i-- > 0;) sim_ow_flow(w, &sg->fl[i]);
        if (!k) break;
        const seg *later = &whole->segs[k - 1];
        const sj_part *q = &later->last, *fp = &j->part[j->inst[later->inst].first];
        if (q->rank == fp->rank) continue; /* the same kernel */
        int64_t b = j->bar[0][later->inst];
        sim_flow f = {(int64_t)j->r[q->rank].rank * 2 + 1, j->r[q->rank].coll[q->coll].stream, b,
                      (int64_t)j->r[fp->rank].rank * 2 + 1, j->r[fp->rank].coll[fp->coll].stream, b,
                      HTA_CP_DEPENDENCY, j->r[q->rank].rank != j->r[fp->rank].rank};
        sim_ow_flow(w, &f);
    }
    free(which);
    hta_status cst = sim_ow_close(w, !st);
    return st ? st : cst;
}

static hta_status path_tables(struct hta_job *j, source *src, hta_result *out, hta_error *err) {
    int wi = j->nscn > 1;
    size_t nq = 0;
    for (size_t p = 0; p < j->nr; p++) {
        if (!j->r[p].present) continue;
        size_t nm = 0;
        for (size_t c = 0; c < j->r[p].ncoll; c++) nm += j->inst[j->inst_of[p][c]].matched;
        nq += (size_t)(1 + wi) * (nm + j->r[p].nsteps + 1);
    }
    paths P = {malloc((nq ? nq : 1) * sizeof *P.q), 0, NULL};
    size_t nsteps = hta_job_nsteps(j);
    trail *tr = calloc(nsteps + 2, sizeof *tr);
    hta_table *tb = NULL;
    hta_status st = HTA_OK;
    if (!P.q || !tr) goto oom;
    for (size_t p = 0; p < j->nr; p++) {
        if (!j->r[p].present) continue;
        for (uint32_t q = 0; q <= (uint32_t)wi; q++) {
            for (size_t c = 0; c < j->r[p].ncoll; c++)
                if (j->inst[j->inst_of[p][c]].matched)
                    P.q[P.n++] = query(p, q, SJ_AT_ARRIVAL, c, INT64_MIN);
            for (size_t i = 0; i < j->r[p].nsteps; i++)
                P.q[P.n++] = query(p, q, SJ_AT_STEP_END, i, INT64_MIN);
            P.q[P.n++] = query(p, q, SJ_AT_LAST, 0, INT64_MIN);
        }
    }
    HTA_TRY_GOTO(st, run_queries(j, src, &P, err), done);
    /* the trails: every step (baseline), the job's whole path (baseline), the what-if's path */
    size_t t = 0;
    for (size_t p = 0; p < j->nr; p++)
        for (size_t i = 0; i < j->r[p].nsteps; i++, t++)
            if (follow(j, &P, 0, p, SJ_AT_STEP_END, (uint32_t)i, j->step_t[0][p][2 * i], &tr[t], 0)) goto lost;
    size_t lastp = SIZE_MAX;
    int64_t lt = INT64_MIN, t0 = INT64_MAX;
    for (size_t p = 0; p < j->nr; p++) {
        const sj_query *x = j->r[p].present ? piece(&P, 0, p, SJ_AT_LAST, 0) : NULL;
        if (!x) continue;
        if (x->last_t > lt) lt = x->last_t, lastp = p;
        if (x->min_t < t0) t0 = x->min_t;
    }
    trail *whole = &tr[nsteps], *wt = &tr[nsteps + 1];
    if (lastp != SIZE_MAX && follow(j, &P, 0, lastp, SJ_AT_LAST, 0, INT64_MIN, whole, 1)) goto lost;
    int64_t a0, z0, a1 = 0, z1 = 0;
    span(j, &P, 0, &a0, &z0);
    if (wi) {
        span(j, &P, 1, &a1, &z1);
        size_t bp = SIZE_MAX, bi = 0;
        for (size_t p = 0; p < j->nr; p++)
            for (size_t i = 0; i < j->r[p].nsteps; i++)
                if (bp == SIZE_MAX || j->step_t[1][p][2 * i + 1] > j->step_t[1][bp][2 * bi + 1]) bp = p, bi = i;
        if (bp != SIZE_MAX) {
            if (follow(j, &P, 1, bp, SJ_AT_STEP_END, (uint32_t)bi, a1, wt, 0)) goto lost;
        } else {
            size_t lp = SIZE_MAX;
            int64_t l1 = INT64_MIN;
            for (size_t p = 0; p < j->nr; p++) {
                const sj_query *x = j->r[p].present ? piece(&P, 1, p, SJ_AT_LAST, 0) : NULL;
                if (x && x->last_t > l1) l1 = x->last_t, lp = p;
            }
            if (lp != SIZE_MAX && follow(j, &P, 1, lp, SJ_AT_LAST, 0, a1, wt, 0)) goto lost;
        }
    }
    HTA_TRY_GOTO(st, finish(j, src, tr, nsteps + 2, err), done);
    if (wi) {
        size_t changed = 0, sc = 0, sr = 0;
        for (size_t p = 0; p < j->nr; p++)
            if (j->r[p].present) changed += j->r[p].skel[1].changed, sc += j->r[p].sync_calls, sr += j->r[p].sync_records;
        HTA_TRY_GOTO(st, hta_cpath_whatif_table(z0 - a0, z1 - a1, changed, wt->acc.edges + 1, out, err), done);
        if (!(tb = hta_table_from_def(&HTA_SIM_WHATIF_STEPS_TABLE))) goto oom;
        for (size_t p = 0; p < j->nr; p++)
            for (size_t i = 0; i < j->r[p].nsteps; i++) {
                int64_t b = j->step_t[0][p][2 * i + 1] - j->step_t[0][p][2 * i],
                        m = j->step_t[1][p][2 * i + 1] - j->step_t[1][p][2 * i];
                long r = hta_table_add_row(tb);
                if (r < 0) goto oom;
                hta_table_set_int(tb, (size_t)r, HTA_SIM_WS_RANK, j->r[p].rank);
                hta_table_set_int(tb, (size_t)r, HTA_SIM_WS_STEP, j->r[p].steps[i].number);
                hta_table_set_float(tb, (size_t)r, HTA_SIM_WS_BASE, us(b));
                hta_table_set_float(tb, (size_t)r, HTA_SIM_WS_SIM, us(m));
                hta_table_set_float(tb, (size_t)r, HTA_SIM_WS_SAVING, us(b - m));
                hta_table_set_float(tb, (size_t)r, HTA_SIM_WS_PCT, b ? (double)(b - m) / (double)b * 100.0 : 0.0);
            }
        if (hta_result_add(out, tb)) goto oom;
        tb = NULL;
        HTA_TRY_GOTO(st, summary(&wt->acc, &HTA_CP_WHATIF_SUMMARY_TABLE, out, err), done);
        if (sc && !sr)
            hta_result_note(out, "the trace has no CUDA sync records (cuda_sync): which GPU work each of its %zu host "
                                 "syncs waited for is inferred (every stream's last work launched before it)", sc);
        if (nsteps < 2)
            hta_result_note(out, "%s: the saving is that of this window only; steps differ (data loading, syncs "
                                 "every N steps), so profile several", nsteps ? "a single iteration" : "no ProfilerStep");
    }
    HTA_TRY_GOTO(st, summary(&whole->acc, &HTA_CP_SUMMARY_TABLE, out, err), done);
    if (hops_table(j, whole, t0, out) || blame_table(j, out) || collectives_table(j, out)) goto oom;
    if (j->overlay) {
        HTA_TRY_GOTO(st, overlay(j, src, whole, t0, j->overlay, err), done);
        hta_result_note(out, "overlay written to %s", j->overlay);
    }
    if (!(tb = hta_table_from_def(&HTA_SIM_STEPS_TABLE))) goto oom;
    t = 0;
    for (size_t p = 0; p < j->nr; p++)
        for (size_t i = 0; i < j->r[p].nsteps; i++, t++) {
            int64_t from = j->step_t[0][p][2 * i], end = j->step_t[0][p][2 * i + 1];
            int64_t col[HTA_SIM_STEPS_WAIT + 1] = {0};
            for (int c = 0; c < SJ_NCLS; c++) col[sim_step_column(sj_class_names[c])] += tr[t].acc.col[c];
            long r = hta_table_add_row(tb);
            if (r < 0) goto oom;
            hta_table_set_int(tb, (size_t)r, HTA_SIM_STEPS_RANK, j->r[p].rank);
            hta_table_set_int(tb, (size_t)r, HTA_SIM_STEPS_STEP, j->r[p].steps[i].number);
            hta_table_set_float(tb, (size_t)r, HTA_SIM_STEPS_WALL, us(end - from));
            hta_table_set_float(tb, (size_t)r, HTA_SIM_STEPS_PATH, us(end - (tr[t].first > from ? tr[t].first : from)));
            for (int c = HTA_SIM_STEPS_CPU; c <= HTA_SIM_STEPS_WAIT; c++) hta_table_set_float(tb, (size_t)r, c, us(col[c]));
        }
    if (hta_result_add(out, tb)) goto oom;
    tb = NULL;
    goto done;
lost:
    st = hta_fail(err, HTA_EINVAL, "the job's path lost its way at a barrier; please report it");
    goto done;
oom:
    st = hta_oom(err);
done:
    hta_table_free(tb);
    for (size_t i = 0; tr && i < nsteps + 2; i++) {
        for (size_t k = 0; k < tr[i].nsegs; k++) free(tr[i].segs[k].fl);
        free(tr[i].segs);
        free(tr[i].hops);
    }
    free(tr);
    free(P.q);
    free(P.first);
    return st;
}

/* ---- the run ---- */

static hta_status run(source *src, size_t nr, const hta_job_opts *o, hta_job **out, hta_result *res,
                      hta_error *err) {
    *out = NULL;
    struct hta_job *j = calloc(1, sizeof *j);
    if (!j) return hta_oom(err);
    pthread_mutex_init(&j->lock, NULL);
    j->nr = nr;
    j->nscn = o->nscn + 1;
    j->data_load = o->data_load;
    j->ndata_load = o->ndata_load;
    j->overlay = o->overlay;
    j->gpu_steps = o->gpu_steps;
    j->r = calloc(nr ? nr : 1, sizeof *j->r);
    j->scn = calloc(j->nscn, sizeof *j->scn);
    j->sym = hta_symtab_new();
    size_t *all = malloc((nr ? nr : 1) * sizeof *all), *again = NULL, *failing = NULL;
    unsigned char *settled = NULL, *need = NULL;
    hta_status st = HTA_OK;
    if (!j->r || !j->scn || !j->sym || !all) goto oom;
    /* where the ranks stay loaded for every pass (a context of one rank, or the plan's kept contexts), their
     * graphs do too: each pass would otherwise build the same graph again */
    if ((src->resident || (src->ctx && nr == 1)) && !(j->graph = calloc(nr ? nr : 1, sizeof *j->graph))) goto oom;
    for (size_t q = 1; q < j->nscn; q++) {
        const hta_job_scenario *s = &o->scn[q - 1];
        if (s->nrules > 64) {
            st = hta_fail(err, HTA_EINVAL, "at most 64 what-if rules at once (%zu given)", s->nrules);
            goto done;
        }
        j->scn[q] = (sj_scn){s->rules, s->nrules, s->on, s->lenient, calloc(s->nrules + 1, sizeof(sj_med *))};
        if (!j->scn[q].med) goto oom;
        for (size_t r = 0; r < s->nrules; r++) j->want_tot |= s->rules[r].median;
    }
    for (size_t p = 0; p < nr; p++) all[p] = p;
    if (j->graph && !src->ctx) {
        /* the graphs kept: built from each file once, which then goes (the caller's kept contexts too) */
        HTA_TRY_GOTO(st, visit(j, src, all, nr, &wire_rank, keep_fn, NULL, 1, err), done);
        for (size_t p = 0; src->keep && p < nr; p++) hta_ctx_free(src->keep[p]), src->keep[p] = NULL;
    }
    /* a file passed over (JSON without traceEvents) is not visited again */
    size_t na0 = 0;
    for (size_t p = 0; p < nr; p++)
        if (!j->graph || src->ctx || j->graph[p].info) all[na0++] = p;
    HTA_TRY_GOTO(st, visit(j, src, all, na0, &wire_rank, skel_fn, NULL, 0, err), done);
    HTA_TRY_GOTO(st, check_rules(j, err), done);
    HTA_TRY_GOTO(st, sj_match(j, err), done);
    if (j->want_tot) {
        /* rank:R=median: the factors from every rank's totals, then rank R once more with them */
        HTA_TRY_GOTO(st, sj_median(j, err), done);
        sj_tot_reset(j); /* the totals serve nothing after the factors */
        if (!(again = malloc((nr ? nr : 1) * sizeof *again))) goto oom;
        size_t na = 0;
        for (size_t p = 0; p < nr; p++) {
            int pending = 0;
            for (size_t q = 0; j->r[p].present && q < j->nscn; q++) pending |= !j->r[p].skel[q].done;
            if (pending) again[na++] = p;
        }
        if (na) HTA_TRY_GOTO(st, visit(j, src, again, na, &wire_rank, skel_fn, j, 0, err), done);
    }
    HTA_TRY_GOTO(st, alloc_times(j, err), done);
    if (!again && !(again = malloc((nr ? nr : 1) * sizeof *again))) goto oom;
    /* the skeletons' pruning checked against the replayed times: ranks where a dropped label could have
     * decided are visited again with those times as reference, until none is (sj_check); one visit of a rank
     * serves every scenario that needs it (a report's savings replay several) */
    if (!(settled = calloc(j->nscn, 1)) || !(failing = malloc((nr ? nr : 1) * sizeof *failing)) ||
        !(need = calloc(nr ? nr : 1, 1)))
        goto oom;
    for (;;) {
        size_t na = 0;
        for (size_t q = 0; q < j->nscn; q++) {
            if (settled[q]) continue;
            size_t nf = 0;
            HTA_TRY_GOTO(st, sj_replay(j, q, err), done);
            HTA_TRY_GOTO(st, sj_check(j, q, failing, &nf, err), done);
            settled[q] = !nf;
            for (size_t i = 0; i < nf; i++)
                if (!need[failing[i]]) need[failing[i]] = 1;
        }
        for (size_t p = 0; p < nr; p++)
            if (need[p]) again[na++] = p, need[p] = 0;
        if (!na) break;
        j->revisits += na;
        HTA_TRY_GOTO(st, visit(j, src, again, na, &wire_rank, skel_fn, j, 0, err), done);
    }
    /* the skeleton passes are over: the kept graphs' folds serve no other */
    for (size_t p = 0; j->graph && p < nr; p++) sj_chains_drop(&j->graph[p].ch);
    if (j->inexact_ns && res)
        hta_result_note(res, "the job's replay kept the most likely of each time's inputs: a time may be off by up to "
                             "%.3f us (sj_check)", (double)j->inexact_ns / 1000.0);
    if (o->trace_dir) {
        size_t *sel = malloc((nr ? nr : 1) * sizeof *sel), ns = 0;
        if (!sel) goto oom;
        for (size_t p = 0; p < nr; p++)
            if (j->r[p].present) sel[ns++] = p;
        st = visit(j, src, sel, ns, &wire_none, trace_fn, (void *)o->trace_dir, 1, err);
        free(sel);
        if (st) goto done;
        if (res) hta_result_note(res, "simulated traces of %zu ranks written to %s", ns, o->trace_dir);
    }
    if (o->paths) {
        /* the skeleton passes' labels leave holes in the heap that the paths' arrays (per node and per edge,
         * in other sizes) do not fill: given back first (two 250 MB ranks: 180 -> 143 MB before the paths) */
        hta_heap_trim(0);
        HTA_TRY_GOTO(st, path_tables(j, src, res, err), done);
        if (j->np2p)
            hta_result_note(res, "%zu collective instances joined across %zu ranks (%zu of them point-to-point "
                                 "send/recv pairs)", j->nmatched, nr, j->np2p);
        else
            hta_result_note(res, "%zu collective instances joined across %zu ranks", j->nmatched, nr);
    }
    drop_graphs(j);
    *out = j;
    j = NULL;
    goto done;
oom:
    st = hta_oom(err);
done:
    free(all);
    free(again);
    free(settled);
    free(failing);
    free(need);
    hta_job_free(j);
    return st;
}

hta_status hta_job_run_ctx(hta_ctx *ctx, const hta_job_opts *o, hta_job **out, hta_result *res, hta_error *err) {
    source src = {ctx, NULL, 0, NULL, NULL, 0, 0, SIZE_MAX, 0, NULL};
    return run(&src, hta_ctx_nranks(ctx), o, out, res, err);
}

/* The root's options (or none: o NULL) to every process (hta_job_dist.announced); *got (malloc'd) the root's
 * message as every process receives it. */
static hta_status announce(const hta_job_dist *d, const hta_job_opts *o, size_t nr, char **got, size_t *ngot,
                           hta_error *err) {
    hta_bytes b = {0};
    if (d->root) sj_opts_pack(&b, o, nr);
    if (b.oom) {
        free(b.p);
        return hta_oom(err);
    }
    char *all = NULL;
    size_t *lens = NULL;
    hta_status st = d->allgather(b.p ? b.p : "", b.n, &all, &lens, err);
    free(b.p);
    if (st) return st;
    /* the root's is the one message that is not empty */
    size_t at = 0, q = 0;
    while (q < (size_t)d->nproc && !lens[q]) q++;
    for (size_t i = 0; i < q; i++) at += lens[i];
    if (q == (size_t)d->nproc) st = hta_fail(err, HTA_EINVAL, "hta-mpi: no process sent the job's options");
    else if (!(*got = malloc(lens[q]))) st = hta_oom(err);
    else memcpy(*got, all + at, lens[q]), *ngot = lens[q];
    free(all);
    free(lens);
    if (!st && d->root) *d->announced = 1;
    return st;
}

hta_status hta_job_announce_none(const hta_job_dist *d, hta_error *err) {
    char *got = NULL;
    size_t n = 0;
    hta_status st = announce(d, NULL, 0, &got, &n, err);
    free(got);
    return st;
}

hta_status hta_job_follow(const hta_rank_plan *p, const hta_ctx_opts *co, const hta_job_dist *d, size_t *failed,
                          int *in_load, hta_error *err) {
    char *got = NULL;
    size_t n = 0;
    sj_opts f;
    *failed = SIZE_MAX;
    *in_load = 0;
    HTA_TRY(announce(d, NULL, p->n, &got, &n, err));
    hta_status st = sj_opts_unpack(got, n, p->n, &f, err);
    free(got);
    if (st || !f.run) return st;
    hta_job_dist mine = *d;
    mine.announced = NULL; /* the options are here now */
    f.o.dist = &mine;
    hta_job *j = NULL;
    hta_result res;
    hta_result_init(&res);
    st = hta_job_run_plan(p, co, &f.o, &j, f.o.paths ? &res : NULL, failed, in_load, err);
    hta_result_free(&res);
    hta_job_free(j);
    sj_opts_free(&f);
    return st;
}

hta_status hta_job_run_plan(const hta_rank_plan *p, const hta_ctx_opts *co, const hta_job_opts *o, hta_job **out,
                            hta_result *res, size_t *failed, int *in_load, hta_error *err) {
    if (o->dist && o->dist->announced && o->dist->root && !*o->dist->announced) {
        /* the processes that follow learn the options first */
        char *got = NULL;
        size_t n = 0;
        *out = NULL;
        *failed = SIZE_MAX;
        *in_load = 0;
        HTA_TRY(announce(o->dist, o, p->n, &got, &n, err));
        free(got);
    }
    source src = {NULL, NULL, 0, p, co, o->threads, 0, SIZE_MAX, 0, NULL};
    sj_exch x;
    hta_status st = HTA_OK;
    *out = NULL;
    if (o->dist) {
        src.x = &x;
        st = sj_exch_init(&x, o->dist, p, err);
    }
    /* No more files than threads: the contexts alive at once in any pass are all of them anyway, so each is
     * loaded once and kept for every pass (with its graph), where each pass would read, parse and build it
     * again.  Beyond that, every pass loads the files it visits, at most `threads` at once. */
    src.resident = !o->dist && p->n <= hta_threads(o->threads);
    src.keep = o->dist ? NULL : o->keep;
    if (!st) st = run(&src, p->n, o, out, res, err);
    if (o->dist) {
        /* every process leaves with the same status: a failure between exchanges is told here */
        st = sj_exch_end(&x, st, &src.failed, &src.in_load, err);
        if (!st && res && o->dist->nproc > 1) {
            char per[256];
            size_t at = 0;
            for (int q = 0; q < o->dist->nproc && at < sizeof per; q++)
                at += (size_t)snprintf(per + at, sizeof per - at, "%s%zu", q ? ", " : "", x.visits[q]);
            hta_result_note(res, "the job's %zu rank files shared among %d processes: rank visits per process %s",
                            p->n, o->dist->nproc, per);
        }
        if (st) hta_job_free(*out), *out = NULL;
        sj_exch_free(&x);
    }
    *failed = src.failed;
    *in_load = src.in_load;
    return st;
}
