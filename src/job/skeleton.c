/* The job's first pass (job/internal.h): one rank's graph reduced to its skeleton.  For each scenario
 * the labels of the rank's collective arrivals and step boundaries: for each collective end (and the
 * rank's own sources) whose time can decide them, the longest distance.  What the replay needs of the rank
 * besides: its collectives (keys, times, own weights), its steps, and rank:R=median's totals. */
#include <stdlib.h>
#include <string.h>

#include "hta/util.h"
#include "job/internal.h"
#include "core/hash.h"
#include "core/vec.h"
#include "hta/vocab.h"

static uint32_t intern(struct hta_job *j, const char *s) {
    pthread_mutex_lock(&j->lock);
    uint32_t id = hta_symtab_intern(j->sym, s, strlen(s));
    pthread_mutex_unlock(&j->lock);
    return id;
}

typedef struct ord {
    uint32_t pg;
    int64_t ts;
    size_t i;
} ord;

HTA_QSORT_CMP(cmp_ord, ord, HTA_CMP3(x->pg, y->pg, x->ts, y->ts, x->i, y->i))

/* A p2p kernel in its pair's order: (group, sender, receiver), then start. */
typedef struct pord {
    uint32_t pg;
    int32_t src, dst;
    int64_t ts;
    size_t i;
} pord;

static int cmp_pord(const void *a, const void *b) {
    const pord *x = a, *y = b;
    if (x->pg != y->pg) return x->pg < y->pg ? -1 : 1;
    return HTA_CMP4(x->src, y->src, x->dst, y->dst, x->ts, y->ts, x->i, y->i);
}

/* The rank's collectives, keyed for the match (job/internal.h): Comms Id where every one has it, else (process
 * group, Seq) where every one has Seq, else the order of starts within each process group.  A send or
 * recv (p2p_of) is keyed apart, by its pair (SJ_KEY_P2P: group, sender, receiver, and its order among that
 * pair's kernels on this rank, first in first out, as NCCL matches a send with a recv; one that names no
 * peer gets no pair, -1 -1, and stays alone); it takes no part in the collectives' choice of key, nor in
 * their order (only two ranks of its group have it).  Its Seq and Comms Id are left aside: PyTorch counts
 * p2p ops per rank, so a rank that sends and receives numbers them differently from each of its peers.
 * pw_edge/tr_edge: per collective, its wait and transfer edges in s's graph. */
static hta_status collectives(struct hta_job *j, const hta_sim *s, sj_rank *R, uint32_t **pw_edge,
                              uint32_t **tr_edge, hta_error *err) {
    const hta_cp_graph *g = s->g;
    size_t n = s->ncoll;
    R->coll = calloc(n ? n : 1, sizeof *R->coll);
    *pw_edge = malloc((n ? n : 1) * sizeof **pw_edge);
    *tr_edge = malloc((n ? n : 1) * sizeof **tr_edge);
    uint32_t *from_mid = NULL; /* the transfer leaves the wait's node (the mid node) */
    ord *o = NULL;
    pord *po = NULL;
    if (!R->coll || !*pw_edge || !*tr_edge || sim_mid_map(g, &from_mid, err)) goto oom;
    int has_id = 1, has_seq = 1;
    for (size_t q = 0; q < n; q++) {
        const hta_sim_coll *id = &s->coll[q];
        const hta_cp_edge *e = &g->edge[id->edge];
        const hta_cp_event *x = &g->ev[e->attr];
        sj_coll *c = &R->coll[R->ncoll];
        c->pg = id->pg != UINT32_MAX ? intern(j, hta_sym(g->sym, id->pg)) : UINT32_MAX;
        c->kind = c->pg == UINT32_MAX ? SJ_KEY_NONE : SJ_KEY_PG;
        c->seq = id->seq;
        c->src = c->dst = -1;
        if (id->p2p) {
            /* a send or recv whose peer is unknown (or itself) stays its rank's alone: keyed with no pair
             * (-1, -1), which no pair of ranks matches; ordered with the collectives, it would join every
             * rank's k-th p2p op of its group, a rendezvous NCCL never makes */
            c->kind = SJ_KEY_P2P;
            if (id->peer >= 0 && id->peer != R->rank) {
                c->src = id->send ? R->rank : id->peer;
                c->dst = id->send ? id->peer : R->rank;
            }
        } else {
            if (c->seq < 0) has_seq = 0;
            if (!id->has_id) has_id = 0;
        }
        c->name = intern(j, hta_sym(g->sym, x->name));
        if (c->name == UINT32_MAX || (id->pg != UINT32_MAX && c->pg == UINT32_MAX)) goto oom;
        c->ts = x->ts + g->origin_ns;
        c->dur = x->dur;
        c->step = s->ev_step[e->attr];
        c->pw = hta_cp_edge_w(g, (size_t)(e - g->edge));
        c->stream = hta_cp_ev_stream(g, x);
        uint32_t tr = sim_mid_transfer(g, from_mid, e->v);
        c->tr = tr != UINT32_MAX ? hta_cp_edge_w(g, tr) : 0;
        (*pw_edge)[R->ncoll] = id->edge;
        (*tr_edge)[R->ncoll] = tr;
        if (tr == UINT32_MAX) {
            free(from_mid);
            return hta_fail(err, HTA_EINVAL, "rank %d: collective %s has no transfer edge; please report it",
                            (int)R->rank, hta_sym(g->sym, x->name));
        }
        R->ncoll++;
    }
    free(from_mid);
    from_mid = NULL;
    if (has_id && R->ncoll) {
        for (size_t i = 0; i < R->ncoll; i++) {
            if (R->coll[i].kind == SJ_KEY_P2P) continue;
            R->coll[i].kind = SJ_KEY_ID;
            R->coll[i].pg = UINT32_MAX;
            R->coll[i].seq = s->coll[i].comms_id;
        }
    } else if (!has_seq && R->ncoll) {
        if (!(o = malloc(R->ncoll * sizeof *o))) goto oom;
        size_t no = 0;
        for (size_t i = 0; i < R->ncoll; i++)
            if (R->coll[i].kind != SJ_KEY_P2P) o[no++] = (ord){R->coll[i].pg, R->coll[i].ts, i};
        if (no > 1) qsort(o, no, sizeof *o, cmp_ord);
        int64_t n1 = 0;
        for (size_t i = 0; i < no; i++) {
            if (i && o[i].pg != o[i - 1].pg) n1 = 0;
            R->coll[o[i].i].seq = n1++;
        }
        free(o);
        o = NULL;
    }
    /* the pairs' order: the k-th send src->dst of a group on the sender, the k-th recv on the receiver */
    size_t np = 0;
    for (size_t i = 0; i < R->ncoll; i++) np += R->coll[i].kind == SJ_KEY_P2P;
    if (np) {
        if (!(po = malloc(np * sizeof *po))) goto oom;
        np = 0;
        for (size_t i = 0; i < R->ncoll; i++) {
            const sj_coll *c = &R->coll[i];
            if (c->kind == SJ_KEY_P2P) po[np++] = (pord){c->pg, c->src, c->dst, c->ts, i};
        }
        if (np > 1) qsort(po, np, sizeof *po, cmp_pord);
        int64_t n1 = 0;
        for (size_t i = 0; i < np; i++) {
            if (i && (po[i].pg != po[i - 1].pg || po[i].src != po[i - 1].src || po[i].dst != po[i - 1].dst)) n1 = 0;
            R->coll[po[i].i].seq = n1++;
        }
        free(po);
    }
    return HTA_OK;
oom:
    free(from_mid);
    free(o);
    free(po);
    return hta_oom(err);
}

/* ---- rank:R=median's totals, by the job's key table ---- */

void sj_tot_free(sj_rank *R) {
    free(R->tv);
    R->tv = NULL;
    R->ntv = 0;
}

void sj_tot_reset(struct hta_job *j) {
    for (size_t p = 0; p < j->nr; p++) sj_tot_free(&j->r[p]);
    free(j->tkey);
    free(j->tslot);
    j->tkey = NULL, j->tslot = NULL;
    j->ntkey = j->ctkey = j->tcap = 0;
}

