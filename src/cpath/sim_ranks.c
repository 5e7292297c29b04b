/* The job's tables (--all-ranks): each collective's waits and last arriver, the delay each rank caused the
 * others per step (blame), and where the job's critical path changes rank (hops).  All from the joined
 * graph's schedule: a rank's wait at an instance is the barrier's time minus its arrival. */
#include <stdlib.h>
#include <string.h>

#include "cpath/sim_internal.h"
#include "hta/vocab.h"

HTA_TABLE_DEFINE(HTA_SIM_COLL);
HTA_TABLE_DEFINE(HTA_SIM_BLAME);
HTA_TABLE_DEFINE(HTA_SIM_HOPS);

static double us(int64_t ns) { return (double)ns / 1000.0; }

/* The last arriver of instance i: the participant whose start is latest (the first of equals). */
static uint32_t last_of(const hta_sim *s, const int64_t *t, const sim_inst *in) {
    uint32_t best = s->part[in->first];
    for (uint32_t q = in->first; q < in->first + in->n; q++) {
        uint32_t x = s->part[q];
        if (t[s->g->ev[x].start] > t[s->g->ev[best].start]) best = x;
    }
    return best;
}

static int set_name(hta_table *tb, size_t r, int col, const char *name) {
    char *sh = hta_shorten_name(name);
    int rc = hta_table_set_str(tb, r, col, sh ? sh : name);
    free(sh);
    return rc;
}

int sim_coll_row(hta_table *tb, const char *pg, const char *kernel, int64_t seq, int64_t step, uint32_t n,
                 int32_t last_rank, int64_t wait, int64_t max_wait, int64_t tau) {
    long r = hta_table_add_row(tb);
    if (r < 0 || hta_table_set_str(tb, (size_t)r, HTA_SIM_COLL_PG, pg) || set_name(tb, (size_t)r, HTA_SIM_COLL_KERNEL, kernel))
        return -1;
    hta_table_set_int(tb, (size_t)r, HTA_SIM_COLL_SEQ, seq);
    if (step >= 0) hta_table_set_int(tb, (size_t)r, HTA_SIM_COLL_STEP, step);
    hta_table_set_int(tb, (size_t)r, HTA_SIM_COLL_RANKS, n);
    hta_table_set_int(tb, (size_t)r, HTA_SIM_COLL_LAST, last_rank);
    hta_table_set_float(tb, (size_t)r, HTA_SIM_COLL_WAIT, us(wait));
    hta_table_set_float(tb, (size_t)r, HTA_SIM_COLL_MAXW, us(max_wait));
    hta_table_set_float(tb, (size_t)r, HTA_SIM_COLL_XFER, us(tau));
    return 0;
}

int sim_hop_row(hta_table *tb, int64_t t, int64_t step, int32_t from, int32_t to, const char *kernel, const char *pg,
                int64_t seq) {
    long r = hta_table_add_row(tb);
    if (r < 0 || set_name(tb, (size_t)r, HTA_SIM_HOPS_KERNEL, kernel) || hta_table_set_str(tb, (size_t)r, HTA_SIM_HOPS_PG, pg))
        return -1;
    hta_table_set_float(tb, (size_t)r, HTA_SIM_HOPS_TIME, us(t));
    if (step >= 0) hta_table_set_int(tb, (size_t)r, HTA_SIM_HOPS_STEP, step);
    hta_table_set_int(tb, (size_t)r, HTA_SIM_HOPS_FROM, from);
    hta_table_set_int(tb, (size_t)r, HTA_SIM_HOPS_TO, to);
    hta_table_set_int(tb, (size_t)r, HTA_SIM_HOPS_SEQ, seq);
    return 0;
}

static hta_status collectives(const hta_sim *s, const int64_t *t, hta_result *out) {
    const hta_cp_graph *g = s->g;
    hta_table *tb = hta_table_from_def(&HTA_SIM_COLL_TABLE);
    if (!tb) return HTA_ENOMEM;
    for (size_t i = 0; i < s->ngroups; i++) {
        const sim_inst *in = &s->inst[i];
        uint32_t last = last_of(s, t, in);
        int64_t sum = 0, mx = 0, tau = INT64_MAX;
        for (uint32_t q = in->first; q < in->first + in->n; q++) {
            uint32_t x = s->part[q];
            int64_t w = t[in->bar] - t[g->ev[x].start];
            if (w < 0) w = 0;
            sum += w;
            if (w > mx) mx = w;
            if (g->ev[x].dur < tau) tau = g->ev[x].dur;
        }
        if (sim_coll_row(tb, in->pg == UINT32_MAX ? "" : hta_sym(g->sym, in->pg), hta_sym(g->sym, g->ev[last].name),
                         in->seq, in->step, in->n, s->ev_rank[last], sum, mx, tau))
            goto oom;
    }
    return hta_result_add(out, tb) ? HTA_ENOMEM : HTA_OK;
oom:
    hta_table_free(tb);
    return HTA_ENOMEM;
}

typedef sim_bl bl;

