/* The job's passes shared among processes (hta_job_dist, hta/sim.h; job/internal.h, "the passes shared
 * among processes"; docs/scaling.md "The critical path across ranks"): what one process's visits produced,
 * as bytes for the other processes, and back.
 *
 * One exchange is every process's message, gathered by every process:
 *
 *   version byte, status, failed index, in_load, message     (the process's failure, or none)
 *   warnings: count, then (position, text) pairs             (the loaders', first pass only)
 *   kind, count, then per visited rank: position, payload    (SJ_WIRE_RANK: the rank's state;
 *                                                             SJ_WIRE_QUERY: its queries' answers)
 *
 * Names the job interns (collectives' process groups and kernels, the totals' events) travel as text: the
 * first rank exchange interns every rank's names again, in the order of the exchange, so that every process
 * gives a name the same id (ids decide orders, e.g. the instances' matching).  Integers are copied as they
 * are: every process runs the same program on the same machine kind.  A message that does not read back is
 * an error naming what is corrupt, never a guess. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job/internal.h"
#include "hta/util.h"

#define WIRE_VERSION 2
#define NONE UINT64_MAX /* an absent array or name */

/* ---- writing ---- */

typedef hta_bytes wr;

static void put_u64(wr *b, uint64_t v) { hta_bytes_put_u64(b, v); }
static void put_i64(wr *b, int64_t v) { put_u64(b, (uint64_t)v); }
static void put_text(wr *b, const char *s, size_t n) {
    put_u64(b, n);
    hta_bytes_put(b, s, n);
}
static void put_name(wr *b, const struct hta_job *j, uint32_t id) {
    if (id == UINT32_MAX) put_u64(b, NONE);
    else put_text(b, hta_sym(j->sym, id), hta_sym_len(j->sym, id));
}
/* an array of n elements of size sz, or NONE where it is not allocated */
static void put_arr(wr *b, const void *a, size_t n, size_t sz) {
    if (!a) {
        put_u64(b, NONE);
        return;
    }
    put_u64(b, n);
    hta_bytes_put(b, a, n * sz);
}

/* A scenario's skeleton; one that shares scenario 0's labels (sj_skel.same) sends only its own fields, and
 * shares them again on the way in. */
static void put_skel(wr *b, const sj_skel *k, size_t ncoll, size_t nsteps, size_t nrules) {
    put_i64(b, k->same);
    put_arr(b, k->trw, ncoll, sizeof *k->trw);
    put_arr(b, k->trmask, ncoll, sizeof *k->trmask);
    put_arr(b, k->hits, nrules + 1, sizeof *k->hits);
    put_u64(b, k->changed);
    put_i64(b, k->done);
    if (k->same) return;
    put_u64(b, k->lab ? k->nlab : NONE);
    for (size_t i = 0; k->lab && i < k->nlab; i++) {
        sj_label l = sj_lab(k, i);
        put_i64(b, l.src), put_i64(b, l.d);
    }
    put_arr(b, k->a_off, ncoll + 1, sizeof *k->a_off);
    put_arr(b, k->s_off, 2 * nsteps + 2, sizeof *k->s_off);
    put_arr(b, k->ref, ncoll, sizeof *k->ref);
    put_i64(b, k->ref_given);
    put_u64(b, k->keep);
    put_i64(b, k->rounds);
    put_arr(b, k->pkey, k->npair, sizeof *k->pkey);
    put_arr(b, k->pdef, k->npair, sizeof *k->pdef);
}

