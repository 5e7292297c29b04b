/* `hta cpu-ops`: the command-line front of hta_cpu_ops (src/analysis/cpu_ops.c, hta/cpuops.h): where
 * the CPU threads spend their time, per operator, annotation or libhtatrace scope, and per ProfilerStep.
 * Checks its options, then runs rank by rank: each rank's part, reduced (the note about a run without
 * operators), printed. */
#include "cli/cli.h"
#include "hta/cpuops.h"

CLI_ANALYSIS(run, hta_cpu_ops_part)
CLI_REDUCE(reduce, hta_cpu_ops_reduce)

static int cmd_cpu_ops(int argc, char **argv) {
    hta_cpu_ops_opts o;
    hta_cpu_ops_opts_default(&o);
    int args = 0, no_args = 0;
    const cli_opt opts[] = {
        {"top", CLI_INT, &o.top, "N", "cpu_op_time: the N names per rank with the most self time (default: all)"},
        {"step-top", CLI_INT, &o.step_top, "N", "cpu_step_ops: operators per step (default 5; 0: all)"},
        {"args", CLI_FLAG, &args, NULL,
         "scope_args for every rank (default: only files written by libhtatrace); re-reads the files"},
        {"no-args", CLI_FLAG, &no_args, NULL, "no scope_args, not even for libhtatrace files"},
        {0},
    };
    cli_common c;
    int rc = cli_parse(argc, argv, "PATH [options]",
                       "CPU operator time: per rank, every CPU operator (cpu_op) and user annotation\n"
                       "(record_function, libhtatrace scope) with its count, inclusive time and self time\n"
                       "(less the calls nested in it on its thread), most self time first; each\n"
                       "ProfilerStep's duration and the operators that dominate it; and the numeric args\n"
                       "of libhtatrace scopes. Durations are the nanoseconds as written.",
                       opts, 1, 1, &c);
    if (rc >= 0) return rc;
    if (args && no_args) return cli_usage("cpu-ops", "--args and --no-args exclude each other");
    if (args) o.args = 1;
    if (no_args) o.args = 0;
    const cli_ranks r = {run, reduce, NULL, NULL, &o, 0};
    return cli_run_ranks(&c, argv[0], &r);
}

HTA_CLI_RANK_COMMAND(34, "cpu-ops", "CPU time per operator, annotation or tracer scope, and per ProfilerStep",
                cmd_cpu_ops, &HTA_CPU_RANKS_TABLE, &HTA_CPU_OP_TIME_TABLE, &HTA_CPU_STEPS_TABLE, &HTA_CPU_STEP_OPS_TABLE,
                &HTA_SCOPE_ARGS_TABLE)