static int cmp_bl(const void *a, const void *b) {
    const bl *x = a, *y = b;
    if (x->step != y->step) return x->step < y->step ? -1 : 1;
    if (x->caused != y->caused) return x->caused > y->caused ? -1 : 1;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* The entry of (step, rank), added at the end when new (linear: a step holds few ranks' entries). */
static bl *entry(bl **v, size_t *n, size_t *cap, size_t from, int64_t step, int32_t rank) {
    for (size_t i = from; i < *n; i++)
        if ((*v)[i].step == step && (*v)[i].rank == rank) return &(*v)[i];
    if (*n == *cap) {
        size_t nc = *cap ? 2 * *cap : 256;
        bl *y = realloc(*v, nc * sizeof *y);
        if (!y) return NULL;
        *v = y;
        *cap = nc;
    }
    (*v)[*n] = (bl){step, rank, 0, 0, 0};
    return &(*v)[(*n)++];
}

static hta_status blame(const hta_sim *s, const int64_t *t, hta_result *out) {
    const hta_cp_graph *g = s->g;
    bl *v = NULL;
    size_t n = 0, cap = 0, from = 0;
    int64_t cur = INT64_MIN;
    for (size_t i = 0; i < s->ngroups; i++) {
        const sim_inst *in = &s->inst[i];
        if (in->step != cur) { /* instances come grouped by group and seq: look back over the whole list */
            cur = in->step;
            from = 0;
        }
        uint32_t last = last_of(s, t, in);
        int64_t caused = 0;
        for (uint32_t q = in->first; q < in->first + in->n; q++) {
            uint32_t x = s->part[q];
            int64_t w = t[in->bar] - t[g->ev[x].start];
            if (w < 0) w = 0;
            bl *e = entry(&v, &n, &cap, from, in->step, s->ev_rank[x]);
            if (!e) goto oom;
            e->waited += w;
            caused += w;
        }
        bl *e = entry(&v, &n, &cap, from, in->step, s->ev_rank[last]);
        if (!e) goto oom;
        e->last++;
        e->caused += caused;
    }
    {
        hta_status st = sim_blame_table(v, n, out);
        free(v);
        return st;
    }
oom:
    free(v);
    return HTA_ENOMEM;
}

hta_status sim_blame_table(sim_bl *v, size_t n, hta_result *out) {
    if (n > 1) qsort(v, n, sizeof *v, cmp_bl);
    hta_table *tb = hta_table_from_def(&HTA_SIM_BLAME_TABLE);
    if (!tb) return HTA_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        long r = hta_table_add_row(tb);
        if (r < 0) {
            hta_table_free(tb);
            return HTA_ENOMEM;
        }
        if (v[i].step >= 0) hta_table_set_int(tb, (size_t)r, HTA_SIM_BLAME_STEP, v[i].step);
        hta_table_set_int(tb, (size_t)r, HTA_SIM_BLAME_RANK, v[i].rank);
        hta_table_set_int(tb, (size_t)r, HTA_SIM_BLAME_LAST, v[i].last);
        hta_table_set_float(tb, (size_t)r, HTA_SIM_BLAME_CAUSED, us(v[i].caused));
        hta_table_set_float(tb, (size_t)r, HTA_SIM_BLAME_WAITED, us(v[i].waited));
    }
    return hta_result_add(out, tb) ? HTA_ENOMEM : HTA_OK;
}

static hta_status hops(const hta_sim *s, const int64_t *t, const hta_cp_path *p, hta_result *out) {
    const hta_cp_graph *g = s->g;
    hta_table *tb = hta_table_from_def(&HTA_SIM_HOPS_TABLE);
    if (!tb) return HTA_ENOMEM;
    int64_t t0 = INT64_MAX; /* times from the job's first event */
    for (size_t v = 0; v < g->nnode; v++)
        if (t[v] < t0) t0 = t[v];
    /* barrier node -> instance */
    for (size_t i = 1; i + 1 < p->n; i++) {
        uint32_t b = p->node[i];
        if (b < g->nnode - s->ngroups) continue; /* barriers are the graph's last nodes */
        const sim_inst *in = &s->inst[b - (g->nnode - s->ngroups)];
        int32_t from = s->ev_rank[g->node[p->node[i - 1]].ev], to = s->ev_rank[g->node[p->node[i + 1]].ev];
        const hta_cp_edge *e = &g->edge[p->edge[i]];
        if (e->attr >= 0) to = s->ev_rank[e->attr];
        if (from == to) continue;
        if (sim_hop_row(tb, t[b] - t0, in->step, from, to, hta_sym(g->sym, g->ev[s->part[in->first]].name),
                        in->pg == UINT32_MAX ? "" : hta_sym(g->sym, in->pg), in->seq)) {
            hta_table_free(tb);
            return HTA_ENOMEM;
        }
    }
    return hta_result_add(out, tb) ? HTA_ENOMEM : HTA_OK;
}

hta_status hta_sim_rank_tables(const hta_sim *s, const int64_t *t, const hta_cp_path *p, hta_result *out,
                               hta_error *err) {
    if (!s->ev_rank) return hta_fail(err, HTA_EINVAL, "collectives, blame and hops need the job's graph (--all-ranks)");
    if (hops(s, t, p, out) || blame(s, t, out) || collectives(s, t, out)) return hta_oom(err);
    return HTA_OK;
}
