/* The job's replay (job/internal.h): collectives matched across ranks as the joined model of every
 * rank's graph (never built) matches them, point-to-point sends and recvs paired by their peer ranks, the
 * clocks' offsets, rank:R=median's
 * factors, and every scenario's times at the skeletons' nodes, barrier by barrier in an order of their
 * dependencies. */
#include <stdlib.h>
#include <string.h>

#include "hta/util.h"
#include "job/internal.h"

typedef struct jkey {
    const char *pg;   /* for the order only */
    int kind;
    int64_t seq;
    int32_t src, dst; /* SJ_KEY_P2P: the pair; -1 otherwise */
    uint32_t pos, coll, name, pgid;
} jkey;

/* Collectives by key space, group name and number; pairs (SJ_KEY_P2P, last) by group name, sender,
 * receiver and their order: a send and its recv end up side by side. */
static int cmp_key(const void *a, const void *b) {
    const jkey *x = a, *y = b;
    if (x->kind != y->kind) return x->kind < y->kind ? -1 : 1;
    if ((x->kind == SJ_KEY_PG || x->kind == SJ_KEY_P2P) && x->pgid != y->pgid) {
        int c = strcmp(x->pg, y->pg);
        if (c) return c;
        if (x->kind == SJ_KEY_P2P) return x->pgid < y->pgid ? -1 : 1; /* no group name vs "" */
    }
    return HTA_CMP4(x->src, y->src, x->dst, y->dst, x->seq, y->seq, x->pos, y->pos);
}

