/* `hta idle`: the command-line front of hta_idle_breakdown (src/analysis/idle.c, analyses.md §7).
 * Runs rank by rank (cli_run_ranks); the --streams list is read once, after the options, and a bad one is
 * reported as the analysis's error (after the load, as it always was). */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "hta/breakdown.h"

typedef struct idle_args {
    hta_idle_opts o;
    int64_t sv[256]; /* storage of o.streams */
    const char *streams;
    int bad;         /* the --streams list is bad */
} idle_args;

/* "7,20" -> a->sv */
static void split_streams(idle_args *a) {
    size_t n = 0;
    for (const char *p = a->streams; p && *p;) {
        char *e;
        long long v = strtoll(p, &e, 10);
        if (e == p || n == sizeof a->sv / sizeof *a->sv || (*e && *e != ',')) {
            a->bad = 1;
            return;
        }
        a->sv[n++] = v;
        p = *e == ',' ? e + 1 : e;
    }
    a->o.streams = a->streams ? a->sv : NULL;
    a->o.nstreams = n;
}

static hta_status run(hta_ctx *ctx, const cli_common *c, void *user, hta_result *out, hta_error *err) {
    const idle_args *a = user;
    if (a->bad) return hta_fail(err, HTA_EINVAL, "bad stream list '%s' (e.g. 7,20)", a->streams);
    return hta_idle_breakdown(ctx, &a->o, out, err);
}

static int cmd_idle(int argc, char **argv) {
    idle_args a = {0};
    hta_idle_opts_default(&a.o);
    int delay = (int)a.o.consecutive_kernel_delay_ns;
    const cli_opt opts[] = {
        {"consecutive-kernel-delay", CLI_INT, &delay, "NS",
         "gaps shorter than this are kernel_wait (default 30000 ns = HTA's 30, which it compares in us)"},
        {"stats", CLI_FLAG, &a.o.interval_stats, NULL, "also print interval_stats: statistics of the gaps per category"},
        {"streams", CLI_STR, &a.streams, "LIST", "only these stream ids, e.g. 7,20 (default: all)"},
        {0},
    };
    cli_common c;
    int rc = cli_parse(argc, argv, "PATH [options]",
                            "Idle time breakdown per rank and GPU stream. Each gap before a kernel, memcpy or\n"
                            "memset is host_wait (the CPU launched it only after the stream had gone idle),\n"
                            "kernel_wait (shorter than --consecutive-kernel-delay) or other.",
                       opts, 1, 1, &c);
    if (rc >= 0) return rc;
    a.o.consecutive_kernel_delay_ns = delay;
    split_streams(&a);
    const cli_ranks r = {run, NULL, NULL, NULL, &a, 0};
    return cli_run_ranks(&c, argv[0], &r);
}

HTA_CLI_RANK_COMMAND(21, "idle", "GPU idle time per stream: host wait, kernel wait, other", cmd_idle,
                &HTA_IDLE_TABLE, &HTA_IDLE_STATS_TABLE)
