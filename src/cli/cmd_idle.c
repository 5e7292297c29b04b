/* `hta idle`: the command-line front of hta_idle_breakdown (src/analysis/idle.c, analyses.md §7).
 * cli_run_analysis loads, runs and prints; the --streams list is read in the analysis callback. */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "hta/breakdown.h"

static hta_idle_opts g_o;
static int delay;
static const char *streams;

static hta_status run(hta_ctx *ctx, const cli_common *c, hta_result *out, hta_error *err) {
    int64_t sv[256];
    size_t n = 0;
    if (streams) {
        const char *p = streams;
        while (*p) {
            char *e;
            long long v = strtoll(p, &e, 10);
            if (e == p || n == sizeof sv / sizeof *sv)
                return hta_fail(err, HTA_EINVAL, "bad stream list '%s' (e.g. 7,20)", streams);
            sv[n++] = v;
            p = *e == ',' ? e + 1 : e;
            if (*e && *e != ',') return hta_fail(err, HTA_EINVAL, "bad stream list '%s' (e.g. 7,20)", streams);
        }
    }
    /* a copy: under the per-rank iteration this runs in several threads at once */
    hta_idle_opts o = g_o;
    o.consecutive_kernel_delay_ns = delay;
    o.streams = streams ? sv : NULL;
    o.nstreams = n;
    return hta_idle_breakdown(ctx, &o, out, err);
}

static int cmd_idle(int argc, char **argv) {
    hta_idle_opts_default(&g_o);
    delay = (int)g_o.consecutive_kernel_delay_ns;
    static const cli_opt opts[] = {
        {"consecutive-kernel-delay", CLI_INT, &delay, "NS",
         "gaps shorter than this are kernel_wait (default 30000 ns = HTA's 30, which it compares in us)"},
        {"stats", CLI_FLAG, &g_o.interval_stats, NULL, "also print interval_stats: statistics of the gaps per category"},
        {"streams", CLI_STR, &streams, "LIST", "only these stream ids, e.g. 7,20 (default: all)"},
        {0},
    };
    return cli_run_per_rank(argc, argv, "PATH [options]",
                            "Idle time breakdown per rank and GPU stream. Each gap before a kernel, memcpy or\n"
                            "memset is host_wait (the CPU launched it only after the stream had gone idle),\n"
                            "kernel_wait (shorter than --consecutive-kernel-delay) or other.",
                            opts, run);
}

HTA_CLI_COMMAND(21, "idle", "GPU idle time per stream: host wait, kernel wait, other", cmd_idle,
                &HTA_IDLE_TABLE, &HTA_IDLE_STATS_TABLE)
