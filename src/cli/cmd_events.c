/* `hta events`: the command-line front of hta_events (src/analysis/events.c): the loaded rows
 * themselves, for looking at what the parser kept and derived. */
#include "cli/cli.h"

static hta_events_opts eo;
static int limit;

static hta_status run_events(hta_ctx *ctx, const cli_common *c, hta_result *out, hta_error *err) {
    /* a copy: under the per-rank iteration this runs in several threads at once */
    hta_events_opts o = eo;
    o.limit = limit;
    return hta_events(ctx, &o, out, err);
}

static int cmd_events(int argc, char **argv) {
    hta_events_opts_default(&eo);
    static const cli_opt opts[] = {
        {"cat", CLI_STR, &eo.cat, "CAT", "only events of this category (kernel, cpu_op, ...)"},
        {"name", CLI_STR, &eo.name, "TEXT", "only events whose name contains TEXT"},
        {"hta-table", CLI_FLAG, &eo.hta_table, NULL,
         "rows as HTA's analyses see them: profiler-step filter, times relative and rounded"},
        {"limit", CLI_INT, &limit, "N", "at most N rows per rank"},
        {0},
    };
    return cli_run_per_rank(argc, argv, "PATH [options]",
                            "The kept events (rows) with exact nanosecond times and the links derived at load\n"
                            "(launch partner, call stack, iteration), given as event indexes (position in\n"
                            "traceEvents).",
                            opts, run_events);
}

HTA_CLI_COMMAND(11, "events", "the events themselves: exact ns times, launch links, call stack", cmd_events,
                &HTA_EVENTS_TABLE)