static void put_rank(wr *b, const struct hta_job *j, const sj_rank *R) {
    put_i64(b, R->present);
    put_i64(b, R->rank);
    put_i64(b, R->origin);
    put_i64(b, R->first);
    put_u64(b, R->nev);
    put_u64(b, R->sync_calls);
    put_u64(b, R->sync_records);
    put_u64(b, R->ncoll);
    for (size_t c = 0; c < R->ncoll; c++) {
        const sj_coll *x = &R->coll[c];
        put_name(b, j, x->pg);
        put_i64(b, x->kind);
        put_i64(b, x->seq);
        put_name(b, j, x->name);
        put_i64(b, x->ts), put_i64(b, x->dur), put_i64(b, x->step);
        put_i64(b, x->pw), put_i64(b, x->tr), put_i64(b, x->stream);
    }
    put_u64(b, R->steps ? R->nsteps : NONE);
    for (size_t i = 0; R->steps && i < R->nsteps; i++) {
        const hta_sim_step *s = &R->steps[i];
        put_i64(b, s->rank), put_i64(b, s->number), put_u64(b, s->start), put_u64(b, s->end);
    }
    /* the totals by key (a key of the job's table the rank has no time in goes as none: 0 adds nothing) */
    size_t nt = 0;
    const unsigned char *at = R->tv;
    for (size_t k = 0; R->tv && k < R->ntv; k++) nt += sj_tot_next(&at) != 0;
    put_u64(b, R->tv ? nt : NONE);
    at = R->tv;
    for (size_t k = 0; R->tv && k < R->ntv; k++) {
        const sj_tot t = {j->tkey[k], sj_tot_next(&at)};
        if (!t.ns) continue;
        put_name(b, j, sj_tot_name(&t));
        put_i64(b, sj_tot_gpu(&t)), put_i64(b, sj_tot_step(&t)), put_i64(b, t.ns);
    }
    put_u64(b, R->skel ? j->nscn : NONE);
    for (size_t q = 0; R->skel && q < j->nscn; q++) put_skel(b, &R->skel[q], R->ncoll, R->nsteps, j->scn[q].nrules);
}

static void put_acc(wr *b, const sj_acc *a) {
    for (int c = 0; c < SJ_NCLS; c++) {
        unsigned __int128 v = (unsigned __int128)a->cls[c];
        put_u64(b, (uint64_t)v), put_u64(b, (uint64_t)(v >> 64));
    }
    for (int c = 0; c < SJ_NCLS; c++) put_i64(b, a->col[c]);
    put_u64(b, a->present);
    put_u64(b, a->edges);
}

static void put_queries(wr *b, const sj_query *q, size_t n) {
    put_u64(b, n);
    for (size_t i = 0; i < n; i++) {
        /* the question, checked on the way in: every process asked the same */
        put_u64(b, q[i].scn), put_i64(b, q[i].at), put_u64(b, q[i].idx), put_i64(b, q[i].from);
        put_acc(b, &q[i].out.acc);
        put_i64(b, q[i].out.inst), put_i64(b, q[i].out.t0), put_i64(b, q[i].out.t1), put_i64(b, q[i].out.cut);
        put_i64(b, q[i].last_t), put_u64(b, q[i].last_node), put_i64(b, q[i].min_t);
    }
}

/* ---- reading: every read bounds-checked; the first short or absurd field names the message corrupt ---- */

typedef struct rd {
    const char *p;
    size_t n, at;
    const char *bad; /* what did not read back */
} rd;

static uint64_t get_u64(rd *r, const char *what) {
    uint64_t v = 0;
    if (r->bad) return 0;
    if (r->n - r->at < sizeof v) return r->bad = what, 0;
    memcpy(&v, r->p + r->at, sizeof v);
    r->at += sizeof v;
    return v;
}
static int64_t get_i64(rd *r, const char *what) { return (int64_t)get_u64(r, what); }
static const char *get_bytes(rd *r, size_t n, const char *what) {
    if (r->bad) return NULL;
    if (r->n - r->at < n) return r->bad = what, NULL;
    const char *x = r->p + r->at;
    r->at += n;
    return x;
}
/* a count of elements of size sz that must fit in what is left of the message */
static uint64_t get_count(rd *r, size_t sz, const char *what) {
    uint64_t n = get_u64(r, what);
    if (!r->bad && n != NONE && (sz ? n > (r->n - r->at) / sz : n > r->n - r->at)) r->bad = what;
    return r->bad ? 0 : n;
}
/* a name, interned in sym (UINT32_MAX: none); 0 on out of memory */
static int get_name(rd *r, hta_symtab *sym, uint32_t *id, const char *what) {
    uint64_t n = get_count(r, 1, what);
    *id = UINT32_MAX;
    if (r->bad || n == NONE) return 1;
    const char *s = get_bytes(r, (size_t)n, what);
    if (!s) return 1;
    return (*id = hta_symtab_intern(sym, s, (size_t)n)) != UINT32_MAX;
}
/* an array that must have `want` elements (or be absent where `may_lack`) into *out (malloc'd, at least one
 * element: the engine allocates so); 0 on out of memory */
static int get_arr(rd *r, void **out, size_t want, size_t sz, int may_lack, const char *what) {
    *out = NULL;
    uint64_t n = get_count(r, sz, what);
    if (r->bad || (n == NONE && may_lack)) return 1;
    if (n != want) {
        r->bad = what;
        return 1;
    }
    const char *x = get_bytes(r, want * sz, what);
    if (!x) return 1;
    if (!(*out = malloc(want ? want * sz : sz))) return 0;
    memcpy(*out, x, want * sz);
    return 1;
}