/* A key's slot among cap (a power of two), every bit of the key mixed in: a product's middle bits alone depend
 * on the key's low half only (a total's step, a drop's best source), which piled such keys into a few slots. */
static size_t key_slot(uint64_t key, size_t cap) { return (size_t)hta_hash_u64(key) & (cap - 1); }

/* The index of key in the job's table, added where new (the lock held); SIZE_MAX: out of memory. */
static size_t key_index(struct hta_job *j, uint64_t key) {
    if (2 * (j->ntkey + 1) > j->tcap) {
        size_t nc = j->tcap ? 2 * j->tcap : 1024;
        uint32_t *y = calloc(nc, sizeof *y);
        if (!y) return SIZE_MAX;
        for (size_t i = 0; i < j->ntkey; i++) {
            size_t h = key_slot(j->tkey[i], nc);
            while (y[h]) h = (h + 1) & (nc - 1);
            y[h] = (uint32_t)(i + 1);
        }
        free(j->tslot);
        j->tslot = y, j->tcap = nc;
    }
    size_t h = key_slot(key, j->tcap);
    while (j->tslot[h] && j->tkey[j->tslot[h] - 1] != key) h = (h + 1) & (j->tcap - 1);
    if (j->tslot[h]) return j->tslot[h] - 1;
    if (j->ntkey >= UINT32_MAX - 1 || HTA_GROW(j->tkey, j->ctkey, j->ntkey + 1)) return SIZE_MAX;
    j->tkey[j->ntkey] = key;
    j->tslot[h] = (uint32_t)(j->ntkey + 1);
    return j->ntkey++;
}

int sj_tot_set(struct hta_job *j, sj_rank *R, const sj_tot *t, size_t n) {
    sj_tot_free(R);
    size_t *at = malloc((n ? n : 1) * sizeof *at), len = 0;
    if (!at) return -1;
    pthread_mutex_lock(&j->lock);
    for (size_t i = 0; i < n; i++) {
        if ((at[i] = key_index(j, t[i].key)) == SIZE_MAX) {
            pthread_mutex_unlock(&j->lock);
            free(at);
            return -1;
        }
        if (at[i] + 1 > len) len = at[i] + 1;
    }
    pthread_mutex_unlock(&j->lock);
    /* by key index, then each as its zigzag varint: counted, then written into a block of that size */
    int64_t *v = calloc(len ? len : 1, sizeof *v);
    int dup = 0; /* a key twice with a time (a zero first is overwritten, as adding it would give) */
    if (!v) {
        free(at);
        return -1;
    }
    for (size_t i = 0; i < n; i++) dup |= v[at[i]] != 0, v[at[i]] = t[i].ns;
    free(at);
    size_t m = 0;
    for (size_t k = 0; k < len; k++) {
        uint64_t z = (uint64_t)v[k] << 1 ^ (uint64_t)(v[k] >> 63);
        do m++;
        while ((z >>= 7));
    }
    if (!(R->tv = malloc(m ? m : 1))) {
        free(v);
        return -1;
    }
    m = 0;
    for (size_t k = 0; k < len; k++) {
        uint64_t z = (uint64_t)v[k] << 1 ^ (uint64_t)(v[k] >> 63);
        do R->tv[m++] = (unsigned char)((z & 0x7f) | (z > 0x7f ? 0x80 : 0));
        while ((z >>= 7));
    }
    R->ntv = len;
    free(v);
    return dup;
}

/* rank:R=median's totals (sim_run.c's keys, by name): every work edge but the collectives' transfers. */
static hta_status totals(struct hta_job *j, const hta_sim *s, sj_rank *R, const uint32_t *tr_edge,
                         hta_error *err) {
    const hta_cp_graph *g = s->g;
    unsigned char *skip = calloc(g->nedge ? g->nedge : 1, 1);
    if (!skip) return hta_oom(err);
    for (size_t c = 0; c < R->ncoll; c++) skip[tr_edge[c]] = 1;
    uint32_t nsym = hta_symtab_count(g->sym);
    uint32_t *map = malloc(((size_t)nsym + 1) * sizeof *map);
    /* keys to totals: open addressing */
    size_t cap = 64;
    while (cap < 2 * g->nedge + 2) cap <<= 1;
    uint64_t *kk = malloc(cap * sizeof *kk);
    uint32_t *kv = malloc(cap * sizeof *kv);
    sj_tot *tot = NULL; /* the rank's, then by the job's table (sj_tot_set) */
    size_t nt = 0, ct = 0;
    if (!map || !kk || !kv) goto oom;
    memset(kk, 0xff, cap * sizeof *kk);
    for (uint32_t y = 0; y <= nsym; y++) map[y] = UINT32_MAX;
    for (size_t i = 0; i < g->nedge; i++) {
        const hta_cp_edge *e = &g->edge[i];
        if (skip[i] || (e->type != HTA_CP_OPERATOR && e->type != HTA_CP_GAP)) continue;
        uint64_t key = sim_median_key(s, e);
        size_t h = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 17) & (cap - 1);
        while (kk[h] != UINT64_MAX && kk[h] != key) h = (h + 1) & (cap - 1);
        if (kk[h] == UINT64_MAX) {
            if (HTA_GROW(tot, ct, nt + 1)) goto oom;
            uint32_t hi = (uint32_t)(key >> 32), nm = UINT32_MAX;
            if (hi < 2 * nsym) {
                if (map[hi / 2] == UINT32_MAX && (map[hi / 2] = intern(j, hta_sym(g->sym, hi / 2))) == UINT32_MAX)
                    goto oom;
                nm = map[hi / 2];
            }
            tot[nt] = (sj_tot){sj_med_key(nm, (int)(hi & 1), (int64_t)(uint32_t)key - 2), 0};
            kk[h] = key;
            kv[h] = (uint32_t)nt++;
        }
        tot[kv[h]].ns += hta_cp_edge_w(g, (size_t)(e - g->edge));
    }
    if (sj_tot_set(j, R, tot, nt)) goto oom;
    free(tot);
    free(skip);
    free(map);
    free(kk);
    free(kv);
    return HTA_OK;
oom:
    free(tot);
    free(skip);
    free(map);
    free(kk);
    free(kv);
    return hta_oom(err);
}

/* ---- labels ----
 *
 * A node's time is the largest of its labels' values (a collective's replayed end + d, or d itself for the
 * rank's own sources).  Kept whole, a node's set grows with the collectives before it (every one of them
 * could be late enough to decide), which makes the pass nodes x collectives.  So a node keeps only its
 * SJ_KEEP labels of largest reference value (ref[src] + d, the reference being the rank's own schedule, or
 * the last replay's times on a revisit), and each label x it drops is recorded against the best one y with
 * the margin by which y's reference value beats x's.  After the replay, D(c) = replayed end - ref[c]; a
 * drop could have changed a time only if D(x) - D(y) > margin (x would then beat y).  sj_check finds those
 * ranks and they are visited again with the replayed times as reference and twice the labels, which
 * converges in a round or two; after SJ_ROUNDS, what could still be off is bounded and said.  A node's labels
 * are freed once every node after it has taken them, so memory follows the graph's frontier, not its size. */

