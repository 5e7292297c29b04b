/* `hta annotations`: the command-line front of hta_annotation_breakdown (src/analysis/annotations.c,
 * analyses.md §5.1).  Parses its options, then runs rank by rank: each rank's part, reduced (the notes
 * about the whole run), printed. */
#include "cli/cli.h"
#include "hta/launch.h"

/* Options live in file statics: the analysis callback of cli_run_analysis gets the context and the common
 * options only. */
static hta_annotation_opts g_o;
static cli_list g_allow;

/* the options as given; the statics are only read (the per-rank threads call run_annotations) */
static hta_annotation_opts given(void) {
    hta_annotation_opts o = g_o;
    o.allowlist = g_allow.v;
    o.nallow = g_allow.n;
    return o;
}

static hta_status run_annotations(hta_ctx *ctx, const cli_common *c, hta_result *out, hta_error *err) {
    hta_annotation_opts o = given();
    return hta_annotation_breakdown_part(ctx, &o, out, err);
}

static hta_status reduce_annotations(const cli_common *c, hta_result *parts, hta_result *out, hta_error *err) {
    hta_annotation_opts o = given();
    return hta_annotation_breakdown_reduce(&o, parts, out, err);
}

static int cmd_annotations(int argc, char **argv) {
    hta_annotation_opts_default(&g_o);
    static const cli_opt opts[] = {
        {"cpu", CLI_FLAG, &g_o.use_cpu_annotation, NULL, "CPU-side user_annotation ranges instead of gpu_user_annotation"},
        {"top", CLI_INT, &g_o.num_kernels, "N", "keep at most N names per rank, fold the rest into \"others\" (default 1000)"},
        {"duration-ratio", CLI_DOUBLE, &g_o.duration_ratio, "R",
         "with more than --top names, also fold names past this quantile of the running sum (default 0.8)"},
        {"allow", CLI_LIST, &g_allow, "TEXT", "never fold names containing TEXT (repeatable)"},
        {0},
    };
    return cli_run_reduced(argc, argv, "PATH [options]",
                           "GPU user-annotation breakdown (HTA's get_gpu_user_annotation_breakdown): the\n"
                           "durations of each annotation name, per rank. Rows are sorted by rank, then name.",
                           opts, run_annotations, reduce_annotations);
}

HTA_CLI_COMMAND(31, "annotations", "time per GPU user annotation (record_function ranges on the GPU)",
                cmd_annotations, &HTA_ANNOTATIONS_TABLE)