static void rank_clear(sj_rank *R, size_t nscn) {
    for (size_t q = 0; R->skel && q < nscn; q++) sj_skel_free(&R->skel[q]);
    free(R->skel);
    free(R->coll);
    free(R->steps);
    sj_tot_free(R);
    memset(R, 0, sizeof *R);
}

/* Scenario k's skeleton; base: scenario 0's, read before it (NULL for scenario 0 itself). */
static int get_skel(rd *r, sj_skel *k, const sj_skel *base, size_t ncoll, size_t nsteps, size_t nrules) {
    void *v;
    int same = (int)get_i64(r, "a skeleton's sharing");
    if (!get_arr(r, &v, ncoll, sizeof *k->trw, 1, "a skeleton's transfers")) return 0;
    k->trw = v;
    if (!get_arr(r, &v, ncoll, sizeof *k->trmask, 1, "a skeleton's transfer rules")) return 0;
    k->trmask = v;
    if (!get_arr(r, &v, nrules + 1, sizeof *k->hits, 1, "a skeleton's rule hits")) return 0;
    k->hits = v;
    k->changed = (size_t)get_u64(r, "a skeleton's changes");
    k->done = (int)get_i64(r, "a skeleton's state");
    if (r->bad) return 1;
    if (same) {
        /* only a later scenario shares, and only with a scenario 0 of its own labels */
        if (same != 1 || !base || base->same || !base->lab || !base->a_off || !base->s_off || !base->ref)
            return r->bad = "a skeleton's sharing", 1;
        sj_skel_share(k, base);
        return 1;
    }
    uint64_t nl = get_count(r, 16, "a skeleton's labels");
    if (!r->bad && nl != NONE) {
        sj_label *lv = malloc((nl ? nl : 1) * sizeof *lv);
        if (!lv) return 0;
        for (size_t i = 0; i < nl; i++) {
            lv[i].src = (int32_t)get_i64(r, "a label's source");
            lv[i].d = get_i64(r, "a label's distance");
            if (!r->bad && (lv[i].src < -1 || (size_t)(lv[i].src + 1) > ncoll)) r->bad = "a label's source";
        }
        int set = sj_lab_set(k, lv, (size_t)nl);
        free(lv);
        if (set) return 0;
    }
    if (!get_arr(r, &v, ncoll + 1, sizeof *k->a_off, 1, "a skeleton's arrivals")) return 0;
    k->a_off = v;
    if (!get_arr(r, &v, 2 * nsteps + 2, sizeof *k->s_off, 1, "a skeleton's steps")) return 0;
    k->s_off = v;
    if (!get_arr(r, &v, ncoll, sizeof *k->ref, 1, "a skeleton's reference times")) return 0;
    k->ref = v;
    k->ref_given = (int)get_i64(r, "a skeleton's reference");
    k->keep = (size_t)get_u64(r, "a skeleton's labels kept");
    k->rounds = (int)get_i64(r, "a skeleton's rounds");
    /* the drops: their count is the first array's own */
    size_t at = r->at;
    uint64_t np = get_count(r, sizeof *k->pkey, "a skeleton's drops");
    if (!r->bad) r->at = at;
    if (!r->bad && np != NONE) {
        if (!get_arr(r, &v, (size_t)np, sizeof *k->pkey, 0, "a skeleton's drops")) return 0;
        k->pkey = v;
        if (!get_arr(r, &v, (size_t)np, sizeof *k->pdef, 0, "a skeleton's drop margins")) return 0;
        k->pdef = v;
        k->npair = (size_t)np;
    } else if (!r->bad) {
        get_arr(r, &v, 0, 8, 1, "a skeleton's drops");
        get_arr(r, &v, 0, 8, 1, "a skeleton's drop margins");
    }
    /* the offsets index lab: they must stay inside it, in order */
    const uint32_t *o[2] = {k->a_off, k->s_off};
    size_t no[2] = {ncoll + 1, 2 * nsteps + 2};
    for (int a = 0; a < 2 && !r->bad; a++)
        for (size_t i = 0; o[a] && i < no[a]; i++)
            if (o[a][i] > k->nlab || (i && o[a][i] < o[a][i - 1])) {
                r->bad = a ? "a skeleton's steps" : "a skeleton's arrivals";
                break;
            }
    return 1;
}