typedef struct lab_state {
    const hta_sim *s;
    const int64_t *w;       /* per graph edge (the links' are ch->w) */
    /* The graph with its chains folded (job/chains.c): the pass's nodes are ch's, each with its mid node and
     * kept flags, its collective arrival, and its edges out (LEFT_HUB: that many or more, left's start). */
    const sj_chains *ch;
    const uint32_t *pw_e, *tr_e; /* per collective: its wait and transfer edges */
    unsigned char *cok;     /* per collective, under the scenario's weights: its wait and transfer weigh >= 0
                             * and so does its own wait, so that it ends no earlier than its arrival */
    int64_t origin;
    uint32_t *off;          /* per node: its labels pool[off .. off + cnt) */
    uint8_t *cnt;           /* (at most keep: SJ_KEEP doubled SJ_ROUNDS times, 48) */
    sj_label *pool;
    size_t npool, cap;
    sj_label *cand;
    size_t ncand, ccand;
    int64_t *rv;            /* per candidate: its reference value */
    int64_t *dom_m;         /* dominated_few's: 64 x 64 */
    uint32_t *dom_off, *dom_j; /* undominated's scratch: per candidate, the ones that may dominate it (cdom
                                * of them), then room for as many gathered pairs (dom_j: i then j) */
    int64_t *dom_d;
    size_t cdoff, cdom;
    size_t crv;
    uint64_t *seen;         /* per source + 1: the node that last saw it (+ 1, high half), its candidate there
                             * (low half): one read where the candidates' dedup and dominance ask both */
    int64_t *ref;           /* per collective: reference end (absolute ns) */
    int ref_given;
    size_t keep;            /* labels a node keeps */
    sj_label *kbuf;         /* room for them */
    uint16_t *left;         /* per node: successors still to take its labels; LEFT_HUB: too many to count, its
                             * labels stay (freeing early only saves room) */
    uint32_t *freel;        /* per block size (1 .. keep): a freed block's offset, chained through .d */
    /* the drops: open addressing on (dropped + 1) << 32 | (best + 1) */
    uint64_t *pk;
    int64_t *pd;
    size_t pcap, npair;
} lab_state;

static int kept_of(const lab_state *L, uint32_t v) { return L->ch->flag[v] & SJ_CH_KEPT; }
static int mid_of(const lab_state *L, uint32_t v) { return L->ch->flag[v] & SJ_CH_MID; }

/* d moved along link lw (its weight, least and largest partial sum): 1 and *out where every time on the way
 * is one the model holds, as sj_add checks each edge's, else 0. */
static int link_add(int64_t d, const int64_t *lw, int64_t *out) {
    if ((__int128)d + lw[1] < -(__int128)HTA_TIME_MAX_NS || (__int128)d + lw[2] > HTA_TIME_MAX_NS) return 0;
    *out = d + lw[0];
    return 1;
}

static int push(sj_label **v, size_t *n, size_t *cap, sj_label x) {
    if (HTA_GROW(*v, *cap, *n + 1)) return -1;
    (*v)[(*n)++] = x;
    return 0;
}

/* A node's block: its n labels after a header of two label slots (blk_hdr) that says what to add to each
 * stored d (a chain's weights, added once per link rather than once per label and link) and the least and
 * largest d stored (so that a link checks the times the model holds for all of them at once).  A label's d
 * is its stored d + delta; the header is read and written through memcpy (labels are packed). */
typedef struct blk_hdr {
    int64_t delta, lo, hi;
} blk_hdr;
_Static_assert(sizeof(blk_hdr) == 2 * sizeof(sj_label), "a block's header takes two label slots");
#define BLK_HDR 2

static blk_hdr hdr_get(const lab_state *L, uint32_t off) {
    blk_hdr h;
    memcpy(&h, L->pool + off - BLK_HDR, sizeof h);
    return h;
}
static void hdr_set(lab_state *L, uint32_t off, blk_hdr h) { memcpy(L->pool + off - BLK_HDR, &h, sizeof h); }
/* Node v's labels as stored (NULL without labels: the pool may not be made yet). */
static const sj_label *labels_of(const lab_state *L, uint32_t v) { return L->cnt[v] ? L->pool + L->off[v] : NULL; }
/* Node v's labels' delta (0 without labels). */
static int64_t delta_of(const lab_state *L, uint32_t v) { return L->cnt[v] ? hdr_get(L, L->off[v]).delta : 0; }
/* The header of a block whose n labels hold their d as it is. */
static void hdr_plain(lab_state *L, uint32_t off, size_t n) {
    blk_hdr h = {0, INT64_MAX, INT64_MIN};
    for (size_t i = 0; i < n; i++) {
        int64_t d = L->pool[off + i].d;
        if (d < h.lo) h.lo = d;
        if (d > h.hi) h.hi = d;
    }
    hdr_set(L, off, h);
}

/* A block of n labels in the pool (after its header): a freed one of that size, else at the end.  Freed
 * blocks are chained through their header's first slot. */
static int blk_alloc(lab_state *L, size_t n, uint32_t *off) {
    if (!n) {
        *off = 0;
        return 0;
    }
    if (L->freel[n] != UINT32_MAX) {
        *off = L->freel[n];
        L->freel[n] = (uint32_t)L->pool[*off - BLK_HDR].d;
        return 0;
    }
    if (L->npool + n + BLK_HDR > UINT32_MAX || HTA_GROW(L->pool, L->cap, L->npool + n + BLK_HDR)) return -1;
    *off = (uint32_t)(L->npool + BLK_HDR);
    L->npool += n + BLK_HDR;
    return 0;
}

static void blk_free(lab_state *L, uint32_t off, size_t n) {
    if (!n) return;
    L->pool[off - BLK_HDR].d = L->freel[n];
    L->freel[n] = off;
}

static int64_t refval(const lab_state *L, const sj_label *x) {
    return x->src < 0 ? x->d : L->ref[x->src] + x->d;
}

static int drop(lab_state *L, int32_t x, int32_t y, int64_t margin) {
    if (2 * (L->npair + 1) > L->pcap) {
        size_t nc = L->pcap ? 2 * L->pcap : 1024;
        uint64_t *k = malloc(nc * sizeof *k);
        int64_t *d = malloc(nc * sizeof *d);
        if (!k || !d) {
            free(k);
            free(d);
            return -1;
        }
        memset(k, 0, nc * sizeof *k);
        for (size_t i = 0; i < L->pcap; i++) {
            if (!L->pk[i]) continue;
            size_t h = key_slot(L->pk[i], nc);
            while (k[h]) h = (h + 1) & (nc - 1);
            k[h] = L->pk[i], d[h] = L->pd[i];
        }
        free(L->pk);
        free(L->pd);
        L->pk = k, L->pd = d, L->pcap = nc;
    }
    uint64_t key = (uint64_t)(uint32_t)(x + 1) << 32 | (uint32_t)(y + 1);
    size_t h = key_slot(key, L->pcap);
    while (L->pk[h] && L->pk[h] != key) h = (h + 1) & (L->pcap - 1);
    if (!L->pk[h]) L->pk[h] = key, L->pd[h] = margin, L->npair++;
    else if (margin < L->pd[h]) L->pd[h] = margin;
    return 0;
}

HTA_QSORT_CMP(cmp_rv_desc, int64_t, HTA_CMP2(y[0], x[0], x[1], y[1]))

/* rv's n (reference value, index) pairs, largest value first, then index: a join's few by insertion (the
 * pairs' order is total, so any sort gives the one result; qsort's calls were most of a small join's cost) */
static void sort_rv(int64_t *rv, size_t n) {
    if (n > 32) {
        qsort(rv, n, 2 * sizeof *rv, cmp_rv_desc);
        return;
    }
    for (size_t i = 1; i < n; i++) {
        int64_t x = rv[2 * i], k = rv[2 * i + 1];
        size_t j = i;
        for (; j && (rv[2 * j - 2] < x || (rv[2 * j - 2] == x && rv[2 * j - 1] > k)); j--)
            rv[2 * j] = rv[2 * j - 2], rv[2 * j + 1] = rv[2 * j - 1];
        rv[2 * j] = x, rv[2 * j + 1] = k;
    }
}

/* best - r, both reference values (each a time plus a delay the model holds): saturated, never wrapped */
static int64_t margin(int64_t best, int64_t r) {
    int64_t m;
    return __builtin_sub_overflow(best, r, &m) ? INT64_MAX : m;
}

