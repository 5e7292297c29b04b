/* `hta events`: the command-line front of hta_events (src/analysis/events.c): the loaded rows
 * themselves, for looking at what the parser kept and derived. */
#include "cli/cli.h"

CLI_ANALYSIS(run_events, hta_events)

static int cmd_events(int argc, char **argv) {
    hta_events_opts eo;
    hta_events_opts_default(&eo);
    int limit = 0;
    const cli_opt opts[] = {
        {"cat", CLI_STR, &eo.cat, "CAT", "only events of this category (kernel, cpu_op, ...)"},
        {"name", CLI_STR, &eo.name, "TEXT", "only events whose name contains TEXT"},
        {"hta-table", CLI_FLAG, &eo.hta_table, NULL,
         "rows as HTA's analyses see them: profiler-step filter, times relative and rounded"},
        {"limit", CLI_INT, &limit, "N", "at most N rows per rank"},
        {0},
    };
    cli_common c;
    int rc = cli_parse(argc, argv, "PATH [options]",
                       "The kept events (rows) with exact nanosecond times and the links derived at load\n"
                       "(launch partner, call stack, iteration), given as event indexes (position in\n"
                       "traceEvents).",
                       opts, 1, 1, &c);
    if (rc >= 0) return rc;
    eo.limit = limit;
    const cli_ranks r = {run_events, NULL, NULL, NULL, &eo, 0};
    return cli_run_ranks(&c, argv[0], &r);
}

HTA_CLI_RANK_COMMAND(11, "events", "the events themselves: exact ns times, launch links, call stack", cmd_events,
                &HTA_EVENTS_TABLE)