/* Rank R from the message; names interned in sym, totals' keys in j's table.  0 on out of memory (R is then
 * cleared by the caller). */
static int get_rank(rd *r, struct hta_job *j, hta_symtab *sym, sj_rank *R) {
    R->present = (int)get_i64(r, "a rank's presence");
    R->rank = (int32_t)get_i64(r, "a rank's number");
    R->origin = get_i64(r, "a rank's origin");
    R->first = get_i64(r, "a rank's start");
    R->nev = (size_t)get_u64(r, "a rank's events");
    R->sync_calls = (size_t)get_u64(r, "a rank's syncs");
    R->sync_records = (size_t)get_u64(r, "a rank's sync records");
    uint64_t nc = get_count(r, 9 * 8, "a rank's collectives");
    if (r->bad) return 1;
    if (nc == NONE || nc > UINT32_MAX) return r->bad = "a rank's collectives", 1;
    R->ncoll = (size_t)nc;
    if (!(R->coll = calloc(nc ? nc : 1, sizeof *R->coll))) return 0;
    for (size_t c = 0; c < R->ncoll && !r->bad; c++) {
        sj_coll *x = &R->coll[c];
        if (!get_name(r, sym, &x->pg, "a collective's process group")) return 0;
        x->kind = (int)get_i64(r, "a collective's key");
        x->seq = get_i64(r, "a collective's seq");
        if (!get_name(r, sym, &x->name, "a collective's kernel")) return 0;
        x->ts = get_i64(r, "a collective's time"), x->dur = get_i64(r, "a collective's duration");
        x->step = get_i64(r, "a collective's step");
        x->pw = get_i64(r, "a collective's wait"), x->tr = get_i64(r, "a collective's transfer");
        x->stream = get_i64(r, "a collective's stream");
        if (!r->bad && (x->kind < SJ_KEY_PG || x->kind > SJ_KEY_NONE)) r->bad = "a collective's key";
    }
    uint64_t ns = get_count(r, 4 * 8, "a rank's steps");
    if (!r->bad && ns != NONE) {
        R->nsteps = (size_t)ns;
        if (!(R->steps = malloc((ns ? ns : 1) * sizeof *R->steps))) return 0;
        for (size_t i = 0; i < R->nsteps; i++) {
            hta_sim_step *s = &R->steps[i];
            s->rank = (int32_t)get_i64(r, "a step's rank"), s->number = get_i64(r, "a step's number");
            s->start = (uint32_t)get_u64(r, "a step's start"), s->end = (uint32_t)get_u64(r, "a step's end");
            s->gstart = s->gend = UINT32_MAX; /* used before the steps are sent, never after */
        }
    }
    uint64_t nt = get_count(r, 4 * 8, "a rank's totals");
    if (!r->bad && nt != NONE) {
        sj_tot *t = malloc((nt ? nt : 1) * sizeof *t);
        if (!t) return 0;
        for (size_t i = 0; i < nt && !r->bad; i++) {
            uint32_t nm;
            if (!get_name(r, sym, &nm, "a total's name")) return free(t), 0;
            int gpu = (int)get_i64(r, "a total's side");
            int64_t step = get_i64(r, "a total's step");
            t[i].key = sj_med_key(nm, gpu, step), t[i].ns = get_i64(r, "a total's time");
        }
        int set = r->bad ? 0 : sj_tot_set(j, R, t, (size_t)nt);
        free(t);
        if (set < 0) return 0;
        if (set) r->bad = "a rank's totals (a key twice)";
    }
    uint64_t nq = get_u64(r, "a rank's skeletons");
    if (r->bad || nq == NONE) return 1;
    if (nq != j->nscn) return r->bad = "a rank's skeletons", 1;
    if (!(R->skel = calloc(j->nscn, sizeof *R->skel))) return 0;
    for (size_t q = 0; q < j->nscn && !r->bad; q++)
        if (!get_skel(r, &R->skel[q], q ? &R->skel[0] : NULL, R->ncoll, R->nsteps, j->scn[q].nrules)) return 0;
    return 1;
}

