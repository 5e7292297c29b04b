/* Collectives' bandwidth (docs/comms.md): what each collective moved, how fast, and how long it waited.
 *
 *   hta_comms   table `collectives`: per collective class (operation, process group, group size, dtype,
 *               message size), the calls of every rank, the kernels' time, algorithm and bus bandwidth as
 *               nccl-tests counts them, the time spent waiting for the last rank to arrive (the same call
 *               matched across the ranks loaded) and the share of the GPU's link peak;
 *               `alltoallv_bytes`: the bytes each rank sent each peer in all-to-alls whose splits the trace
 *               records; `comm_link`: the link peak used (src/analysis/device_peaks.c).
 *
 * A call is one `record_param_comms` (PyTorch's record of every c10d collective) with the communication
 * kernels launched under it; its size comes from its args (`In/Out msg nelems`, `dtype`, `Group size`,
 * `Process Group Name`, `Seq`), or in older traces from the tensors recorded by it, the ProcessGroupNCCL range
 * under it (`nccl:all_reduce`) and the c10d operator above it.  A communication kernel without such a record
 * is a call of its own, its operation read from the kernel's name, with its time and a note.  Pure: reads the
 * trace, fills `out`, never prints.
 */
#ifndef HTA_COMMS_H
#define HTA_COMMS_H

#include "hta/analysis.h"
#include "hta/util.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hta_comms_opts {
    double peak_link_gbps; /* > 0: this GB/s per direction as the link peak (--peak-link-gbps) */
    int scale_up;          /* ranks one link domain holds (a node): larger groups get no link_peak_pct; 0: 8 */
} hta_comms_opts;
void hta_comms_opts_default(hta_comms_opts *o);

#define HTA_COLLECTIVES(T, C, D)                                                                            \
    T("collectives", "per collective class: calls of every rank, the kernels' time, algorithm and bus "      \
                     "bandwidth (nccl-tests), the wait for the last rank, the link's share; by time")        \
    C(HTA_COLL_OP, "op", STR, "",                                                                           \
      "allreduce, allgather, reduce_scatter, alltoall, broadcast, reduce, send, recv, barrier, gather, "      \
      "scatter, or the kernel's or record's own name")                                                       \
    C(HTA_COLL_PG, "process_group", STR, "", "Process Group Name (and Description); null: not recorded")    \
    C(HTA_COLL_GROUP, "group_size", INT, "", "ranks in the group (Group size; older traces: the world size)") \
    C(HTA_COLL_DTYPE, "dtype", STR, "", "element type as recorded (dtype, or the tensor's Input type)")      \
    C(HTA_COLL_MSG, "msg_bytes", INT, "B", "bytes of one call as nccl-tests counts them: the larger of "     \
                                           "input and output; null: not recorded")                         \
    C(HTA_COLL_CALLS, "calls", INT, "", "calls, all ranks")                                                 \
    C(HTA_COLL_RANKS, "ranks", INT, "", "ranks with calls of this class")                                   \
    C(HTA_COLL_TIME, "time_us", FLOAT, "us", "the calls' communication kernels' time, all ranks")           \
    C(HTA_COLL_ALGBW, "algbw_gbps", FLOAT, "GB/s", "msg_bytes x calls / time_us (10^9 bytes per second)")   \
    C(HTA_COLL_BUSBW, "busbw_gbps", FLOAT, "GB/s", "algbw x NCCL's factor: all-reduce 2(n-1)/n; all-gather, " \
                                                   "reduce-scatter, all-to-all (n-1)/n; others 1")          \
    C(HTA_COLL_WAIT, "wait_us", FLOAT, "us",                                                                \
      "of time_us, the part spent waiting for the last rank: per call matched across ranks, the last "      \
      "rank's kernel start minus this rank's, at most the kernel's time; null: no call matched")            \
    C(HTA_COLL_XFER_BUSBW, "busbw_xfer_gbps", FLOAT, "GB/s", "busbw over time_us - wait_us: the transfer's " \
                                                             "own rate, the wait taken out")                \
    C(HTA_COLL_LINK_PCT, "link_peak_pct", FLOAT, "%", "busbw_gbps of the link's peak per direction "         \
                                                      "(comm_link); null: link unknown or group beyond it")  \
    C(HTA_COLL_NOTE, "note", STR, "", "why a figure is missing, or how it was read; null when nothing to say")
HTA_TABLE_DECLARE(HTA_COLLECTIVES)

#define HTA_ALLTOALLV(T, C, D)                                                                              \
    T("alltoallv_bytes", "all-to-alls whose splits the trace records (In split size): the bytes each rank "  \
                         "sent each peer, all calls")                                                       \
    C(HTA_A2A_PG, "process_group", STR, "", "Process Group Name")                                           \
    C(HTA_A2A_SRC, "src_rank", INT, "", "the sending rank (the trace's rank)")                              \
    C(HTA_A2A_DST_INDEX, "dst_index", INT, "", "the receiver's position in the group")                      \
    C(HTA_A2A_DST, "dst_rank", INT, "", "the receiver's global rank (Process Group Ranks); null: not listed") \
    C(HTA_A2A_CALLS, "calls", INT, "", "calls with splits")                                                 \
    C(HTA_A2A_BYTES, "bytes", INT, "B", "bytes sent, all calls")
HTA_TABLE_DECLARE(HTA_ALLTOALLV)

#define HTA_COMM_LINK(T, C, D)                                                                              \
    T("comm_link", "the link peak link_peak_pct is measured against, per GPU model of the ranks")          \
    C(HTA_LINK_DEVICE, "device", STR, "", "deviceProperties' name of the ranks' GPU")                       \
    C(HTA_LINK_MODEL, "model", STR, "", "the peak table's entry, 'user' for --peak-link-gbps alone, or unknown") \
    C(HTA_LINK_RANKS, "ranks", INT, "", "ranks on this GPU")                                                \
    C(HTA_LINK_NAME, "link", STR, "", "NVLink, Infinity Fabric or PCIe generation")                         \
    C(HTA_LINK_GBPS, "peak_gbps", FLOAT, "GB/s", "the GPU's scale-up bandwidth per direction, all links")   \
    C(HTA_LINK_SCALE, "scale_up", INT, "", "largest group measured against it (ranks of one node)")         \
    C(HTA_LINK_SOURCE, "source", STR, "", "where the figure comes from")
HTA_TABLE_DECLARE(HTA_COMM_LINK)

hta_status hta_comms(hta_ctx *ctx, const hta_comms_opts *o, hta_result *out, hta_error *err);
/* Its two halves (docs/scaling.md, "Reduce"): per rank one row per call (its class, sequence number, kernel
 * start and ns) and the rank's GPU; the reduce matches the calls across ranks for the wait and sums the
 * classes (int64 ns and bytes). */
hta_status hta_comms_part(hta_ctx *ctx, const hta_comms_opts *o, hta_result *out, hta_error *err);
hta_status hta_comms_reduce(const hta_comms_opts *o, hta_result *parts, hta_result *out, hta_error *err);
/* part's calls folded into acc as they come, in rank order (the report's parts, docs/scaling.md): a call's
 * class and instance across ranks once each in acc, and per call 24 bytes; the reduce reads either. */
hta_status hta_comms_fold(hta_result *acc, hta_result *part, hta_error *err);

#ifdef __cplusplus
}
#endif
#endif
