/* `hta comms`: the command-line front of hta_comms (src/analysis/comms.c, docs/comms.md).  Runs rank by
 * rank: each rank's part (its calls, its GPU), reduced over the ranks into collectives, alltoallv_bytes and
 * comm_link. */
#include "cli/cli.h"
#include "hta/comms.h"

CLI_ANALYSIS(run, hta_comms_part)
CLI_REDUCE(reduce, hta_comms_reduce)

static int cmd_comms(int argc, char **argv) {
    hta_comms_opts o;
    hta_comms_opts_default(&o);
    int scale = o.scale_up;
    const cli_opt opts[] = {
        {"peak-link-gbps", CLI_DOUBLE, &o.peak_link_gbps, "G",
         "the link's peak GB/s per direction for link_peak_pct (default: the GPU's from the peak table)"},
        {"scale-up", CLI_INT, &scale, "N",
         "ranks one link domain holds (one node); larger groups get no link_peak_pct (default 8)"},
        {0},
    };
    cli_common c;
    int rc = cli_parse(argc, argv, "PATH [options]",
                       "What each collective moved and how fast: per operation, process group, group size,\n"
                       "dtype and message size (record_param_comms' args), the calls of every rank, the\n"
                       "kernels' time, algorithm and bus bandwidth as nccl-tests counts them, the time spent\n"
                       "waiting for the last rank (the same call matched across the ranks loaded), and the\n"
                       "share of the GPU's link peak (NVLink, Infinity Fabric, PCIe); all-to-allv byte\n"
                       "matrices where the trace records the splits (docs/comms.md).\n"
                       "Examples:\n"
                       "  hta comms run/                          # every rank of the job\n"
                       "  hta comms run/ --format csv > comms.csv\n"
                       "  hta comms run/ --peak-link-gbps 450     # your own link peak",
                       opts, 1, 1, &c);
    if (rc >= 0) return rc;
    if (o.peak_link_gbps < 0 || scale <= 0)
        return cli_usage("comms", "--peak-link-gbps must be > 0 and --scale-up >= 1");
    o.scale_up = scale;
    const cli_ranks r = {run, reduce, NULL, NULL, &o, 0};
    return cli_run_ranks(&c, argv[0], &r);
}

HTA_CLI_RANK_COMMAND(25, "comms", "collectives' algorithm and bus bandwidth, wait for the last rank, link share",
                     cmd_comms, &HTA_COLLECTIVES_TABLE, &HTA_ALLTOALLV_TABLE, &HTA_COMM_LINK_TABLE)
