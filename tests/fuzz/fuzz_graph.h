/* Shared by the critical-path fuzz targets: a small graph with hostile weights, built in memory through
 * the saved-graph reader (the one way to make a graph without a trace). */
#ifndef HTA_FUZZ_GRAPH_H
#define HTA_FUZZ_GRAPH_H

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "hta/cpath.h"

static void fg_u32(unsigned char **p, uint32_t v) {
    for (int i = 0; i < 4; i++) *(*p)++ = (unsigned char)(v >> (8 * i));
}
static void fg_u64(unsigned char **p, uint64_t v) {
    fg_u32(p, (uint32_t)v);
    fg_u32(p, (uint32_t)(v >> 32));
}

/* A chain of 4 events (8 nodes) on CPU and GPU, times across the whole range (|t| < 2^62 ns, a graph
 * file's limits) and weights whose path sums to 2^62 + 3 ns: any factor above 2 takes it past int64, in
 * store.c's layout.  Returns NULL if it does not load. */
static hta_cp_graph *fuzz_graph_hostile(void) {
    static unsigned char buf[4096];
    unsigned char *p = buf;
    const int64_t big = ((int64_t)1 << 62) - 1;
    memcpy(p, "HTACPATH", 8), p += 8;
    fg_u32(&p, 1), fg_u32(&p, 0), fg_u32(&p, 0);
    fg_u64(&p, 0); /* origin */
    const char *str[] = {"aten::mm", "cpu_op", "ncclDevKernel_AllReduce", "kernel", "gemm"};
    fg_u64(&p, 5), fg_u64(&p, 4), fg_u64(&p, 8), fg_u64(&p, 7), fg_u64(&p, 0);
    for (int i = 0; i < 5; i++) {
        fg_u32(&p, (uint32_t)strlen(str[i]));
        memcpy(p, str[i], strlen(str[i])), p += strlen(str[i]);
    }
    /* events: ts dur pid tid stream index name cat start end; times far apart, durations up to the limit */
    const int64_t ts[4] = {-big, -big / 2, 0, 1}, dur[4] = {big / 2, big / 2, 1, big - 1};
    const int64_t stream[4] = {-1, 7, 7, -1};
    const uint32_t name[4] = {0, 2, 4, 0}, cat[4] = {1, 3, 3, 1};
    for (int i = 0; i < 4; i++) {
        fg_u64(&p, (uint64_t)ts[i]), fg_u64(&p, (uint64_t)dur[i]), fg_u64(&p, 1), fg_u64(&p, 1);
        fg_u64(&p, (uint64_t)stream[i]), fg_u32(&p, (uint32_t)i), fg_u32(&p, name[i]), fg_u32(&p, cat[i]);
        fg_u32(&p, (uint32_t)(2 * i)), fg_u32(&p, (uint32_t)(2 * i + 1));
    }
    /* edges u v w attr type: each event's operator edge, then a chain between them */
    const int64_t w[7] = {big / 4, big / 4, 1, big / 4, 0, big / 4, 3}; /* the path: big + 4 */
    const uint32_t u[7] = {0, 2, 4, 6, 1, 3, 5}, v[7] = {1, 3, 5, 7, 2, 4, 6};
    const int32_t attr[7] = {0, 1, 2, 3, -1, -1, -1};
    const unsigned char type[7] = {HTA_CP_OPERATOR, HTA_CP_OPERATOR, HTA_CP_OPERATOR, HTA_CP_OPERATOR,
                                   HTA_CP_DEPENDENCY, HTA_CP_KK, HTA_CP_LAUNCH};
    for (int i = 0; i < 7; i++) {
        fg_u32(&p, u[i]), fg_u32(&p, v[i]), fg_u64(&p, (uint64_t)w[i]), fg_u32(&p, (uint32_t)attr[i]);
        *p++ = type[i];
    }
    char path[64];
    snprintf(path, sizeof path, "/tmp/hta-fuzz-graph-%d.cpg", (int)getpid());
    FILE *f = fopen(path, "wb");
    if (!f) return NULL;
    fwrite(buf, 1, (size_t)(p - buf), f);
    fclose(f);
    hta_cp_graph *g = NULL;
    hta_error err;
    if (hta_cpath_load(path, &g, &err) != HTA_OK) g = NULL;
    unlink(path);
    return g;
}

#endif