static void get_acc(rd *r, sj_acc *a) {
    for (int c = 0; c < SJ_NCLS; c++) {
        uint64_t lo = get_u64(r, "a path piece"), hi = get_u64(r, "a path piece");
        a->cls[c] = (__int128)((unsigned __int128)hi << 64 | lo);
    }
    for (int c = 0; c < SJ_NCLS; c++) a->col[c] = get_i64(r, "a path piece");
    a->present = (uint32_t)get_u64(r, "a path piece");
    a->edges = (size_t)get_u64(r, "a path piece");
}

static void get_queries(rd *r, sj_query *q, size_t n) {
    uint64_t m = get_u64(r, "a rank's path queries");
    if (!r->bad && m != n) r->bad = "a rank's path queries";
    for (size_t i = 0; i < n && !r->bad; i++) {
        uint64_t scn = get_u64(r, "a path query"), idx;
        int64_t at = get_i64(r, "a path query");
        idx = get_u64(r, "a path query");
        int64_t from = get_i64(r, "a path query");
        if (!r->bad && (scn != q[i].scn || at != q[i].at || idx != q[i].idx || from != q[i].from)) {
            r->bad = "a path query (not the one asked)";
            break;
        }
        sj_query x = q[i];
        get_acc(r, &x.out.acc);
        x.out.inst = get_i64(r, "a path piece's barrier");
        x.out.t0 = get_i64(r, "a path piece's times"), x.out.t1 = get_i64(r, "a path piece's times");
        x.out.cut = (int)get_i64(r, "a path piece's cut");
        x.last_t = get_i64(r, "a rank's last time");
        x.last_node = (uint32_t)get_u64(r, "a rank's last node");
        x.min_t = get_i64(r, "a rank's first time");
        if (!r->bad) q[i] = x;
    }
}

/* ---- the exchange ---- */

hta_status sj_exch_init(sj_exch *x, const hta_job_dist *d, const hta_rank_plan *p, hta_error *err) {
    memset(x, 0, sizeof *x);
    x->d = d;
    x->nr = p->n;
    x->own = calloc(p->n ? p->n : 1, 1);
    x->visits = calloc((size_t)(d->nproc > 0 ? d->nproc : 1), sizeof *x->visits);
    x->warn = calloc(p->n ? p->n : 1, sizeof *x->warn);
    x->nwarn = calloc(p->n ? p->n : 1, sizeof *x->nwarn);
    if (!x->own || !x->visits || !x->warn || !x->nwarn) return hta_oom(err);
    size_t *which = NULL, n = 0;
    HTA_TRY(d->share(p, &which, &n, err));
    for (size_t i = 0; i < n; i++)
        if (which[i] < p->n) x->own[which[i]] = 1;
    free(which);
    return HTA_OK;
}

static void drop_warnings(sj_exch *x) {
    for (size_t p = 0; x->warn && p < x->nr; p++) {
        for (size_t w = 0; w < x->nwarn[p]; w++) free(x->warn[p][w]);
        free(x->warn[p]);
        x->warn[p] = NULL;
        x->nwarn[p] = 0;
    }
}

void sj_exch_free(sj_exch *x) {
    drop_warnings(x);
    free(x->warn);
    free(x->nwarn);
    free(x->own);
    free(x->visits);
    memset(x, 0, sizeof *x);
}

hta_status sj_exch_mine(const sj_exch *x, const size_t *which, size_t n, size_t **mine, size_t *nm, hta_error *err) {
    *nm = 0;
    if (!(*mine = malloc((n ? n : 1) * sizeof **mine))) return hta_oom(err);
    for (size_t i = 0; i < n; i++)
        if (which[i] < x->nr && x->own[which[i]]) (*mine)[(*nm)++] = which[i];
    return HTA_OK;
}

void sj_exch_warn(sj_exch *x, size_t pos, const char *msg) {
    if (pos >= x->nr) return;
    char **w = realloc(x->warn[pos], (x->nwarn[pos] + 1) * sizeof *w);
    if (!w) return;
    x->warn[pos] = w;
    if ((w[x->nwarn[pos]] = strdup(msg))) x->nwarn[pos]++;
}

