/* Internal to comms: the tables the part gives the reduce (comms.c writes them, comms_reduce.c reads
 * them), and the NCCL factor the reduce needs. */
#ifndef HTA_COMMS_PART_H
#define HTA_COMMS_PART_H

#include "hta/comms.h"
#include "hta/efficiency.h"

/* The part's own tables (hta/table.h, "reducing parts"). */
#define HTA_COMMS_PART_CALLS(T, C, D)                                                                     \
    T("comms_part_calls", "per rank: one row per call of a collective, with what it moved and when")     \
    C(HTA_CPC_RANK, "rank", INT, "", "rank")                                                              \
    C(HTA_CPC_OP, "op", STR, "", "operation, as collectives shows it")                                    \
    C(HTA_CPC_PG, "pg", STR, "", "Process Group Name, null none")                                         \
    C(HTA_CPC_PGDESC, "pg_desc", STR, "", "Process Group Description, null none")                         \
    C(HTA_CPC_GROUP, "group_size", INT, "", "ranks in the group, -1 unknown")                             \
    C(HTA_CPC_DTYPE, "dtype", STR, "", "dtype as recorded, null none")                                    \
    C(HTA_CPC_MSG, "msg_bytes", INT, "B", "one call's bytes as nccl-tests counts them, -1 unknown")        \
    C(HTA_CPC_SEQ, "seq", INT, "", "Seq, -1 none")                                                        \
    C(HTA_CPC_START, "start_ns", INT, "ns", "its first kernel's start, the trace's clock")                \
    C(HTA_CPC_NS, "ns", INT, "ns", "its kernels' time")                                                   \
    C(HTA_CPC_NOTE, "note", STR, "", "how its size was read, or why it was not")                          \
    C(HTA_CPC_SPLIT, "in_split", STR, "", "In split size, null when absent or empty")                     \
    C(HTA_CPC_PGRANKS, "pg_ranks", STR, "", "Process Group Ranks, kept with a split only")                \
    C(HTA_CPC_IN_BYTES, "in_bytes", INT, "B", "the input's bytes, -1 unknown")
HTA_TABLE_DECLARE(HTA_COMMS_PART_CALLS)

#define HTA_COMMS_PART_DEV(T, C, D)                                                                       \
    T("comms_part_device", "per rank: its GPU as deviceProperties gives it")                              \
    HTA_DEVICE_PROPS_COLS(C, HTA_CPD)
HTA_TABLE_DECLARE(HTA_COMMS_PART_DEV)

/* algbw -> busbw for op on a group of n (nccl-tests' doc/PERFORMANCE.md); NAN: n unknown, or an op
 * nccl-tests does not measure. */
double comms_bus_factor(const char *op, int64_t n);
/* 1 for send, recv, sendrecv: matched across ranks by their peers, not here. */
int comms_is_p2p(const char *op);

#endif