static int same(const jkey *x, const jkey *y) {
    return x->kind == y->kind && x->pgid == y->pgid && x->seq == y->seq && x->src == y->src && x->dst == y->dst;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

hta_status sj_match(struct hta_job *j, hta_error *err) {
    size_t n = 0;
    j->np2p = 0;
    for (size_t p = 0; p < j->nr; p++) n += j->r[p].ncoll;
    jkey *k = malloc((n ? n : 1) * sizeof *k);
    int64_t *diff = NULL;
    unsigned char *ok = calloc(n ? n : 1, 1), *placed = calloc(j->nr ? j->nr : 1, 1);
    j->delta = calloc(j->nr ? j->nr : 1, sizeof *j->delta);
    j->inst_of = calloc(j->nr ? j->nr : 1, sizeof *j->inst_of);
    j->inst = malloc((n ? n : 1) * sizeof *j->inst);
    j->part = malloc((n ? n : 1) * sizeof *j->part);
    if (!k || !ok || !placed || !j->delta || !j->inst_of || !j->inst || !j->part) goto oom;
    size_t m = 0;
    for (size_t p = 0; p < j->nr; p++) {
        const sj_rank *R = &j->r[p];
        if (!(j->inst_of[p] = malloc((R->ncoll ? R->ncoll : 1) * sizeof **j->inst_of))) goto oom;
        for (size_t c = 0; c < R->ncoll; c++) {
            const sj_coll *x = &R->coll[c];
            k[m++] = (jkey){x->pg != UINT32_MAX ? hta_sym(j->sym, x->pg) : "", x->kind, x->seq, x->src, x->dst,
                           (uint32_t)p, (uint32_t)c, x->name, x->pg};
        }
    }
    if (n > 1) qsort(k, n, sizeof *k, cmp_key);
    /* an instance: 2+ ranks, one kernel each, one kernel name; a pair: the sender's kernel and the
     * receiver's (by key, nothing else can share it: a rank keys its sends with itself as sender and its
     * recvs with itself as receiver), whatever their names (NCCL versions differ in what they call a
     * send's and a recv's kernel) */
    size_t ngroups = 0;
    for (size_t i = 0, e; i < n; i = e) {
        int valid = 1, p2p = k[i].kind == SJ_KEY_P2P;
        for (e = i + 1; e < n && same(&k[e], &k[i]); e++)
            if (k[e].pos == k[e - 1].pos || (!p2p && k[e].name != k[i].name)) valid = 0;
        if (p2p && valid && e - i == 2) {
            int32_t r0 = j->r[k[i].pos].rank, r1 = j->r[k[i + 1].pos].rank;
            valid = (r0 == k[i].src && r1 == k[i].dst) || (r0 == k[i].dst && r1 == k[i].src);
        }
        if (valid && e - i >= 2 && (!p2p || e - i == 2)) {
            memset(ok + i, 1, e - i);
            ngroups++;
            j->np2p += p2p;
        }
    }
    /* clock offsets: each rank's collective ends against the first rank's, the median over shared instances */
    if (!(diff = malloc((ngroups ? ngroups : 1) * sizeof *diff))) goto oom;
    placed[0] = 1;
    for (size_t q = 1; q < j->nr; q++) {
        size_t nd = 0;
        for (size_t i = 0, e; i < n; i = e) {
            int64_t e0 = INT64_MIN, eq = INT64_MIN;
            for (e = i; e < n && same(&k[e], &k[i]); e++) {
                if (!ok[e]) continue;
                const sj_coll *x = &j->r[k[e].pos].coll[k[e].coll];
                if (k[e].pos == 0) e0 = x->ts + x->dur;
                if (k[e].pos == q) eq = x->ts + x->dur;
            }
            if (e0 != INT64_MIN && eq != INT64_MIN) diff[nd++] = eq - e0;
        }
        if (nd) {
            if (nd > 1) qsort(diff, nd, sizeof *diff, cmp_i64);
            j->delta[q] = diff[nd / 2];
            placed[q] = 1;
        }
    }
    /* A rank that shares no instance with the first (a later pipeline stage, which pairs only with its
     * neighbours) is placed through one that is placed: the median over their shared instances of its end
     * against that rank's end on the job's clock; stage by stage, until no rank is placed any more.  Ranks
     * placed directly keep their offset as before. */
    for (int again = 1; again;) {
        again = 0;
        for (size_t q = 1; q < j->nr; q++) {
            if (placed[q]) continue;
            size_t nd = 0;
            for (size_t i = 0, e; i < n; i = e) {
                int64_t ep = INT64_MIN, eq = INT64_MIN;
                for (e = i; e < n && same(&k[e], &k[i]); e++) {
                    if (!ok[e]) continue;
                    const sj_coll *x = &j->r[k[e].pos].coll[k[e].coll];
                    if (k[e].pos == q) eq = x->ts + x->dur;
                    else if (placed[k[e].pos] && ep == INT64_MIN) ep = x->ts + x->dur - j->delta[k[e].pos];
                }
                if (ep != INT64_MIN && eq != INT64_MIN) diff[nd++] = eq - ep;
            }
            if (nd) {
                if (nd > 1) qsort(diff, nd, sizeof *diff, cmp_i64);
                j->delta[q] = diff[nd / 2];
                placed[q] = again = 1;
            }
        }
    }
    /* instances: the matched ones in key order, then every other collective alone */
    size_t np = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0, e; i < n; i = e) {
            for (e = i + 1; e < n && same(&k[e], &k[i]); e++) {}
            if (ok[i] != (pass == 0)) continue;
            for (size_t a = i; a < e; a += pass ? 1 : e - i) {
                size_t z = pass ? a + 1 : e;
                sj_inst *in = &j->inst[j->ninst];
                const sj_coll *x0 = &j->r[k[a].pos].coll[k[a].coll];
                *in = (sj_inst){x0->pg, x0->kind, x0->seq, x0->step, (uint32_t)np, (uint32_t)(z - a), !pass,
                                INT64_MAX, INT64_MIN};
                for (size_t q = a; q < z; q++) {
                    const sj_coll *x = &j->r[k[q].pos].coll[k[q].coll];
                    j->part[np++] = (sj_part){k[q].pos, k[q].coll};
                    j->inst_of[k[q].pos][k[q].coll] = (uint32_t)j->ninst;
                    if (x->dur < in->tau) in->tau = x->dur;
                    if (x->ts - j->delta[k[q].pos] > in->arrive) in->arrive = x->ts - j->delta[k[q].pos];
                }
                j->ninst++;
            }
        }
    j->nmatched = ngroups;
    free(k);
    free(ok);
    free(placed);
    free(diff);
    return HTA_OK;
oom:
    free(k);
    free(ok);
    free(placed);
    free(diff);
    return hta_oom(err);
}

static double med_factor(const sj_med *m, uint64_t key) {
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t md = (lo + hi) / 2;
        if (m->key[md] < key) lo = md + 1;
        else hi = md;
    }
    return lo < m->n && m->key[lo] == key ? m->f[lo] : 1.0;
}