/* The candidates c[0 .. n) less those no replay can make decide, exactly (no drop to check): label (x, dx) is
 * dominated by (y, dy) when x's label reached y's arrival with delay dxy and dxy + dy >= dx, since under every
 * replay y ends no earlier than its arrival (a barrier is the latest arrival; waits and transfers weigh >= 0),
 * which comes no earlier than x's end + dxy.  Compared only with the candidates still in, so a chain of
 * dominations always ends at one that stays.  Returns the number left, packed at the front. */
/* The pairs (i, j, d) of candidates c[0 .. n) at node v where candidate j's arrival's set holds candidate i's
 * source with delay d: one pass over the sets of the candidates' arrivals, each source found among the
 * candidates by the dedup's mark (seen), instead of a scan of every set for every pair of candidates (n^2 x
 * keep, the skeleton's cost at a join of many collectives' labels).  At most n x keep (a set's sources are
 * distinct), into gi, gj, gd; returns their number. */
static size_t dom_pairs(const lab_state *L, const sj_label *c, size_t n, uint32_t v, uint32_t *gi, uint32_t *gj,
                        int64_t *gd) {
    size_t ng = 0;
    for (size_t j = 0; j < n; j++) {
        int32_t y = c[j].src;
        if (y < 0 || !L->cok[y]) continue; /* a source; a collective whose end may come before its arrival */
        uint32_t a = L->ch->arr_of[y];     /* y's arrival */
        const sj_label *z = labels_of(L, a);
        int64_t za = delta_of(L, a);
        for (uint32_t q = 0; q < L->cnt[a]; q++) {
            uint32_t k = (uint32_t)(z[q].src + 1);
            if (z[q].src < 0 || L->seen[k] >> 32 != v + 1) continue;
            uint32_t i = (uint32_t)L->seen[k];
            if (i == j) continue;
            gi[ng] = i, gj[ng] = (uint32_t)j, gd[ng++] = z[q].d + za;
        }
    }
    return ng;
}

/* undominated's test for a join of at most 64 candidates (most: two inputs of keep labels each): the pairs
 * as a matrix, dm[i * 64 + j] where bit j of has[i] is set, and the candidates still in as a mask.  Returns
 * the candidates put out, as bits. */
static uint64_t dominated_few(const lab_state *L, const sj_label *c, size_t n, const uint32_t *gi,
                              const uint32_t *gj, const int64_t *gd, size_t ng) {
    uint64_t has[64];
    int64_t *dm = L->dom_m;
    memset(has, 0, n * sizeof *has);
    for (size_t g = 0; g < ng; g++) has[gi[g]] |= 1ull << gj[g], dm[gi[g] * 64 + gj[g]] = gd[g];
    /* in: the candidates that may still dominate (no source: its label is no collective's) */
    uint64_t in = 0, out = 0;
    for (size_t j = 0; j < n; j++) in |= (uint64_t)(c[j].src >= 0) << j;
    for (size_t i = 0; i < n; i++) {
        for (uint64_t b = c[i].src >= 0 ? has[i] & in : 0; b; b &= b - 1) {
            size_t j = (size_t)__builtin_ctzll(b);
            if ((__int128)dm[i * 64 + j] + c[j].d >= c[i].d) {
                in &= ~(1ull << i), out |= 1ull << i; /* out: compared no more */
                break;
            }
        }
    }
    return out;
}

static size_t undominated(lab_state *L, sj_label *c, size_t n, uint32_t v) {
    size_t need = n * L->keep + 1;
    if (n + 2 > L->cdoff || need > L->cdom) {
        uint32_t *o = realloc(L->dom_off, (n + 2) * sizeof *o);
        if (o) L->dom_off = o, L->cdoff = n + 2;
        uint32_t *dj = realloc(L->dom_j, 3 * need * sizeof *dj);
        if (dj) L->dom_j = dj;
        int64_t *dd = o && dj ? realloc(L->dom_d, 2 * need * sizeof *dd) : NULL;
        if (dd) L->dom_d = dd, L->cdom = need;
        if (!o || !dj || !dd) return SIZE_MAX;
    }
    uint32_t *off = L->dom_off, *dj = L->dom_j, *gi = L->dom_j + L->cdom, *gj = gi + L->cdom;
    int64_t *dd = L->dom_d, *gd = L->dom_d + L->cdom;
    size_t ng = dom_pairs(L, c, n, v, gi, gj, gd), m = 0;
    if (n <= 64) {
        uint64_t out = dominated_few(L, c, n, gi, gj, gd, ng);
        for (size_t i = 0; i < n; i++)
            if (!(out >> i & 1)) c[m++] = c[i];
        return m;
    }
    /* by i, as offsets dom_off[i] .. dom_off[i + 1], put in i's order by counting */
    memset(off, 0, (n + 2) * sizeof *off);
    for (size_t g = 0; g < ng; g++) off[gi[g] + 2]++;
    for (size_t i = 0; i < n; i++) off[i + 2] += off[i + 1];
    for (size_t g = 0; g < ng; g++) dj[off[gi[g] + 1]] = gj[g], dd[off[gi[g] + 1]++] = gd[g];
    /* now off[i] .. off[i + 1] are i's; in candidate order, as each is put out the later ones see it */
    for (size_t i = 0; i < n; i++) {
        if (c[i].src < 0) continue;
        for (uint32_t q = off[i]; q < off[i + 1]; q++) {
            const sj_label *y = &c[dj[q]];
            if (y->src >= 0 && (__int128)dd[q] + y->d >= c[i].d) {
                c[i].src = INT32_MIN; /* out: compared no more */
                break;
            }
        }
    }
    for (size_t i = 0; i < n; i++)
        if (c[i].src != INT32_MIN) c[m++] = c[i];
    return m;
}

/* At a kept arrival v (no given reference), its collective's reference end: the best reference value there
 * plus the collective's own wait and transfer.  -2: beyond the times the model holds. */
static int arrival_ref(lab_state *L, uint32_t v, int64_t best) {
    int32_t a = L->ch->arr[v];
    if (a >= 0 && !L->ref_given) {
        int64_t r;
        if (!sj_add(best, L->w[L->pw_e[a]], &r) || !sj_add(r, L->w[L->tr_e[a]], &L->ref[a])) return -2;
    }
    return 0;
}

/* Candidates to v's set: the largest per source, then the L->keep of largest reference value (the drops
 * recorded).  At an arrival, its collective's reference end follows (unless given).
 * -1: out of memory; -2: that end is beyond the times the model holds. */
static int settle(lab_state *L, uint32_t v) {
    sj_label *c = L->cand;
    size_t n = 0;
    for (size_t i = 0; i < L->ncand; i++) {
        uint32_t k = (uint32_t)(c[i].src + 1);
        if (L->seen[k] >> 32 == v + 1) {
            sj_label *q = &c[(uint32_t)L->seen[k]];
            if (c[i].d > q->d) q->d = c[i].d;
            continue;
        }
        L->seen[k] = (uint64_t)(v + 1) << 32 | n;
        c[n++] = c[i];
    }
    if (n > L->keep && (n = undominated(L, c, n, v)) == SIZE_MAX) return -1;
    int64_t best = INT64_MIN;
    size_t m = n;
    const sj_label *keep = c;
    if (n > L->keep) {
        /* (reference value, index) pairs, largest first */
        if (2 * n > L->crv) {
            size_t nc = 4 * n;
            int64_t *y = realloc(L->rv, nc * sizeof *y);
            if (!y) return -1;
            L->rv = y, L->crv = nc;
        }
        for (size_t i = 0; i < n; i++) L->rv[2 * i] = refval(L, &c[i]), L->rv[2 * i + 1] = (int64_t)i;
        sort_rv(L->rv, n);
        best = L->rv[0];
        int32_t bsrc = c[L->rv[1]].src;
        for (size_t i = 0; i < n; i++) {
            const sj_label *x = &c[L->rv[2 * i + 1]];
            if (i < L->keep) L->kbuf[i] = *x;
            else if (drop(L, x->src, bsrc, margin(best, L->rv[2 * i]))) return -1;
        }
        m = L->keep;
        keep = L->kbuf;
    } else {
        for (size_t i = 0; L->ch->arr[v] >= 0 && i < n; i++) {
            int64_t r = refval(L, &c[i]);
            if (r > best) best = r;
        }
    }
    uint32_t off;
    if (blk_alloc(L, m, &off)) return -1;
    if (m) memcpy(L->pool + off, keep, m * sizeof *keep), hdr_plain(L, off, m); /* no pool yet: nothing kept */
    L->off[v] = off;
    L->cnt[v] = (uint8_t)m;
    return arrival_ref(L, v, best);
}

