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

/* The calls folded as they come (hta_comms_fold), so that what is kept per call is its class, its instance
 * across ranks, its start and its ns (24 bytes), not its row of strings: the classes once each (their calls
 * and ns summed, their ranks counted), the instances once each (their latest start, their ranks counted),
 * and a row per call naming both.  Key strings are kept with null as "" (the reduce compares them so), the
 * first call's nulls in a mask; last_rank: the rank counted last (a rank's calls come together). */
#define HTA_COMMS_FOLD_CLASSES(T, C, D)                                                                  \
    T("comms_fold_classes", "the calls' classes, each once, with their calls, ns and ranks")             \
    C(HTA_CFC_OP, "op", STR, "", "operation")                                                            \
    C(HTA_CFC_PG, "pg", STR, "", "Process Group Name")                                                   \
    C(HTA_CFC_PGDESC, "pg_desc", STR, "", "Process Group Description")                                   \
    C(HTA_CFC_DTYPE, "dtype", STR, "", "dtype as recorded")                                              \
    C(HTA_CFC_NOTE, "note", STR, "", "how its size was read, or why it was not")                         \
    C(HTA_CFC_GROUP, "group_size", INT, "", "ranks in the group, -1 unknown")                            \
    C(HTA_CFC_MSG, "msg_bytes", INT, "B", "one call's bytes, -1 unknown")                                \
    C(HTA_CFC_NULLS, "nulls", INT, "", "bit c: the first call's string column c (op 0 .. note 4) null")  \
    C(HTA_CFC_CALLS, "calls", INT, "", "calls")                                                          \
    C(HTA_CFC_NS, "ns", INT, "ns", "their kernels' time")                                                \
    C(HTA_CFC_RANKS, "ranks", INT, "", "ranks with calls of the class")                                  \
    C(HTA_CFC_LAST_RANK, "last_rank", INT, "", "the rank counted last")
HTA_TABLE_DECLARE(HTA_COMMS_FOLD_CLASSES)

#define HTA_COMMS_FOLD_INSTS(T, C, D)                                                                    \
    T("comms_fold_instances", "the calls' instances across ranks, each once, with their latest start")   \
    C(HTA_CFI_PG, "pg", STR, "", "Process Group Name")                                                   \
    C(HTA_CFI_OP, "op", STR, "", "operation")                                                            \
    C(HTA_CFI_SEQ, "seq", INT, "", "Seq, -1 none")                                                       \
    C(HTA_CFI_GROUP, "group_size", INT, "", "without a Seq: ranks in the group, else 0")                 \
    C(HTA_CFI_ORD, "ord", INT, "", "without a Seq: its place among its rank's calls of its kind, else 0") \
    C(HTA_CFI_LAST, "last_ns", INT, "ns", "the latest first kernel's start of its calls")                \
    C(HTA_CFI_RANKS, "ranks", INT, "", "ranks with a call of it")                                        \
    C(HTA_CFI_LAST_RANK, "last_rank", INT, "", "the rank counted last")
HTA_TABLE_DECLARE(HTA_COMMS_FOLD_INSTS)

#define HTA_COMMS_FOLD_CALLS(T, C, D)                                                                    \
    T("comms_fold_calls", "a row per call: its class and instance, its start and ns")                    \
    C(HTA_CFK_REF, "ref", INT, "", "row of comms_fold_classes << 32 | row of comms_fold_instances + 1 "  \
                                   "(0: point-to-point)")                                                \
    C(HTA_CFK_START, "start_ns", INT, "ns", "its first kernel's start, the trace's clock")               \
    C(HTA_CFK_NS, "ns", INT, "ns", "its kernels' time")
HTA_TABLE_DECLARE(HTA_COMMS_FOLD_CALLS)

/* algbw -> busbw for op on a group of n (nccl-tests' doc/PERFORMANCE.md); NAN: n unknown, or an op
 * nccl-tests does not measure. */
double comms_bus_factor(const char *op, int64_t n);
/* 1 for send, recv, sendrecv: matched across ranks by their peers, not here. */
int comms_is_p2p(const char *op);

#endif
