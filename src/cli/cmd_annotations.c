/* `hta annotations`: the command-line front of hta_annotation_breakdown (src/analysis/annotations.c,
 * analyses.md §5.1).  Parses its options, then runs rank by rank: each rank's part, reduced (the notes
 * about the whole run), printed. */
#include <stdlib.h>

#include "cli/cli.h"
#include "hta/launch.h"

CLI_ANALYSIS(run_annotations, hta_annotation_breakdown_part)
CLI_REDUCE(reduce_annotations, hta_annotation_breakdown_reduce)

static int cmd_annotations(int argc, char **argv) {
    hta_annotation_opts o;
    hta_annotation_opts_default(&o);
    cli_list allow = {0};
    const cli_opt opts[] = {
        {"cpu", CLI_FLAG, &o.use_cpu_annotation, NULL, "CPU-side user_annotation ranges instead of gpu_user_annotation"},
        {"top", CLI_INT, &o.num_kernels, "N", "keep at most N names per rank, fold the rest into \"others\" (default 1000)"},
        {"duration-ratio", CLI_DOUBLE, &o.duration_ratio, "R",
         "with more than --top names, also fold names past this quantile of the running sum (default 0.8)"},
        {"allow", CLI_LIST, &allow, "TEXT", "never fold names containing TEXT (repeatable)"},
        {0},
    };
    cli_common c;
    int rc = cli_parse(argc, argv, "PATH [options]",
                           "GPU user-annotation breakdown (HTA's get_gpu_user_annotation_breakdown): the\n"
                           "durations of each annotation name, per rank. Rows are sorted by rank, then name.",
                       opts, 1, 1, &c);
    if (rc < 0) {
        o.allowlist = allow.v;
        o.nallow = allow.n;
        const cli_ranks r = {run_annotations, reduce_annotations, NULL, NULL, &o, 0};
        rc = cli_run_ranks(&c, argv[0], &r);
    }
    free(allow.v);
    return rc;
}

HTA_CLI_RANK_COMMAND(31, "annotations", "time per GPU user annotation (record_function ranges on the GPU)",
                cmd_annotations, &HTA_ANNOTATIONS_TABLE)
