/* `hta counters`: the command-line front of hta_counters and, with --augment, hta_counters_augment
 * (src/analysis/counters.c, augment.c; analyses.md §10-§11).  Checks its options, then runs rank by
 * rank: each rank's part, reduced (the note about a run without memory bandwidth), printed; with
 * --augment each rank's file written and its row appended. */
#include <stdio.h>

#include "cli/cli.h"
#include "hta/counters.h"

typedef struct counters_args {
    hta_counters_opts o;
    const char *augment; /* --augment OUTDIR */
} counters_args;

static hta_status run_counters(hta_ctx *ctx, const cli_common *c, void *user, hta_result *out, hta_error *err) {
    const counters_args *a = user;
    if (a->augment) HTA_TRY(cli_check_derivable(ctx, "--augment", err));
    return a->augment ? hta_counters_augment(ctx, &a->o, a->augment, out, err) : hta_counters_part(ctx, &a->o, out, err);
}

static hta_status reduce_counters(const cli_common *c, void *user, hta_result *parts, hta_result *out, hta_error *err) {
    return hta_counters_reduce(&((const counters_args *)user)->o, parts, out, err);
}

static int cmd_counters(int argc, char **argv) {
    counters_args a = {0};
    hta_counters_opts_default(&a.o);
    int maxq = (int)a.o.max_queue_length;
    const cli_opt opts[] = {
        {"series", CLI_FLAG, &a.o.series, NULL, "also print the time series (queue_length_series, memory_bw_series)"},
        {"max-queue-length", CLI_INT, &maxq, "N", "queue length that counts as full (default 1024)"},
        {"augment", CLI_STR, &a.augment, "OUTDIR",
         "write each rank's trace with counter tracks to OUTDIR/<stem>_with_counters.json[.gz]"},
        {0},
    };
    cli_common c;
    int rc = cli_parse(argc, argv, "PATH [options]",
                       "Launch-queue length per stream and memory bandwidth per copy kind, per rank: summary\n"
                       "statistics, the time each stream spent with a full launch queue and, with --series,\n"
                       "the time series; --augment writes the traces with counter tracks.",
                       opts, 1, 1, &c);
    if (rc >= 0) return rc;
    if (maxq < 0) {
        fprintf(stderr, "hta counters: --max-queue-length must be >= 0\n");
        return EXIT_USAGE;
    }
    a.o.max_queue_length = maxq;
    /* --augment's rows are per rank: appended as they are */
    const cli_ranks r = {run_counters, a.augment ? NULL : reduce_counters, NULL, NULL, &a, 0};
    return cli_run_ranks(&c, argv[0], &r);
}

HTA_CLI_RANK_COMMAND(40, "counters", "queue length, memory bandwidth, time blocked on a full queue; --augment",
                cmd_counters, &HTA_QUEUE_SUMMARY_TABLE, &HTA_MEMBW_SUMMARY_TABLE, &HTA_QUEUE_BLOCKED_TABLE,
                &HTA_QUEUE_SERIES_TABLE, &HTA_MEMBW_SERIES_TABLE, &HTA_AUGMENTED_TABLE)