/* One process's message: its failure, its kept warnings, then its ranks' results. */
static void pack(wr *b, const struct hta_job *j, const sj_exch *x, const sj_wire *w, const size_t *mine, size_t n,
                 hta_status st, size_t failed, int in_load, const hta_error *err) {
    unsigned char v = WIRE_VERSION;
    hta_bytes_put(b, &v, 1);
    put_u64(b, (uint64_t)st);
    put_u64(b, st ? (uint64_t)failed : NONE);
    put_u64(b, (uint64_t)(st ? in_load : 0));
    const char *msg = st ? err->msg : "";
    put_text(b, msg, strlen(msg));
    size_t nw = 0;
    for (size_t i = 0; i < n; i++) nw += x->nwarn[mine[i]];
    put_u64(b, nw);
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < x->nwarn[mine[i]]; k++) {
            put_u64(b, mine[i]);
            put_text(b, x->warn[mine[i]][k], strlen(x->warn[mine[i]][k]));
        }
    /* a failed process's ranks are not sent: the run stops here everywhere */
    int kind = !w ? SJ_WIRE_NONE : w->kind;
    if (st) n = 0;
    put_u64(b, (uint64_t)kind);
    put_u64(b, n);
    for (size_t i = 0; i < n; i++) {
        size_t p = mine[i];
        put_u64(b, p);
        if (kind == SJ_WIRE_RANK) put_rank(b, j, &j->r[p]);
        else if (kind == SJ_WIRE_QUERY) put_queries(b, w->q + w->first[p], w->first[p + 1] - w->first[p]);
    }
}

/* The failure of the message whose header r reads; 0 where the process had none. */
typedef struct head {
    hta_status st;
    uint64_t failed, in_load;
    const char *msg;
    size_t nmsg;
} head;

static void read_head(rd *r, head *h) {
    const char *v = get_bytes(r, 1, "its version");
    if (v && *v != WIRE_VERSION) r->bad = "its version (another hta-mpi?)";
    h->st = (hta_status)get_u64(r, "its status");
    h->failed = get_u64(r, "its failure");
    h->in_load = get_u64(r, "its failure");
    uint64_t n = get_count(r, 1, "its failure's message");
    h->msg = get_bytes(r, (size_t)n, "its failure's message");
    h->nmsg = (size_t)n;
}

/* The run's failure among the messages (the first in rank order, then in process order); 0: none. */
static hta_status agree(sj_exch *x, const char *all, const size_t *lens, size_t *failed, int *in_load, hta_error *err,
                        int *corrupt) {
    hta_status st = HTA_OK;
    uint64_t best = 0;
    size_t at = 0;
    *corrupt = 0;
    for (int q = 0; q < x->d->nproc; at += lens[q], q++) {
        rd r = {all + at, lens[q], 0, NULL};
        head h;
        read_head(&r, &h);
        if (r.bad) {
            /* every process reads the same bytes: all fail alike */
            if (!*corrupt) {
                st = hta_fail(err, HTA_EFORMAT, "hta-mpi: process %d sent a damaged message (%s)", q, r.bad);
                *failed = SIZE_MAX, *in_load = 0;
            }
            *corrupt = 1;
            break;
        }
        if (!h.st || (st && h.failed >= best)) continue;
        st = h.st;
        best = h.failed;
        *failed = h.failed == NONE ? SIZE_MAX : (size_t)h.failed;
        *in_load = h.in_load != 0;
        snprintf(err->msg, sizeof err->msg, "%.*s", (int)h.nmsg, h.msg);
        err->code = h.st;
    }
    if (st) x->agreed = 1;
    return st;
}

