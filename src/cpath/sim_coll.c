/* Each collective's identity as its row gives it (sim_internal.h, hta_sim_coll), read when the simulation
 * graph is built: what the job matches collectives across ranks by (job/skeleton.c) then needs the graph
 * alone, so that a graph outlives its rank's model (the report's parts and the job's kept graphs). */
#include <stdlib.h>
#include <string.h>

#include "cpath/sim_internal.h"

/* Entry i (0-based) of a list of ranks as PyTorch writes `Process Group Ranks` ("[0, 1, 2]"); -1 where the
 * list ends before it or is not plain numbers (a truncated list's "...", for one).  i < 0: the number of
 * entries of a whole list of plain numbers, else -1. */
static int32_t list_at(const char *s, int64_t i) {
    if (!s) return -1;
    while (*s == ' ' || *s == '[') s++;
    for (int64_t k = 0; k < INT32_MAX; k++) {
        char *e;
        long v = strtol(s, &e, 10);
        if (e == s || v < 0 || v > INT32_MAX) return -1;
        if (k == i) return (int32_t)v;
        for (s = e; *s == ' '; s++) {}
        if (*s != ',') return i < 0 && (*s == ']' || !*s) ? (int32_t)(k + 1) : -1;
        for (s++; *s == ' '; s++) {}
    }
    return -1;
}

/* A point-to-point kernel's direction and peer (shared/design/multirank-critical-path.md §3.3).  PyTorch's
 * saveNcclMeta names a send's peer in `Dst Rank` and a recv's in `Src Rank`, both global ranks; where they
 * are absent, `Rank` of a send or recv is the peer's rank in its group (record_param_comms is given the peer,
 * not the caller), which `Process Group Ranks` maps to a global rank; without `Rank`, a group of two ranks
 * (`Process Group Ranks`, one of them this rank `me`) leaves only the other.  The direction is
 * `Collective name` (send, recv; isend/irecv and a leading '_' as some wrappers write them), else the one
 * peer key present.  1 with *send (1 send, 0 recv) and *peer (-1: none named); 0: not a point-to-point op. */
static int p2p_of(const hta_trace *t, const hta_rank *r, uint32_t row, int32_t me, int *send, int32_t *peer) {
    const char *cn = hta_row_arg_text(t, r, row, HTA_ARG_COLLECTIVE_NAME, NULL);
    int64_t dst = hta_row_arg_int(t, r, row, HTA_ARG_DST_RANK, -1), src = hta_row_arg_int(t, r, row, HTA_ARG_SRC_RANK, -1);
    if (cn) {
        if (*cn == '_') cn++;
        if (*cn == 'i' && (!strcmp(cn + 1, "send") || !strcmp(cn + 1, "recv"))) cn++;
        if (!strcmp(cn, "send")) *send = 1;
        else if (!strcmp(cn, "recv")) *send = 0;
        else return 0;
    } else if ((dst >= 0) != (src >= 0)) {
        *send = dst >= 0;
    } else {
        return 0;
    }
    int64_t p = *send ? dst : src;
    if (p < 0 && cn) {
        const char *ranks = hta_row_arg_text(t, r, row, HTA_ARG_PG_RANKS, NULL);
        int64_t gr = hta_row_arg_int(t, r, row, HTA_ARG_PROCESS_RANK, -1);
        if (gr >= 0) {
            p = list_at(ranks, gr);
        } else if (list_at(ranks, -1) == 2) {
            int32_t a = list_at(ranks, 0), b = list_at(ranks, 1);
            p = a == me ? b : b == me ? a : -1;
        }
    }
    *peer = p >= 0 && p <= INT32_MAX ? (int32_t)p : -1;
    return 1;
}

hta_status sim_mid_map(const hta_cp_graph *g, uint32_t **out, hta_error *err) {
    size_t nx = g->nnode - g->nbase;
    uint32_t *m = *out = malloc((nx ? nx : 1) * sizeof *m);
    if (!m) return hta_oom(err);
    for (size_t v = 0; v < nx; v++) m[v] = UINT32_MAX;
    for (size_t i = 0; i < g->nedge; i++)
        if (g->edge[i].type == HTA_CP_OPERATOR && g->edge[i].u >= g->nbase)
            m[g->edge[i].u - g->nbase] = (uint32_t)i;
    return HTA_OK;
}

hta_status sim_coll_read(hta_sim *s, const uint32_t *edge, const int32_t *rows, size_t n, const hta_trace *t,
                         const hta_rank *r, hta_error *err) {
    hta_cp_graph *g = s->g;
    free(s->coll);
    s->ncoll = 0;
    if (!(s->coll = malloc((n ? n : 1) * sizeof *s->coll))) return hta_oom(err);
    int64_t cid_sym = t->arg_sym[HTA_ARG_COMMS_ID], pg_sym = t->arg_sym[HTA_ARG_PG_NAME];
    for (size_t i = 0; i < n; i++) {
        uint32_t row = (uint32_t)rows[i];
        hta_sim_coll *c = &s->coll[s->ncoll++];
        memset(c, 0, sizeof *c);
        c->edge = edge[i];
        c->pg = UINT32_MAX;
        const hta_arg *pga = pg_sym >= 0 ? hta_row_arg(r, row, pg_sym) : NULL;
        if (pga && pga->type == HTA_V_STR) {
            const char *pg = hta_sym(t->sym, pga->v.sym);
            if ((c->pg = hta_symtab_intern(g->sym, pg, strlen(pg))) == UINT32_MAX) return hta_oom(err);
        }
        c->seq = hta_row_arg_int(t, r, row, HTA_ARG_SEQ, -1);
        const hta_arg *cid = cid_sym >= 0 ? hta_row_arg(r, row, cid_sym) : NULL;
        if (cid && cid->type == HTA_V_INT) c->has_id = 1, c->comms_id = cid->v.i;
        int send = 0;
        int32_t peer = -1;
        c->peer = -1;
        if (p2p_of(t, r, row, r->rank, &send, &peer)) c->p2p = 1, c->send = (int8_t)send, c->peer = peer;
    }
    return HTA_OK;
}
