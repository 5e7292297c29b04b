/* HTA's call graph over a view (TF§14.1). */
#include <stdlib.h>
#include <string.h>

#include "analysis/callgraph.h"

/* Kernels hang under their launch when the kernel is on a stream > 0 and the
 * launch is a CPU row of the graph (HTA's get_cpu_gpu_correlation). */
int32_t hta_cgraph_kernel_parent(const hta_rank *r, const hta_cgraph *g, uint32_t i) {
    if (hta_row_stream(r, i) <= 0) return -1;
    int32_t p = r->partner[i];
    if (p < 0 || g->vpos[p] < 0 || hta_row_stream(r, (size_t)p) != -1 || g->depth[p] < 0) return -1;
    return p;
}

hta_status hta_cgraph_build(const hta_view *v, hta_arena *a, hta_cgraph *g, hta_error *err) {
    const hta_rank *r = v->r;
    size_t n = r->n, nt = r->nthreads;
    memset(g, 0, sizeof *g);
    hta_arena_mark m = hta_arena_save(a);
    g->vpos = HTA_ANEW(a, int32_t, n);
    g->depth = HTA_ANEW(a, int32_t, n);
    g->top = HTA_ANEW(a, int32_t, n);
    unsigned char *flags = hta_arena_calloc(a, nt ? nt : 1, 1); /* 1: a stream <= 0, 2: a pid != 0, 4: a tid != 0 */
    if (!g->vpos || !g->depth || !g->top || !flags) {
        hta_arena_reset(a, m);
        memset(g, 0, sizeof *g);
        return hta_oom(err);
    }
    for (size_t i = 0; i < n; i++) g->vpos[i] = -1, g->depth[i] = -1, g->top[i] = -2;
    for (size_t k = 0; k < v->n; k++) {
        uint32_t i = v->row[k];
        g->vpos[i] = (int32_t)k;
        const hta_thread *th = hta_row_thread(r, i);
        flags[r->thread[i]] |= (unsigned char)((hta_row_stream(r, i) <= 0) | (th->pid != 0) << 1 | (th->tid != 0) << 2);
    }
    /* a (pid, tid) group is a GPU group (no call stack) when all its streams
     * are > 0, or all its pids or all its tids are 0 */
    for (size_t k = 0; k < v->n; k++) {
        uint32_t i = v->row[k];
        if (hta_row_stream(r, i) == -1 && flags[r->thread[i]] == 7) g->depth[i] = r->depth[i];
    }
    for (size_t k = 0; k < v->n; k++) {
        uint32_t i = v->row[k];
        int32_t p = hta_cgraph_kernel_parent(r, g, i);
        if (p >= 0) g->depth[i] = g->depth[p] + 1;
    }
    return HTA_OK;
}

/* Ancestor of CPU row i at depth d (or i itself), memoised in g->top. */
int32_t hta_cgraph_top(const hta_rank *r, hta_cgraph *g, uint32_t i, int32_t d) {
    if (g->top[i] != -2) return g->top[i];
    /* walk up to a known answer, then fill the path */
    uint32_t j = i;
    int32_t ans;
    for (;;) {
        if (g->top[j] != -2) {
            ans = g->top[j];
            break;
        }
        if (g->depth[j] < d) {
            ans = -1;
            break;
        }
        if (g->depth[j] == d) {
            ans = (int32_t)j;
            break;
        }
        int32_t p = r->parent[j];
        if (p < 0 || g->vpos[p] < 0) {
            ans = -1;
            break;
        }
        j = (uint32_t)p;
    }
    for (uint32_t k = i; g->top[k] == -2;) {
        g->top[k] = ans;
        if ((int32_t)k == ans || g->depth[k] <= d) break;
        int32_t p = r->parent[k];
        if (p < 0) break;
        k = (uint32_t)p;
    }
    return ans;
}