/* v's one link in, from u (no mid node, with labels), of weights lw (link_add): what settle makes of u's
 * labels moved by the link, which is them in their order (their sources are distinct and no more than keep),
 * without its pass over candidates.  Where v is the last to take u's block, it takes the block over and adds
 * the link's weight to the block's delta: a link costs the same however many labels the chain carries (the
 * skeleton's passes over two 250 MB ranks were mostly this copy); else it copies the labels, moved. */
static int pass_on(lab_state *L, uint32_t v, uint32_t u, const int64_t *lw) {
    size_t n = L->cnt[u];
    int take = L->left[u] == 1 && !kept_of(L, u);
    uint32_t off = L->off[u];
    if (!take && blk_alloc(L, n, &off)) return -1;
    blk_hdr h = hdr_get(L, L->off[u]); /* after blk_alloc: the pool may have moved */
    int64_t nd;
    if (take && !__builtin_add_overflow(h.delta, lw[0], &nd)) {
        /* every label's d on the way within the times the model holds, as each label's own sums are checked */
        if ((__int128)h.lo + h.delta + lw[1] < -(__int128)HTA_TIME_MAX_NS ||
            (__int128)h.hi + h.delta + lw[2] > HTA_TIME_MAX_NS)
            return -2;
        h.delta = nd;
        hdr_set(L, off, h);
    } else {
        const sj_label *x = L->pool + L->off[u];
        sj_label *y = L->pool + off;
        for (size_t i = 0; i < n; i++) {
            int64_t d;
            if (!link_add(x[i].d + h.delta, lw, &d)) return -2;
            y[i] = (sj_label){x[i].src, d};
        }
        hdr_plain(L, off, n);
    }
    /* the best reference value serves an arrival only (arrival_ref) */
    int64_t best = INT64_MIN, dv = hdr_get(L, off).delta;
    const sj_label *y = L->pool + off;
    for (size_t i = 0; L->ch->arr[v] >= 0 && i < n; i++) {
        sj_label x = {y[i].src, y[i].d + dv};
        int64_t r = refval(L, &x);
        if (r > best) best = r;
    }
    L->off[v] = off;
    L->cnt[v] = (uint8_t)n;
    if (L->left[u] != LEFT_HUB && !--L->left[u] && !kept_of(L, u)) {
        if (!take) blk_free(L, L->off[u], n);
        L->cnt[u] = 0;
    }
    return arrival_ref(L, v, best);
}

static hta_status label_pass(lab_state *L, hta_error *err) {
    const hta_cp_graph *g = L->s->g;
    const sj_chains *ch = L->ch;
    for (uint32_t v = 0; v < ch->n; v++) {
        L->ncand = 0;
        L->off[v] = 0;
        L->cnt[v] = 0;
        if (mid_of(L, v)) continue;
        uint32_t a = ch->in_off[v], z = ch->in_off[v + 1];
        if (z - a == 1 && !mid_of(L, ch->from[a]) && L->cnt[ch->from[a]]) {
            int r = pass_on(L, v, ch->from[a], ch->w + 3 * (size_t)a);
            if (r == -2) return hta_fail(err, HTA_EINVAL, "rank %d: " SJ_BEYOND, (int)g->rank);
            if (r) goto oom;
            continue;
        }
        if (a == z &&
            push(&L->cand, &L->ncand, &L->ccand, (sj_label){-1, hta_cp_node_ts(g, ch->node[v]) + L->origin}))
            goto oom;
        for (uint32_t q = a; q < z; q++) {
            uint32_t u = ch->from[q];
            if (mid_of(L, u)) {
                if (ch->tc[q] < 0)
                    return hta_fail(err, HTA_EINVAL, "rank %d: a collective's wait feeds more than its transfer; "
                                                     "please report it", (int)g->rank);
                if (push(&L->cand, &L->ncand, &L->ccand, (sj_label){ch->tc[q], 0})) goto oom;
                continue;
            }
            const sj_label *x = labels_of(L, u);
            int64_t du = delta_of(L, u);
            for (uint32_t y = 0; y < L->cnt[u]; y++) {
                int64_t d;
                if (!link_add(x[y].d + du, ch->w + 3 * (size_t)q, &d))
                    return hta_fail(err, HTA_EINVAL, "rank %d: " SJ_BEYOND, (int)g->rank);
                if (push(&L->cand, &L->ncand, &L->ccand, (sj_label){x[y].src, d})) goto oom;
            }
        }
        int r = settle(L, v);
        if (r == -2) return hta_fail(err, HTA_EINVAL, "rank %d: " SJ_BEYOND, (int)g->rank);
        if (r) goto oom;
        for (uint32_t q = a; q < z; q++) {
            uint32_t u = ch->from[q];
            if (L->left[u] != LEFT_HUB && !--L->left[u] && !kept_of(L, u)) blk_free(L, L->off[u], L->cnt[u]), L->cnt[u] = 0;
        }
    }
    /* the run's end (node n): the labels of every node no edge leaves */
    L->ncand = 0;
    for (size_t i = 0; i < ch->nends; i++) {
        uint32_t v = ch->ends[i];
        const sj_label *x = labels_of(L, v);
        int64_t dv = delta_of(L, v);
        for (uint32_t y = 0; y < L->cnt[v]; y++)
            if (push(&L->cand, &L->ncand, &L->ccand, (sj_label){x[y].src, x[y].d + dv})) goto oom;
    }
    int r = settle(L, (uint32_t)ch->n);
    if (r == -2) return hta_fail(err, HTA_EINVAL, "rank %d: " SJ_BEYOND, (int)g->rank);
    if (r) goto oom;
    return HTA_OK;
oom:
    return hta_oom(err);
}

int sj_lab_set(sj_skel *k, const sj_label *v, size_t n) {
    size_t nw = 0;
    for (size_t i = 0; i < n; i++) nw += !sj_lab_fits(v[i].src, v[i].d);
    uint64_t *lab = malloc((n ? n : 1) * sizeof *lab);
    sj_label *wide = nw ? malloc(nw * sizeof *wide) : NULL;
    if (!lab || (nw && !wide)) {
        free(lab);
        free(wide);
        return -1;
    }
    nw = 0;
    for (size_t i = 0; i < n; i++) {
        if (sj_lab_fits(v[i].src, v[i].d)) {
            lab[i] = sj_lab_pack(v[i].src, v[i].d);
        } else {
            lab[i] = (uint64_t)SJ_LAB_WIDE << 48 | nw;
            wide[nw++] = v[i];
        }
    }
    free(k->lab);
    free(k->wide);
    k->lab = lab, k->nlab = n, k->wide = wide, k->nwide = nw;
    return 0;
}

/* Copies the sets of the nodes asked for into the skeleton k (off: where each node's start). */
static hta_status keep(const lab_state *L, const uint32_t *nodes, size_t n, sj_skel *k, uint32_t *off,
                       hta_error *err) {
    size_t total = 0;
    for (size_t i = 0; i < n; i++) total += L->cnt[nodes[i]];
    sj_label *lab = malloc((total ? total : 1) * sizeof *lab);
    if (!lab) return hta_oom(err);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        off[i] = (uint32_t)m;
        const sj_label *x = labels_of(L, nodes[i]);
        int64_t dx = delta_of(L, nodes[i]);
        for (uint32_t y = 0; y < L->cnt[nodes[i]]; y++) lab[m + y] = (sj_label){x[y].src, x[y].d + dx};
        m += L->cnt[nodes[i]];
    }
    off[n] = (uint32_t)m;
    int r = sj_lab_set(k, lab, m);
    free(lab);
    return r ? hta_oom(err) : HTA_OK;
}