hta_status sj_exchange(struct hta_job *j, sj_exch *x, const sj_wire *w, const size_t *mine, size_t n,
                       hta_status st, size_t *failed, int *in_load, void (*warn)(void *, const char *),
                       void *warn_ctx, hta_error *err) {
    wr b = {0};
    pack(&b, j, x, w, mine, n, st, *failed, *in_load, err);
    if (b.oom) {
        /* the failure alone still goes: the others must not wait for a message that never comes */
        free(b.p);
        memset(&b, 0, sizeof b);
        hta_error e = {0};
        hta_oom(&e);
        pack(&b, j, x, NULL, mine, 0, HTA_ENOMEM, SIZE_MAX, 0, &e);
    }
    drop_warnings(x);
    char *all = NULL;
    size_t *lens = NULL;
    hta_status gs = x->d->allgather(b.p, b.n, &all, &lens, err);
    free(b.p);
    if (gs) {
        x->agreed = 1; /* the transport failed: nothing more can be exchanged */
        free(all), free(lens);
        return gs;
    }
    int corrupt;
    hta_status rs = agree(x, all, lens, failed, in_load, err, &corrupt);
    hta_symtab *sym = j ? j->sym : NULL, *fresh = NULL;
    int rename = !rs && w && w->kind == SJ_WIRE_RANK && !x->renamed;
    if (rename && !(fresh = hta_symtab_new())) rs = hta_oom(err);
    /* the totals' keys hold names' ids: every rank's come again, keyed with the new ones */
    if (rename && !rs) sj_tot_reset(j);
    /* every process's warnings in rank order (a failed run's too, as one process gives them before its
     * error), then its results */
    size_t at = 0;
    for (int q = 0; q < x->d->nproc && !corrupt; at += lens[q], q++) {
        rd r = {all + at, lens[q], 0, NULL};
        head h;
        read_head(&r, &h);
        uint64_t nw = get_count(&r, 16, "its warnings");
        if (nw == NONE) r.bad = "its warnings";
        for (uint64_t k = 0; k < nw && !r.bad; k++) {
            uint64_t p = get_u64(&r, "a warning"), l = get_count(&r, 1, "a warning");
            const char *s = get_bytes(&r, (size_t)l, "a warning");
            if (s && p < x->nr) {
                char *t = strndup(s, (size_t)l);
                if (t) sj_exch_warn(x, (size_t)p, t);
                free(t);
            }
        }
        if (rs) continue;
        uint64_t kind = get_u64(&r, "its kind"), cnt = get_count(&r, 8, "its ranks");
        if (cnt == NONE) r.bad = "its ranks", cnt = 0;
        if (!r.bad && kind != (uint64_t)(w ? w->kind : SJ_WIRE_NONE)) r.bad = "its kind (another pass)";
        x->visits[q] += (size_t)cnt;
        for (uint64_t k = 0; k < cnt && !r.bad && !rs; k++) {
            uint64_t p = get_u64(&r, "a rank's position");
            if (!r.bad && p >= x->nr) r.bad = "a rank's position";
            if (r.bad) break;
            if (kind == SJ_WIRE_RANK) {
                sj_rank R = {0};
                int ok = get_rank(&r, j, rename ? fresh : sym, &R);
                if (!ok || r.bad) {
                    rank_clear(&R, j->nscn);
                    if (!ok) rs = hta_oom(err);
                    break;
                }
                rank_clear(&j->r[p], j->nscn);
                j->r[p] = R;
            } else if (kind == SJ_WIRE_QUERY) {
                get_queries(&r, w->q + w->first[p], w->first[p + 1] - w->first[p]);
            }
        }
        if (r.bad && !rs) rs = hta_fail(err, HTA_EFORMAT, "hta-mpi: process %d sent a damaged message (%s)", q, r.bad);
    }
    for (size_t p = 0; warn && p < x->nr; p++)
        for (size_t k = 0; k < x->nwarn[p]; k++) warn(warn_ctx, x->warn[p][k]);
    drop_warnings(x);
    free(all), free(lens);
    if (rename) {
        if (rs) {
            hta_symtab_free(fresh);
        } else {
            j->sym = fresh;
            hta_symtab_free(sym);
            x->renamed = 1;
        }
    }
    return rs;
}

hta_status sj_exch_end(sj_exch *x, hta_status st, size_t *failed, int *in_load, hta_error *err) {
    if (x->agreed) return st;
    hta_status xs = sj_exchange(NULL, x, NULL, NULL, 0, st, failed, in_load, NULL, NULL, err);
    return xs ? xs : st;
}

/* ---- the root's options (hta_job_follow): what the other processes of a report run with ----
 *
 *   'J', paths, gpu_steps, threads, data_load (count, texts), scenarios (count, then per scenario: lenient,
 *   the rules (count, then each rule's fields, its pattern as text), its rank mask (absent, or nr bytes))
 *   'N'                                                       (the root runs no job) */

void sj_opts_pack(hta_bytes *b, const hta_job_opts *o, size_t nr) {
    if (!o) {
        hta_bytes_put(b, "N", 1);
        return;
    }
    hta_bytes_put(b, "J", 1);
    put_i64(b, o->paths), put_i64(b, o->gpu_steps), put_i64(b, o->threads);
    put_u64(b, o->ndata_load);
    for (size_t i = 0; i < o->ndata_load; i++) put_text(b, o->data_load[i], strlen(o->data_load[i]));
    put_u64(b, o->nscn);
    for (size_t q = 0; q < o->nscn; q++) {
        const hta_job_scenario *s = &o->scn[q];
        put_i64(b, s->lenient);
        put_u64(b, s->nrules);
        for (size_t r = 0; r < s->nrules; r++) {
            const hta_cpath_rule *ru = &s->rules[r];
            uint64_t f;
            memcpy(&f, &ru->factor, sizeof f);
            put_i64(b, ru->what), put_i64(b, ru->num), put_i64(b, ru->scale), put_u64(b, f);
            put_i64(b, ru->value_ns), put_i64(b, ru->median);
            put_text(b, ru->pattern ? ru->pattern : "", ru->pattern ? strlen(ru->pattern) : 0);
        }
        put_arr(b, s->on, nr, 1);
    }
}

