/* The report's part of collectives' bandwidth (docs/comms.md, "In the report"): the collectives table reduced
 * from the ranks' parts (hta_comms_part, run in part.c) into the report, and one observation on the class with
 * the most time: a late rank (most of its time waiting for the last rank: the straggler's, not the link's) or
 * the link (the transfer's own bus bandwidth against the link's peak).  The page draws the table (html.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "hta/comms.h"
#include "report/internal.h"

hta_status rp_comms_reduce(hta_result *all, hta_result *cr, hta_error *err) {
    hta_comms_opts co;
    hta_comms_opts_default(&co);
    /* the parts' notes are the report's already: the reduce's copies are dropped with cr */
    return hta_comms_reduce(&co, all, cr, err);
}

hta_status rp_comms(hta_result *cr_, findings *f, int top, hta_result *out, hta_error *err) {
    hta_result cr = *cr_;
    hta_result_init(cr_);
    hta_table *t = NULL;
    hta_status st = hta_result_take(&cr, &HTA_COLLECTIVES_TABLE, &t, err);
    if (st || !t || !t->nrows) goto done;
    /* the class with the most time (the table is by time) */
    double time = hta_table_get_float(t, 0, HTA_COLL_TIME), wait = hta_table_get_float(t, 0, HTA_COLL_WAIT);
    double bus = hta_table_get_float(t, 0, HTA_COLL_XFER_BUSBW), link = hta_table_get_float(t, 0, HTA_COLL_LINK_PCT);
    const char *op = hta_table_get_str(t, 0, HTA_COLL_OP), *pg = hta_table_get_str(t, 0, HTA_COLL_PG);
    char nb[RP_NAME_MAX + 1], what[160] = "";
    if (time > 0 && !isnan(wait) && wait > 0.5 * time)
        snprintf(what, sizeof what, "; %.0f%% of it waiting for the last rank: a late rank, not the link",
                 100 * wait / time);
    else if (!isnan(bus) && !isnan(link))
        snprintf(what, sizeof what, "; its transfer runs at %.1f GB/s bus bandwidth, %.0f%% of the link's peak", bus,
                 link);
    else if (!isnan(bus))
        snprintf(what, sizeof what, "; its transfer runs at %.1f GB/s bus bandwidth", bus);
    rp_add_finding(f, -1, "collectives",
                   "a late rank: see the straggler finding and `hta stragglers`; a slow link: fewer, larger messages, "
                   "the topology (NCCL_ALGO, NCCL_PROTO); see `hta comms`",
                   "%s%s%s takes the most collective time (%.0f us, all ranks)%s", op ? op : "?", pg ? " on " : "",
                   pg ? rp_name(pg, nb) : "", time, what);
    hta_table *h = rp_table_head(t, (size_t)top); /* the classes with the most time */
    if (!h) st = hta_oom(err);
    else if (hta_result_add(out, h)) hta_table_free(h), st = hta_oom(err);
done:
    hta_table_free(t);
    hta_result_free(&cr);
    return st;
}
