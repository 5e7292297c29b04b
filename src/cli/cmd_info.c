/* `hta info`: the command-line front of hta_info (src/analysis/info.c): what was loaded, per rank.
 * No options of its own; cli_run_analysis loads, runs and prints. */
#include "cli/cli.h"

static hta_status run_info(hta_ctx *ctx, const cli_common *c, hta_result *out, hta_error *err) {
    return hta_info(ctx, out, err);
}

static int cmd_info(int argc, char **argv) {
    static const cli_opt opts[] = {{0}};
    return cli_run_analysis(argc, argv, "PATH [options]",
                            "What was loaded: per rank its file, events, threads, GPU streams, time span and\n"
                            "profiler steps; rows per category, in the file and in HTA's table (after its\n"
                            "profiler-step filter); rows and busy time per GPU stream.",
                            opts, run_info);
}

HTA_CLI_COMMAND(10, "info", "what was loaded: ranks, events by category, streams, steps", cmd_info,
                &HTA_INFO_RANKS_TABLE, &HTA_INFO_CATEGORIES_TABLE, &HTA_INFO_STREAMS_TABLE)