void sj_opts_free(sj_opts *f) {
    for (size_t i = 0; i < f->nrules; i++) free(f->rules[i].pattern);
    for (size_t q = 0; q < f->o.nscn; q++) free((void *)f->scn[q].on);
    for (size_t i = 0; i < f->o.ndata_load; i++) free(f->dl[i]);
    free(f->rules);
    free(f->scn);
    free(f->dl);
    memset(f, 0, sizeof *f);
}

static char *get_str(rd *r, const char *what) {
    uint64_t n = get_count(r, 1, what);
    const char *s = r->bad || n == NONE ? NULL : get_bytes(r, (size_t)n, what);
    if (!s) {
        if (!r->bad) r->bad = what;
        return NULL;
    }
    return strndup(s, (size_t)n);
}

hta_status sj_opts_unpack(const char *p, size_t n, size_t nr, sj_opts *f, hta_error *err) {
    memset(f, 0, sizeof *f);
    rd r = {p, n, 0, NULL};
    const char *k = get_bytes(&r, 1, "the root's options");
    if (k && *k == 'N') return HTA_OK;
    if (!k || *k != 'J') return hta_fail(err, HTA_EINVAL, "hta-mpi: the root's job options are corrupt");
    f->run = 1;
    f->o.paths = (int)get_i64(&r, "paths");
    f->o.gpu_steps = (int)get_i64(&r, "gpu_steps");
    f->o.threads = (int)get_i64(&r, "threads");
    size_t nd = (size_t)get_count(&r, 8, "data_load");
    if (!(f->dl = calloc(nd + 1, sizeof *f->dl))) goto oom;
    for (size_t i = 0; i < nd && !r.bad; i++) {
        if (!(f->dl[i] = get_str(&r, "a data_load text")) && !r.bad) goto oom;
        f->o.ndata_load = i + 1;
    }
    size_t ns = (size_t)get_count(&r, 16, "scenarios");
    if (!(f->scn = calloc(ns + 1, sizeof *f->scn))) goto oom;
    /* the rules of every scenario in one array, room for as many as the bytes left can hold (56 each) */
    size_t cap = (n - r.at) / 56 + 1, used = 0;
    if (!(f->rules = calloc(cap, sizeof *f->rules))) goto oom;
    for (size_t q = 0; q < ns && !r.bad; q++) {
        hta_job_scenario *s = &f->scn[q];
        f->o.nscn = q + 1;
        s->lenient = (int)get_i64(&r, "lenient");
        size_t nrules = (size_t)get_count(&r, 56, "rules");
        if (r.bad || nrules > cap - used) {
            r.bad = "rules";
            break;
        }
        s->rules = f->rules + used;
        for (size_t i = 0; i < nrules && !r.bad; i++) {
            hta_cpath_rule *ru = &f->rules[used];
            uint64_t fb;
            ru->what = (int)get_i64(&r, "a rule");
            ru->num = get_i64(&r, "a rule");
            ru->scale = (int)get_i64(&r, "a rule");
            fb = get_u64(&r, "a rule");
            memcpy(&ru->factor, &fb, sizeof fb);
            ru->value_ns = get_i64(&r, "a rule");
            ru->median = (int)get_i64(&r, "a rule");
            if (!(ru->pattern = get_str(&r, "a rule's pattern")) && !r.bad) goto oom;
            used++, f->nrules = used, s->nrules = i + 1;
        }
        void *on = NULL;
        if (!get_arr(&r, &on, nr, 1, 1, "a scenario's ranks")) goto oom;
        s->on = on;
    }
    if (!r.bad && r.at != n) r.bad = "the root's options (bytes left over)";
    if (r.bad) {
        sj_opts_free(f);
        return hta_fail(err, HTA_EINVAL, "hta-mpi: %s: the message is corrupt", r.bad);
    }
    f->o.scn = f->scn;
    f->o.data_load = (const char *const *)f->dl;
    return HTA_OK;
oom:
    sj_opts_free(f);
    return hta_oom(err);
}
