/* Pieces shared by the report's files (not public): the findings table and
 * the CPU part (report_cpu.c), which covers the ranks HTA's GPU analyses say
 * nothing about: CPU-only traces and files written by libhtatrace. */
#ifndef HTA_REPORT_INTERNAL_H
#define HTA_REPORT_INTERNAL_H

#include "hta/cpath.h"
#include "hta/report.h"

/* ok is sticky, as stdio's error flag: the many rp_add_finding calls need no
 * check each; an out-of-memory is seen once, before the table is used. */
typedef struct findings {
    hta_table *t;
    int ok;
} findings;

/* A row of the findings table; rank < 0: all ranks. */
void rp_add_finding(findings *f, int64_t rank, const char *area, const char *detail, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* A name as a finding quotes it: as it is up to RP_NAME_MAX bytes, else its start, "..." and its end
 * (the full name is in the tables' csv and json), so that a kilobyte of C++ template arguments does not
 * become the finding. buf: at least RP_NAME_MAX + 1 bytes. */
#define RP_NAME_MAX 48
const char *rp_name(const char *s, char *buf);
/* Appends the formatted text to out (cap bytes, *len used) only when all of it fits: a list in a finding
 * ends after its last whole item, never inside a name or a number.  0 when it did not fit. */
int rp_append(char *out, size_t cap, size_t *len, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Above this many ranks the findings speak for all ranks at once (median,
 * extremes) and name individual ranks only where they stand out. */
#define RANKS_IN_FULL 8

typedef struct rp_cpu {
    size_t n;             /* ranks of the run */
    int32_t *rank;        /* rank of each index */
    hta_result res;       /* hta_cpu_ops' tables, every row */
    const hta_table *ranks, *ops, *steps, *step_ops, *args;
    unsigned char *on;    /* per rank index: the CPU part covers it */
    unsigned char *tracer;/* per rank index: written by libhtatrace */
    size_t n_on;
} rp_cpu;

/* Decides which ranks the CPU part covers (no GPU span in the report's
 * ranks table rk, or a libhtatrace file) and runs hta_cpu_ops when some are.
 * c is filled (n_on 0: nothing to do); free with rp_cpu_free. */
hta_status rp_cpu_run(hta_ctx *ctx, const hta_table *rk, rp_cpu *c, hta_error *err);
void rp_cpu_free(rp_cpu *c);
/* Findings about the steps and the operators (or scopes) of the covered
 * ranks: one per rank, or one for all when there are many. */
void rp_cpu_findings(findings *f, const rp_cpu *c);
/* The CPU tables of the covered ranks: cpu_ranks, cpu_op_time (top per rank),
 * cpu_steps, cpu_step_ops (step_top per step), scope_args (when it has rows). */
hta_status rp_cpu_tables(const rp_cpu *c, int top, int step_top, hta_result *out, hta_error *err);
/* The critical-path finding of a covered rank: its length, and the calls
 * that make it up, from the path's operator edges. */
void rp_cpu_path_finding(findings *f, const hta_cp_graph *g, const hta_cp_path *p, int32_t rank);

/* Findings and the gpu_metrics table from the metrics files beside the traces (DIR/metrics/, written by
 * `hta capture`; report_metrics.c); nothing when there are none. */
hta_status rp_metrics(hta_ctx *ctx, findings *f, hta_result *out, hta_error *err);

#endif