/* The skeleton sk of a job of one rank (sj_skeleton's alone) under weights w.  No collective is matched, so no
 * node has a mid node and every label is the rank's own source's (-1): a node's one label is its longest
 * distance from the run's start (a source's own time; else the largest of its inputs' + their weights, each
 * sum checked as label_pass checks it), nothing dropped.  That is label_pass's result without its blocks,
 * candidates, counts, or the fold (one pass over the graph costs less than folding it, and a job of one rank
 * is visited once).  d: room for a time per node; hasout: per node, an edge leaves it; seen: room for a bit
 * per node. */
static hta_status skeleton_alone(const sj_rank *R, const hta_sim *s, const uint32_t *pw_e, const uint32_t *tr_e,
                                 const int64_t *w, const uint64_t *hasout, int64_t *d, uint64_t *seen, sj_skel *sk,
                                 hta_error *err) {
    const hta_cp_graph *g = s->g;
    size_t nn = g->nnode;
    for (size_t i = 0; i < nn; i++) {
        uint32_t v = s->topo[i];
        uint32_t a = s->pred_off[v], z = s->pred_off[v + 1];
        int64_t x = a == z ? hta_cp_node_ts(g, v) + g->origin_ns : INT64_MIN;
        for (uint32_t q = a; q < z; q++) {
            uint32_t e = s->pred_eid[q];
            int64_t y;
            if (!sj_add(d[g->edge[e].u], w[e], &y)) goto beyond;
            if (y > x) x = y;
        }
        d[v] = x;
    }
    /* each collective's reference end (the replay's check, the wire), set at its arrival as the labels' pass
     * sets it: there, for the last collective of that arrival; the others' say nothing (no label is dropped) */
    memset(seen, 0, (nn / 64 + 1) * sizeof *seen);
    for (size_t c = R->ncoll; c-- > 0;) {
        uint32_t a = g->edge[pw_e[c]].u;
        int64_t r;
        sk->ref[c] = INT64_MIN;
        if (seen[a / 64] >> (a % 64) & 1) continue;
        seen[a / 64] |= 1ull << (a % 64);
        if (!sj_add(d[a], w[pw_e[c]], &r) || !sj_add(r, w[tr_e[c]], &sk->ref[c])) goto beyond;
    }
    /* one label per kept node: each collective's arrival, each step's start and end; then the run's end, the
     * latest of the nodes no edge leaves (none in a graph without nodes) */
    size_t nk = R->ncoll + 2 * R->nsteps, n = 0;
    sj_label *lab = malloc((nk + 1) * sizeof *lab);
    if (!lab) return hta_oom(err);
    for (size_t c = 0; c < R->ncoll; c++) lab[n++] = (sj_label){-1, d[g->edge[pw_e[c]].u]};
    for (size_t i = 0; i < R->nsteps; i++)
        lab[n++] = (sj_label){-1, d[R->steps[i].start]}, lab[n++] = (sj_label){-1, d[R->steps[i].end]};
    int64_t end = INT64_MIN;
    int any = 0;
    for (size_t v = 0; v < nn; v++)
        if (!(hasout[v / 64] >> (v % 64) & 1) && (!any || d[v] > end)) end = d[v], any = 1;
    if (any) lab[n++] = (sj_label){-1, end};
    for (size_t c = 0; c <= R->ncoll; c++) sk->a_off[c] = (uint32_t)c;
    for (size_t i = 0; i <= 2 * R->nsteps; i++) sk->s_off[i] = (uint32_t)(R->ncoll + i);
    sk->s_off[2 * R->nsteps + 1] = (uint32_t)n;
    int r = sj_lab_set(sk, lab, n);
    free(lab);
    return r ? hta_oom(err) : HTA_OK;
beyond:
    return hta_fail(err, HTA_EINVAL, "rank %d: " SJ_BEYOND, (int)g->rank);
}

/* ---- scenarios that share scenario 0's labels (sj_skel.same) ---- */

/* the arrays a scenario may share */
static void free_shared(sj_skel *k) {
    free(k->lab);
    free(k->wide);
    free(k->a_off);
    free(k->s_off);
    free(k->ref);
    free(k->pkey);
    free(k->pdef);
}

void sj_skel_free(sj_skel *k) {
    if (!k->same) free_shared(k);
    free(k->trw);
    free(k->trmask);
    free(k->hits);
}

/* n elements of size sz copied (at least one element's room, as the engine allocates), or NULL where a is */
static void *dup_arr(const void *a, size_t n, size_t sz, int *oom) {
    if (!a) return NULL;
    void *y = malloc((n ? n : 1) * sz);
    if (!y) return *oom = 1, NULL;
    memcpy(y, a, n * sz);
    return y;
}

/* k (sharing b's arrays) given copies of its own */
static int own_copy(sj_skel *k, const sj_skel *b, size_t ncoll, size_t nsteps) {
    int oom = 0;
    uint64_t *lab = dup_arr(b->lab, b->nlab, sizeof *lab, &oom);
    sj_label *wide = dup_arr(b->wide, b->nwide, sizeof *wide, &oom);
    uint32_t *a_off = dup_arr(b->a_off, ncoll + 1, sizeof *a_off, &oom);
    uint32_t *s_off = dup_arr(b->s_off, 2 * nsteps + 2, sizeof *s_off, &oom);
    int64_t *ref = dup_arr(b->ref, ncoll, sizeof *ref, &oom);
    uint64_t *pkey = dup_arr(b->pkey, b->npair, sizeof *pkey, &oom);
    int64_t *pdef = dup_arr(b->pdef, b->npair, sizeof *pdef, &oom);
    if (oom) {
        free(lab), free(wide), free(a_off), free(s_off), free(ref), free(pkey), free(pdef);
        return -1;
    }
    k->lab = lab, k->wide = wide, k->a_off = a_off, k->s_off = s_off, k->ref = ref, k->pkey = pkey, k->pdef = pdef;
    k->same = 0;
    return 0;
}

int sj_skel_own(sj_rank *R, size_t nscn, size_t q) {
    if (q) return R->skel[q].same ? own_copy(&R->skel[q], &R->skel[0], R->ncoll, R->nsteps) : 0;
    for (size_t x = 1; x < nscn; x++)
        if (R->skel[x].same && own_copy(&R->skel[x], &R->skel[0], R->ncoll, R->nsteps)) return -1;
    return 0;
}

/* Scenario k of the rank takes scenario 0's labels as they are (sj_skel.same), where they are what its own
 * pass would make: its rules changed no edge (the weights are the same), and neither has a reference of a
 * replay or more labels than at first (the reference is then the rank's own schedule under those weights). */
static int share_base(sj_skel *k, sj_skel *b) {
    if (k == b || k->changed || k->ref_given || (k->keep && k->keep != SJ_KEEP) || !b->done || b->same ||
        b->ref_given || b->keep != SJ_KEEP)
        return 0;
    free_shared(k);
    sj_skel_share(k, b);
    k->done = 1;
    return 1;
}

void sj_skel_share(sj_skel *k, const sj_skel *b) {
    k->lab = b->lab, k->nlab = b->nlab, k->wide = b->wide, k->nwide = b->nwide;
    k->a_off = b->a_off, k->s_off = b->s_off, k->ref = b->ref;
    k->ref_given = b->ref_given, k->keep = b->keep, k->rounds = b->rounds;
    k->pkey = b->pkey, k->pdef = b->pdef, k->npair = b->npair;
    k->same = 1;
}