/* A matched transfer's weight under scenario scn on rank pos (cp_rule_scale's limits). */
static hta_status sj_transfer(const struct hta_job *j, size_t scn, size_t pos, uint32_t c, int64_t tau, int64_t *out,
                              hta_error *err) {
    const sj_scn *sc = &j->scn[scn];
    uint64_t mask = sj_trmask(&j->r[pos].skel[scn], c);
    /* the job's transfer under the rules that selected this rank's kernel, applied as on any edge */
    *out = tau;
    for (size_t r = 0; mask && r < sc->nrules; r++) {
        if (!(mask >> r & 1)) continue;
        const hta_cpath_rule *ru = &sc->rules[r];
        const sj_coll *cc = &j->r[pos].coll[c];
        double f = ru->median ? (sc->med && sc->med[r] ? med_factor(sc->med[r], sj_med_key(cc->name, 1, cc->step)) : 1.0)
                              : ru->factor;
        HTA_TRY(cp_rule_scale(ru, f, out, err));
    }
    return HTA_OK;
}

/* The value of label l of rank pos: a time on the job's clock; 0 when it is beyond the times hta holds. */
static inline int value(const struct hta_job *j, size_t scn, size_t pos, sj_label l, int64_t *out) {
    if (l.src < 0) return sj_add(l.d, -j->delta[pos], out);
    return sj_add(j->end[scn][pos][l.src], l.d, out);
}

/* The latest of labels [a, z) of sk's (INT64_MIN: none); *bad set when one is beyond the times hta holds. */
static int64_t at(const struct hta_job *j, size_t scn, size_t pos, const sj_skel *sk, uint32_t a, uint32_t z,
                  int *bad) {
    int64_t best = INT64_MIN;
    for (uint32_t i = a; i < z; i++) {
        int64_t v;
        if (!value(j, scn, pos, sj_lab(sk, i), &v)) {
            *bad = 1;
            continue;
        }
        if (v > best) best = v;
    }
    return best;
}

hta_status sj_replay(struct hta_job *j, size_t scn, hta_error *err) {
    size_t ni = j->ninst;
    uint32_t *indeg = calloc(ni ? ni : 1, sizeof *indeg), *soff = calloc(ni + 1, sizeof *soff), *succ = NULL,
             *fill = NULL, *queue = malloc((ni ? ni : 1) * sizeof *queue);
    hta_status st = HTA_OK;
    int bad = 0; /* a time beyond the times hta holds */
    if (!indeg || !soff || !queue) goto oom;
    /* dependencies: a label of a participant's arrival names a collective whose end it waits for */
    size_t nd = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (size_t e = 0; e < ni; e++) {
            const sj_inst *in = &j->inst[e];
            for (uint32_t q = in->first; q < in->first + in->n; q++) {
                const sj_part *pt = &j->part[q];
                const sj_skel *sk = &j->r[pt->rank].skel[scn];
                for (uint32_t l = sk->a_off[pt->coll]; l < sk->a_off[pt->coll + 1]; l++) {
                    int32_t src = sj_lab(sk, l).src;
                    if (src < 0) continue;
                    uint32_t dep = j->inst_of[pt->rank][src];
                    if (!pass) {
                        soff[dep + 1]++;
                        indeg[e]++;
                        nd++;
                    } else {
                        succ[fill[dep]++] = (uint32_t)e;
                    }
                }
            }
        }
        if (!pass) {
            for (size_t e = 0; e < ni; e++) soff[e + 1] += soff[e];
            succ = malloc((nd ? nd : 1) * sizeof *succ);
            fill = malloc((ni + 1) * sizeof *fill);
            if (!succ || !fill) goto oom;
            memcpy(fill, soff, (ni + 1) * sizeof *fill);
        }
    }
    size_t head = 0, tail = 0;
    for (size_t e = 0; e < ni; e++)
        if (!indeg[e]) queue[tail++] = (uint32_t)e;
    while (head < tail) {
        uint32_t e = queue[head++];
        const sj_inst *in = &j->inst[e];
        int64_t b = INT64_MIN;
        for (uint32_t q = in->first; q < in->first + in->n; q++) {
            const sj_part *pt = &j->part[q];
            const sj_skel *sk = &j->r[pt->rank].skel[scn];
            int64_t a = at(j, scn, pt->rank, sk, sk->a_off[pt->coll], sk->a_off[pt->coll + 1], &bad);
            j->arr[scn][pt->rank][pt->coll] = a;
            if (a > b) b = a;
        }
        j->bar[scn][e] = b;
        for (uint32_t q = in->first; q < in->first + in->n; q++) {
            const sj_part *pt = &j->part[q];
            const sj_coll *x = &j->r[pt->rank].coll[pt->coll];
            const sj_skel *sk = &j->r[pt->rank].skel[scn];
            int64_t v;
            if (in->matched) {
                /* the joined graph: the transfer starts at the barrier, or later when this rank's own rest
                 * of the wait (its kernel ran longer than the shortest) says so */
                int64_t mid = x->ts + x->dur - j->delta[pt->rank] - in->tau, d = mid - in->arrive;
                int64_t tr;
                HTA_TRY_GOTO(st, sj_transfer(j, scn, pt->rank, pt->coll, in->tau, &tr, err), done);
                if (!sj_add(b, d > 0 ? d : 0, &v) || !sj_add(v, tr, &v)) bad = 1;
            } else if (!sj_add(j->arr[scn][pt->rank][pt->coll], x->pw, &v) ||
                       !sj_add(v, sj_trw(&j->r[pt->rank], sk, pt->coll), &v)) {
                bad = 1;
            }
            if (bad) {
                st = hta_fail(err, HTA_EINVAL, SJ_BEYOND);
                goto done;
            }
            j->end[scn][pt->rank][pt->coll] = v;
        }
        for (uint32_t s = soff[e]; s < soff[e + 1]; s++)
            if (!--indeg[succ[s]]) queue[tail++] = succ[s];
    }
    if (tail != ni) {
        st = hta_fail(err, HTA_EINVAL, "the job's collectives wait for each other in a cycle (are they matched "
                                       "in different orders on different ranks?)");
        goto done;
    }
    for (size_t p = 0; p < j->nr; p++) {
        const sj_rank *R = &j->r[p];
        const sj_skel *sk = &R->skel[scn];
        if (!R->present) continue;
        for (size_t i = 0; i <= 2 * R->nsteps; i++)
            j->step_t[scn][p][i] = at(j, scn, p, sk, sk->s_off[i], sk->s_off[i + 1], &bad);
    }
    if (bad) st = hta_fail(err, HTA_EINVAL, SJ_BEYOND);
    goto done;
