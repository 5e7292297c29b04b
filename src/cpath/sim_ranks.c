/* The rows of the job's tables (--all-ranks): each collective's waits and last arriver, the delay each rank
 * caused the others per step (blame), and where the job's critical path changes rank (hops).  The bounded job
 * engine (job/passes.c) finds the figures; here they become rows, in one format. */
#include <stdlib.h>
#include <string.h>

#include "cpath/sim_internal.h"
#include "hta/util.h"
#include "hta/vocab.h"

HTA_TABLE_DEFINE(HTA_SIM_COLL);
HTA_TABLE_DEFINE(HTA_SIM_BLAME);
HTA_TABLE_DEFINE(HTA_SIM_HOPS);

static double us(int64_t ns) { return (double)ns / 1000.0; }

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

typedef sim_bl bl;

HTA_QSORT_CMP(cmp_bl, bl, HTA_CMP3(x->step, y->step, y->caused, x->caused, x->rank, y->rank))

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