/* Per edge of the rank's graph, the factor of a median rule: the job's factors by key (1 elsewhere). */
static hta_status sj_med_edges(struct hta_job *j, const hta_sim *s, const sj_med *m, double **out, hta_error *err) {
    const hta_cp_graph *g = s->g;
    double *f = malloc((g->nedge ? g->nedge : 1) * sizeof *f);
    if (!f) return hta_oom(err);
    uint32_t nsym = hta_symtab_count(g->sym);
    for (size_t i = 0; i < g->nedge; i++) {
        const hta_cp_edge *e = &g->edge[i];
        f[i] = 1.0;
        if (e->type != HTA_CP_OPERATOR && e->type != HTA_CP_GAP) continue;
        uint64_t key = sim_median_key(s, e);
        uint32_t hi = (uint32_t)(key >> 32), nm = UINT32_MAX;
        if (hi < 2 * nsym) {
            const char *name = hta_sym(g->sym, hi / 2);
            int64_t id = hta_symtab_find(j->sym, name, strlen(name));
            if (id < 0) continue;
            nm = (uint32_t)id;
        }
        uint64_t jk = sj_med_key(nm, (int)(hi & 1), (int64_t)(uint32_t)key - 2);
        size_t lo = 0, hi2 = m->n;
        while (lo < hi2) {
            size_t md = (lo + hi2) / 2;
            if (m->key[md] < jk) lo = md + 1;
            else hi2 = md;
        }
        if (lo < m->n && m->key[lo] == jk) f[i] = m->f[lo];
    }
    *out = f;
    return HTA_OK;
}

hta_status sj_weights(struct hta_job *j, const hta_sim *s, size_t pos, size_t scn, int64_t *w, size_t *hits,
                      const uint32_t *mask_edge, size_t nmask, uint64_t *mask, size_t *changed, int *pending,
                      hta_error *err) {
    const hta_cp_graph *g = s->g;
    const sj_scn *sc = &j->scn[scn];
    const sj_rank *R = &j->r[pos];
    *pending = 0;
    *changed = 0;
    if (scn == 0 || !sc->nrules || (sc->on && !sc->on[pos])) {
        for (size_t i = 0; i < g->nedge; i++) w[i] = hta_cp_edge_w(g, i);
        return HTA_OK;
    }
    double **med = calloc(sc->nrules, sizeof *med);
    if (!med) return hta_oom(err);
    hta_status st = HTA_OK;
    for (size_t r = 0; r < sc->nrules && !st; r++) {
        if (!sc->rules[r].median || sc->rules[r].num != R->rank) continue;
        if (!sc->med || !sc->med[r]) *pending = 1;
        else st = sj_med_edges(j, s, sc->med[r], &med[r], err);
    }
    sim_wopts wo = {(const double *const *)med, hits, mask_edge, nmask, mask};
    if (!st) st = sim_weights(s, sc->rules, sc->nrules, &wo, w, changed, err);
    for (size_t r = 0; r < sc->nrules; r++) free(med[r]);
    free(med);
    return st;
}

/* The rank's graph and what the job keeps of it (sj_rank: its collectives, steps, totals), from the context's
 * rank k: *s, and each collective's wait and transfer edge (*pw_edge, *tr_edge; malloc'd).  revisit: R is
 * filled already, only the edges are found again. */
static hta_status rank_info(struct hta_job *j, hta_ctx *ctx, size_t k, size_t pos, int revisit, int release,
                            hta_sim **s, uint32_t **pw_edge, uint32_t **tr_edge, hta_error *err) {
    sj_rank *R = &j->r[pos];
    HTA_TRY(sj_graph_get(j, ctx, k, pos, 0, release, s, err));
    hta_ctx_view_done(ctx, k);
    const hta_cp_graph *g = (*s)->g;
    if (revisit) {
        sj_rank tmp = {0};
        tmp.rank = R->rank;
        HTA_TRY(collectives(j, *s, &tmp, pw_edge, tr_edge, err));
        free(tmp.coll);
        return HTA_OK;
    }
    R->present = 1;
    R->rank = hta_ctx_rank(ctx, k)->rank;
    R->origin = g->origin_ns;
    /* the run's start: its earliest source (no rule moves a source) */
    R->first = INT64_MAX;
    for (size_t v = 0; v < g->nnode; v++)
        if ((*s)->pred_off[v] == (*s)->pred_off[v + 1] && hta_cp_node_ts(g, v) + g->origin_ns < R->first)
            R->first = hta_cp_node_ts(g, v) + g->origin_ns;
    R->nev = g->nev;
    R->sync_calls = (*s)->sync_calls;
    R->sync_records = (*s)->sync_records;
    HTA_TRY(collectives(j, *s, R, pw_edge, tr_edge, err));
    R->nsteps = (*s)->nsteps;
    R->steps = malloc(((*s)->nsteps ? (*s)->nsteps : 1) * sizeof *R->steps);
    if (!R->steps) return hta_oom(err);
    memcpy(R->steps, (*s)->steps, (*s)->nsteps * sizeof *R->steps);
    if (j->want_tot) HTA_TRY(totals(j, *s, R, *tr_edge, err));
    if (!(R->skel = calloc(j->nscn, sizeof *R->skel))) return hta_oom(err);
    return HTA_OK;
}

hta_status sj_rank_keep(struct hta_job *j, hta_ctx *ctx, size_t k, size_t pos, hta_error *err) {
    sj_graph *kg = &j->graph[pos];
    hta_sim *s = NULL;
    uint32_t *pw_edge = NULL, *tr_edge = NULL;
    hta_status st = rank_info(j, ctx, k, pos, 0, 1, &s, &pw_edge, &tr_edge, err);
    if (!st && kg->s != s) st = hta_fail(err, HTA_EINVAL, "rank %d: its graph was not kept", (int)j->r[pos].rank);
    if (st) {
        free(pw_edge);
        free(tr_edge);
        sj_graph_put(j, pos, s);
        return st;
    }
    kg->pw_edge = pw_edge;
    kg->tr_edge = tr_edge;
    kg->info = 1;
    return HTA_OK;
}