oom:
    st = hta_oom(err);
done:
    free(indeg);
    free(soff);
    free(succ);
    free(fill);
    free(queue);
    return st;
}

hta_status sj_check(struct hta_job *j, size_t scn, size_t *again, size_t *n, hta_error *err) {
    *n = 0;
    for (size_t p = 0; p < j->nr; p++) {
        sj_rank *R = &j->r[p];
        sj_skel *sk = R->present ? &R->skel[scn] : NULL;
        if (!sk || !sk->npair) continue;
        /* D(c): how much later the replay has collective c's end than the pruning's reference; a drop of x
         * against the best label y could decide when D(x) - D(y) exceeds its margin, by that much */
        __int128 worst = 0;
        for (size_t i = 0; i < sk->npair; i++) {
            int32_t x = (int32_t)(sk->pkey[i] >> 32) - 1, y = (int32_t)(uint32_t)sk->pkey[i] - 1;
            __int128 dx = x < 0 ? 0 : (__int128)j->end[scn][p][x] + j->delta[p] - sk->ref[x];
            __int128 dy = y < 0 ? 0 : (__int128)j->end[scn][p][y] + j->delta[p] - sk->ref[y];
            if (dx - dy - sk->pdef[i] > worst) worst = dx - dy - sk->pdef[i];
        }
        if (!worst) continue;
        if (sk->rounds >= SJ_ROUNDS) {
            int64_t w = worst > INT64_MAX ? INT64_MAX : (int64_t)worst;
            if (w > j->inexact_ns) j->inexact_ns = w;
            continue;
        }
        if (sj_skel_own(R, j->nscn, scn)) return hta_oom(err);
        for (size_t c = 0; c < R->ncoll; c++)
            if (!sj_add(j->end[scn][p][c], j->delta[p], &sk->ref[c]))
                sk->ref[c] = j->delta[p] > 0 ? HTA_TIME_MAX_NS : -HTA_TIME_MAX_NS; /* a reference only */
        sk->ref_given = 1;
        sk->rounds++;
        sk->keep = 2 * (sk->keep ? sk->keep : SJ_KEEP);
        sk->done = 0;
        again[(*n)++] = p;
    }
    return HTA_OK;
}

/* ---- rank:R=median ---- */

typedef struct mk {
    uint64_t key;
    size_t idx;
} mk;

static int cmp_mk(const void *a, const void *b) {
    uint64_t x = ((const mk *)a)->key, y = ((const mk *)b)->key;
    return x < y ? -1 : x > y;
}

