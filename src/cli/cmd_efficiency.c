/* `hta efficiency`: the command-line front of hta_efficiency (src/analysis/efficiency.c,
 * docs/efficiency.md).  Runs rank by rank: each rank's part (its GPU, its operators' calls and kernel
 * time), reduced over the ranks into op_roofline and device. */
#include "cli/cli.h"
#include "hta/efficiency.h"

CLI_ANALYSIS(run, hta_efficiency_part)
CLI_REDUCE(reduce, hta_efficiency_reduce)

static int cmd_efficiency(int argc, char **argv) {
    hta_efficiency_opts o;
    hta_efficiency_opts_default(&o);
    const cli_opt opts[] = {
        {"peak-tflops", CLI_DOUBLE, &o.peak_tflops, "T",
         "peak TFLOP/s to measure against, for every dtype (default: the GPU's from the peak table)"},
        {"peak-tbps", CLI_DOUBLE, &o.peak_tbps, "B", "peak memory TB/s (default: the GPU's from the peak table)"},
        {"peak-vector-tflops", CLI_DOUBLE, &o.peak_vector_tflops, "V",
         "peak vector (non-tensor) TFLOP/s for norms and softmax, every dtype (default: the peak table's)"},
        {0},
    };
    cli_common c;
    int rc = cli_parse(argc, argv, "PATH [options]",
                       "How well each operator's kernels use the GPU: per operator and shape class, the FLOPs\n"
                       "and bytes its recorded shapes imply (record_shapes=True), the GPU time of the kernels\n"
                       "it launched, TFLOP/s and TB/s, compute- or memory-bound at the device's ridge point,\n"
                       "and the share of the roof it reaches; the device's peaks come from deviceProperties\n"
                       "through a table of known GPUs (docs/efficiency.md). Operators without shapes or\n"
                       "formula are listed with their time and a note.\n"
                       "Examples:\n"
                       "  hta efficiency trace.json.gz\n"
                       "  hta efficiency run/ --format csv > roofline.csv\n"
                       "  hta efficiency trace.json --peak-tflops 400 --peak-tbps 2.0",
                       opts, 1, 1, &c);
    if (rc >= 0) return rc;
    if (o.peak_tflops < 0 || o.peak_tbps < 0 || o.peak_vector_tflops < 0)
        return cli_usage("efficiency",
                         "--peak-tflops, --peak-tbps and --peak-vector-tflops must be > 0");
    const cli_ranks r = {run, reduce, NULL, NULL, &o, 0};
    return cli_run_ranks(&c, argv[0], &r);
}

HTA_CLI_RANK_COMMAND(24, "efficiency", "FLOP/s and bytes/s per operator against the GPU's peak", cmd_efficiency,
                &HTA_OP_ROOFLINE_TABLE, &HTA_DEVICE_PEAK_TABLE)