hta_status sj_skeleton(struct hta_job *j, hta_ctx *ctx, size_t k, size_t pos, int revisit, hta_error *err) {
    sj_rank *R = &j->r[pos];
    hta_sim *s = NULL;
    uint32_t *pw_edge = NULL, *tr_edge = NULL, *off = NULL;
    const uint32_t *pw_e = NULL, *tr_e = NULL; /* pw_edge and tr_edge, or the kept graph's */
    int64_t *w = NULL, *dd = NULL; /* dd: skeleton_alone's times */
    uint64_t *hasout = NULL, *seen = NULL; /* skeleton_alone's bits per node */
    uint64_t *trmask = NULL;
    sj_chains own_ch = {0}; /* the fold where no graph is kept */
    lab_state L = {0};
    hta_status st = HTA_OK;
    sj_graph *kg = j->graph && j->graph[pos].info ? &j->graph[pos] : NULL;
    if (kg && kg->joined) {
        /* every skeleton pass comes before the paths' */
        st = hta_fail(err, HTA_EINVAL, "rank %d: its skeleton asked for after its paths; please report it", (int)R->rank);
        goto done;
    }
    if (kg) {
        /* kept since sj_rank_keep, with what it found: no context needed */
        s = kg->s;
        pw_e = kg->pw_edge;
        tr_e = kg->tr_edge;
    } else {
        HTA_TRY_GOTO(st, rank_info(j, ctx, k, pos, revisit, 0, &s, &pw_edge, &tr_edge, err), done);
        pw_e = pw_edge;
        tr_e = tr_edge;
    }
    if (!s->topo) HTA_TRY_GOTO(st, sim_topo(s, err), done);
    const hta_cp_graph *g = s->g;
    size_t ne = g->nedge ? g->nedge : 1;
    w = malloc(ne * sizeof *w);
    trmask = malloc((R->ncoll + 1) * sizeof *trmask);
    if (!w || !trmask) goto oom;
    /* A job of one rank matches none of its collectives: each keeps its own wait and its transfer, so the
     * rank's graph is its own schedule, every node one label (the rank's sources), nothing dropped and no
     * revisit; the replay's times are those of the labels' pass (an unmatched collective ends at its arrival
     * plus its own wait and the transfer, as the edges carry it here): skeleton_alone's. */
    int alone = j->nr == 1;
    sj_chains *ch = NULL;
    size_t nf = 0;
    if (alone) {
        size_t nb = g->nnode / 64 + 1;
        dd = malloc((g->nnode ? g->nnode : 1) * sizeof *dd);
        hasout = calloc(nb, sizeof *hasout);
        seen = malloc(nb * sizeof *seen);
        if (!dd || !hasout || !seen) goto oom;
        for (size_t i = 0; i < g->nedge; i++) hasout[g->edge[i].u / 64] |= 1ull << (g->edge[i].u % 64);
    } else {
        /* the passes run on the graph with its chains folded: a kept graph's folded once for every visit */
        ch = kg ? kg->ch : NULL;
        if (!ch) {
            if (kg && !(ch = calloc(1, sizeof *ch))) goto oom;
            if (!kg) ch = &own_ch;
            st = sj_chains_build(ch, R, s, pw_e, tr_e, err);
            if (st && kg) free(ch);
            if (st) goto done;
            if (kg) kg->ch = ch;
        }
        nf = ch->n + 1; /* the folded graph's nodes, and the run's end */
        L.off = malloc(nf * sizeof *L.off);
        L.cnt = malloc(nf * sizeof *L.cnt);
        L.left = malloc(nf * sizeof *L.left);
        L.seen = calloc(R->ncoll + 1, sizeof *L.seen);
        L.cok = malloc(R->ncoll + 1);
        L.dom_m = malloc(64 * 64 * sizeof *L.dom_m);
        if (!L.off || !L.cnt || !L.left || !L.seen || !L.cok || !L.dom_m) goto oom;
    }
    L.s = s;
    L.ch = ch;
    L.pw_e = pw_e;
    L.tr_e = tr_e;
    L.origin = g->origin_ns;
    for (size_t q = 0; q < j->nscn; q++) {
        sj_skel *sk = &R->skel[q];
        const sj_scn *sc = &j->scn[q];
        if (sk->done) continue;
        if (sj_skel_own(R, j->nscn, q)) goto oom; /* its arrays are made anew below */
        if (!sk->hits && !(sk->hits = calloc(sc->nrules + 1, sizeof *sk->hits))) goto oom;
        memset(sk->hits, 0, (sc->nrules + 1) * sizeof *sk->hits);
        /* the rules of each collective's transfer (the replay's): only theirs, not every edge's */
        memset(trmask, 0, (R->ncoll ? R->ncoll : 1) * sizeof *trmask);
        int pending = 0;
        HTA_TRY_GOTO(st, sj_weights(j, s, pos, q, w, sk->hits, tr_e, R->ncoll, trmask, &sk->changed, &pending, err),
                     done);
        /* kept only where they say more than the rank's own weights and no rule (most scenarios on most ranks) */
        free(sk->trw);
        free(sk->trmask);
        sk->trw = NULL, sk->trmask = NULL;
        int own = 0, any = 0;
        for (size_t c = 0; c < R->ncoll; c++) own |= w[tr_e[c]] != R->coll[c].tr, any |= trmask[c] != 0;
        if (own) {
            if (!(sk->trw = malloc(R->ncoll * sizeof *sk->trw))) goto oom;
            for (size_t c = 0; c < R->ncoll; c++) sk->trw[c] = w[tr_e[c]];
        }
        if (any) {
            if (!(sk->trmask = malloc(R->ncoll * sizeof *sk->trmask))) goto oom;
            memcpy(sk->trmask, trmask, R->ncoll * sizeof *trmask);
        }
        if (pending) continue; /* done after the factors (the revisit) */
        if (share_base(sk, &R->skel[0])) continue;
        if (!sk->ref && !(sk->ref = malloc((R->ncoll ? R->ncoll : 1) * sizeof *sk->ref))) goto oom;
        free(sk->a_off);
        free(sk->s_off);
        sk->a_off = malloc((R->ncoll + 1) * sizeof *sk->a_off);
        sk->s_off = malloc((2 * R->nsteps + 2) * sizeof *sk->s_off);
        if (!sk->a_off || !sk->s_off) goto oom;
        free(sk->pkey);
        free(sk->pdef);
        sk->pkey = NULL, sk->pdef = NULL, sk->npair = 0;
        if (alone) {
            /* the replay's wait of an unmatched collective: its own (no rule moves it) */
            for (size_t c = 0; c < R->ncoll; c++) w[pw_e[c]] = R->coll[c].pw;
            HTA_TRY_GOTO(st, skeleton_alone(R, s, pw_e, tr_e, w, hasout, dd, seen, sk, err), done);
            /* no drop: empty arrays, as the wire sends a skeleton's (NULL is another message there) */
            sk->pkey = malloc(sizeof *sk->pkey);
            sk->pdef = malloc(sizeof *sk->pdef);
            if (!sk->pkey || !sk->pdef) goto oom;
            sk->done = 1;
            continue;
        }
        L.w = w;
        for (size_t c = 0; c < R->ncoll; c++)
            L.cok[c] = w[pw_e[c]] >= 0 && w[tr_e[c]] >= 0 && R->coll[c].pw >= 0;
        sj_chains_weigh(ch, w);
        L.npool = 0;
        memset(L.cnt, 0, nf * sizeof *L.cnt);
        memset(L.off, 0, nf * sizeof *L.off);
        memset(L.seen, 0, (R->ncoll + 1) * sizeof *L.seen);
        L.ref = sk->ref;
        L.ref_given = sk->ref_given;
        if (!sk->keep) sk->keep = SJ_KEEP;
        L.keep = sk->keep;
        free(L.kbuf);
        free(L.freel);
        L.kbuf = malloc(L.keep * sizeof *L.kbuf);
        L.freel = malloc((L.keep + 1) * sizeof *L.freel);
        if (!L.kbuf || !L.freel) goto oom;
        memset(L.freel, 0xff, (L.keep + 1) * sizeof *L.freel);
        memcpy(L.left, ch->nsucc, nf * sizeof *L.left);
        if (L.keep > UINT8_MAX) {
            st = hta_fail(err, HTA_EINVAL, "rank %d: %zu labels a node; please report it", (int)R->rank, L.keep);
            goto done;
        }
        L.npair = 0;
        if (L.pk) memset(L.pk, 0, L.pcap * sizeof *L.pk);
        HTA_TRY_GOTO(st, label_pass(&L, err), done);
        /* the drops, packed for the check after the replay */
        sk->pkey = malloc((L.npair ? L.npair : 1) * sizeof *sk->pkey);
        sk->pdef = malloc((L.npair ? L.npair : 1) * sizeof *sk->pdef);
        if (!sk->pkey || !sk->pdef) goto oom;
        for (size_t i = 0; i < L.pcap; i++)
            if (L.pk[i]) sk->pkey[sk->npair] = L.pk[i], sk->pdef[sk->npair++] = L.pd[i];
        off = malloc((R->ncoll + 2 * R->nsteps + 2) * sizeof *off);
        if (!off) goto oom;
        HTA_TRY_GOTO(st, keep(&L, ch->knode, ch->nknode, sk, off, err), done);
        for (size_t c = 0; c <= R->ncoll; c++) sk->a_off[c] = off[c];
        for (size_t i = 0; i <= 2 * R->nsteps + 1; i++) sk->s_off[i] = off[R->ncoll + i];
        free(off);
        off = NULL;
        sk->done = 1;
    }
    goto done;
oom:
    st = hta_oom(err);
done:
    free(off);
    free(pw_edge);
    free(tr_edge);
    free(w);
    free(dd);
    free(hasout);
    free(seen);
    free(trmask);
    free(L.off);
    free(L.cnt);
    sj_chains_free(&own_ch);
    free(L.left);
    free(L.kbuf);
    free(L.freel);
    free(L.seen);
    free(L.cok);
    free(L.rv);
    free(L.dom_m);
    free(L.dom_off);
    free(L.dom_j);
    free(L.dom_d);
    free(L.pk);
    free(L.pd);
    free(L.pool);
    free(L.cand);
    sj_graph_put(j, pos, s);
    return st;
}