static long find_key(const mk *v, size_t n, uint64_t key) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t md = (lo + hi) / 2;
        if (v[md].key < key) lo = md + 1;
        else hi = md;
    }
    return lo < n && v[lo].key == key ? (long)v[lo].idx : -1;
}

/* Rank p's total of each of rank R's keys, added to tot[key index * nranks + column]; of_tk: per key of the
 * job's table, R's key index (-1: not R's). */
static void add_rank(const struct hta_job *j, size_t p, const long *of_tk, const mk *keys, size_t nk, int64_t *tot,
                     size_t nr, size_t col) {
    const sj_rank *P = &j->r[p];
    const unsigned char *at = P->tv;
    for (size_t k = 0; k < P->ntv; k++) {
        int64_t v = sj_tot_next(&at);
        if (of_tk[k] >= 0) tot[(size_t)of_tk[k] * nr + col] += v;
    }
    for (size_t c = 0; c < P->ncoll; c++) {
        const sj_coll *x = &P->coll[c];
        long y = find_key(keys, nk, sj_med_key(x->name, 1, x->step));
        const sj_inst *in = &j->inst[j->inst_of[p][c]];
        if (y >= 0) tot[(size_t)y * nr + col] += in->matched ? in->tau : x->tr;
    }
}

hta_status sj_median(struct hta_job *j, hta_error *err) {
    for (size_t q = 1; q < j->nscn; q++) {
        sj_scn *sc = &j->scn[q];
        for (size_t r = 0; r < sc->nrules; r++) {
            if (!sc->rules[r].median) continue;
            size_t me = 0;
            while (me < j->nr && !(j->r[me].present && j->r[me].rank == sc->rules[r].num)) me++;
            if (me == j->nr) continue; /* checked by the caller */
            /* R's keys: its totals (a key of the job's table it has no total for adds a key whose factor no
             * edge of R asks for) and its collectives' transfers */
            const sj_rank *R = &j->r[me];
            size_t nk = 0;
            mk *keys = malloc((R->ntv + R->ncoll + 1) * sizeof *keys);
            long *of_tk = malloc((j->ntkey + 1) * sizeof *of_tk);
            size_t nr = 0;
            for (size_t p = 0; p < j->nr; p++) nr += j->r[p].present && j->r[p].nev;
            if (!keys || !of_tk) {
                free(keys);
                free(of_tk);
                return hta_oom(err);
            }
            for (size_t i = 0; i < R->ntv; i++) keys[nk] = (mk){j->tkey[i], nk}, nk++;
            for (size_t c = 0; c < R->ncoll; c++) keys[nk] = (mk){sj_med_key(R->coll[c].name, 1, R->coll[c].step), nk}, nk++;
            qsort(keys, nk, sizeof *keys, cmp_mk);
            size_t u = 0; /* unique keys, re-indexed */
            for (size_t i = 0; i < nk; i++)
                if (!u || keys[u - 1].key != keys[i].key) keys[u] = keys[i], keys[u].idx = u, u++;
            nk = u;
            for (size_t k = 0; k < j->ntkey; k++) of_tk[k] = find_key(keys, nk, j->tkey[k]);
            int64_t *tot = calloc(nk * (nr ? nr : 1) + 1, sizeof *tot);
            double *col = malloc((nr + 1) * sizeof *col);
            sj_med *m = calloc(1, sizeof *m);
            if (!tot || !col || !m || !(m->key = malloc((nk + 1) * sizeof *m->key)) ||
                !(m->f = malloc((nk + 1) * sizeof *m->f))) {
                free(keys);
                free(of_tk);
                free(tot);
                free(col);
                if (m) free(m->key), free(m->f), free(m);
                return hta_oom(err);
            }
            size_t mycol = 0, c0 = 0;
            for (size_t p = 0; p < j->nr; p++) {
                if (!j->r[p].present || !j->r[p].nev) continue;
                if (p == me) mycol = c0;
                add_rank(j, p, of_tk, keys, nk, tot, nr, c0++);
            }
            for (size_t i = 0; i < nk; i++) {
                size_t no = 0;
                for (size_t c = 0; c < nr; c++)
                    if (c != mycol) col[no++] = (double)tot[i * nr + c];
                m->key[i] = keys[i].key;
                m->f[i] = sim_median_factor(col, no, (double)tot[i * nr + mycol]);
            }
            m->n = nk;
            sc->med[r] = m;
            free(keys);
            free(of_tk);
            free(tot);
            free(col);
        }
    }
    return HTA_OK;
}
