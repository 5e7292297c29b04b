/* `hta report`: the command-line front of hta_report (src/report/report.c, docs/report.md), the
 * summary that runs every analysis.  It runs rank by rank (docs/scaling.md): each rank's context gives
 * its part (hta_report_part), and the report is reduced from the parts of all ranks
 * (hta_report_reduce), whose savings read the files once more, one rank's graph at a time; where the
 * plan cannot go file by file, on the whole load. */
#include "cli/cli.h"
#include "hta/cpuops.h"
#include "hta/efficiency.h"
#include "hta/report.h"

static hta_status run_report(hta_ctx *ctx, const cli_common *c, void *user, hta_result *out, hta_error *err) {
    return hta_report(ctx, user, out, err);
}

static int whole(cli_common *c, const char *cmd, void *user) { return cli_analyse(c, cmd, run_report, user); }

/* one rank's part: its context serves only the savings after it (kept, c->kept) or nothing (freed) */
static hta_status part(hta_ctx *ctx, const cli_common *c, void *user, hta_result *out, hta_error *err) {
    hta_report_opts o = *(const hta_report_opts *)user;
    o.release = 1;
    return hta_report_part(ctx, &o, out, err);
}

/* the report from every rank's part */
static int done(cli_common *c, const char *cmd, void *user, const hta_rank_plan *plan, hta_result *all) {
    hta_result res;
    hta_result_init(&res);
    hta_error err = {0};
    hta_report_src src = {NULL, plan, &c->ctx, c->job_dist, c->kept};
    hta_status st = hta_report_reduce(user, &src, all, &res, &err);
    hta_result_free(all);
    return cli_finish(c, cmd, st, &res, &err);
}

static int cmd_report(int argc, char **argv) {
    hta_report_opts o;
    hta_report_opts_default(&o);
    const cli_opt opts[] = {
        {"top", CLI_INT, &o.top_kernels, "N",
         "rows of every list: kernels in top_kernels, operators in op_roofline, collective classes in\n"
         "collectives, operators per rank in cpu_op_time (default 10)"},
        {"no-critical-path", CLI_OFF, &o.critical_path, NULL, "skip the critical path of each rank (faster)"},
        {"html", CLI_STR, &o.html, "OUT",
         "also write the report as one self-contained HTML page (charts, findings; no network)"},
        {0},
    };
    cli_common c;
    int rc = cli_parse(argc, argv, "PATH [options]",
                       "The holistic summary: runs every analysis that applies to the traces and says, per\n"
                       "rank, where GPU time went, the largest idle cause, how much communication overlaps\n"
                       "compute, launch-delay outliers, the kernels that dominate and the straggler ranks,\n"
                       "what bounds each rank's critical path, with the figures and what to look at next.\n"
                       "Ranks without GPU work (CPU-only traces, libhtatrace files) get the CPU side instead:\n"
                       "steps, the operators or scopes with the most self time, the critical path over the\n"
                       "CPU threads (the cpu_* tables, scope_args).  A folder of ranks is read one rank at a\n"
                       "time (--threads at once), so memory does not grow with the number of ranks.",
                       opts, 1, 1, &c);
    if (rc >= 0) return rc;
    c.follow = 1; /* hta-mpi: the savings' passes shared, every process following the root's job */
    c.fold = hta_report_fold; /* the kernels and operators summed per name as the ranks' parts come */
    const cli_ranks r = {part, NULL, done, whole, &o, o.critical_path};
    return cli_run_ranks(&c, argv[0], &r);
}

HTA_CLI_RANK_COMMAND(1, "report", "the holistic summary: findings per rank with figures, top kernels", cmd_report,
                &HTA_FINDINGS_TABLE, &HTA_REPORT_HEADLINE_TABLE, &HTA_OBS_TABLE, &HTA_REPORT_RANKS_TABLE, &HTA_REPORT_KERNEL_TYPES_TABLE,
                &HTA_TOP_KERNELS_TABLE, &HTA_OP_ROOFLINE_TABLE, &HTA_DEVICE_PEAK_TABLE, &HTA_CPU_RANKS_TABLE, &HTA_CPU_OP_TIME_TABLE, &HTA_CPU_STEPS_TABLE,
                &HTA_CPU_STEP_OPS_TABLE, &HTA_SCOPE_ARGS_TABLE, &HTA_REPORT_CPATH_TABLE,
                &HTA_GPU_METRICS_TABLE)
