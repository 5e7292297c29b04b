/* A rank's simulation graph for one of the job's passes (job/internal.h, sj_graph): taken from the
 * caller's context or built, and, in a job of no more ranks than threads, kept from the first pass to the
 * last instead of built for each.  Its own file, so that the skeleton and the paths, which both take
 * graphs, call neither each other nor back. */
#include "job/internal.h"

hta_status sj_graph_get(struct hta_job *j, hta_ctx *ctx, size_t k, size_t pos, int joined, int release,
                        hta_sim **out, hta_error *err) {
    sj_graph *c = j->graph ? &j->graph[pos] : NULL;
    if (c && c->s && (joined || !c->joined)) {
        *out = c->s;
        return HTA_OK;
    }
    /* a graph to keep takes its order later (sj_skeleton), once the rank's model may be gone */
    int keep = c && !c->s;
    *out = keep ? hta_ctx_take(ctx, k) : NULL; /* built by the caller (the report's part), or none */
    if (!*out && hta_ctx_rows_released(ctx, k))
        return hta_fail(err, HTA_EINVAL, "rank %d: no simulation graph (its build failed once its rows were read)",
                        (int)hta_ctx_rank(ctx, k)->rank);
    if (!*out) HTA_TRY(sim_build(ctx, k, !keep, keep && release, out, err));
    if (j->gpu_steps) (void)sim_gpu_steps(*out);
    if (keep) c->s = *out;
    return HTA_OK;
}

void sj_graph_put(struct hta_job *j, size_t pos, hta_sim *s) {
    if (!j->graph || j->graph[pos].s != s) hta_sim_free(s);
}
