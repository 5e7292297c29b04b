/* libFuzzer target: any bytes as a trace, through every writer of derived traces (src/rawjson's reader
 * and writer): counter tracks (counters --augment), the critical-path overlay and what-if trace, and
 * hta merge.  A file that loads must be rewritten or refused with a message, and whatever is written
 * must load again, with the rows it had (augment and merge copy every event): the rewriters read each
 * member as the loader does (escaped keys, duplicates: the last one). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hta/context.h"
#include "hta/counters.h"
#include "hta/cpath.h"
#include "hta/sim.h"
#include "hta/merge.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The rows of the file at path once loaded again, summed over its ranks; -1 when it does not load. */
static long rows_of(const char *path) {
    hta_ctx_opts o = {0};
    o.threads = 1;
    hta_ctx *c = NULL;
    hta_error err;
    if (hta_ctx_open(path, &o, &c, &err) != HTA_OK) {
        fprintf(stderr, "rewritten %s does not load: %s\n", path, err.msg);
        return -1;
    }
    long n = 0;
    for (size_t k = 0; k < hta_ctx_nranks(c); k++) n += (long)hta_ctx_rank(c, k)->n;
    hta_ctx_free(c);
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static char dir[64], in[96], out[96];
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/hta-fuzz-rw-%d", (int)getpid());
        mkdir(dir, 0700);
        snprintf(in, sizeof in, "%s/in.json", dir);
    }
    if (fuzz_to_file(in, data, size)) return 0;
    hta_ctx_opts o = {0};
    o.threads = 1;
    hta_ctx *ctx = NULL;
    hta_error err = {0};
    if (hta_ctx_open(in, &o, &ctx, &err) != HTA_OK) return 0;
    long rows = 0;
    for (size_t k = 0; k < hta_ctx_nranks(ctx); k++) rows += (long)hta_ctx_rank(ctx, k)->n;
    int single = hta_ctx_nranks(ctx) == 1 && !hta_ctx_rank(ctx, 0)->merged;

    /* counter tracks: every event copied, counters added */
    hta_result res;
    hta_result_init(&res);
    hta_counters_opts co;
    hta_counters_opts_default(&co);
    snprintf(out, sizeof out, "%s/aug", dir);
    if (single && hta_counters_augment(ctx, &co, out, &res, &err) == HTA_OK) {
        snprintf(out, sizeof out, "%s/aug/in_with_counters.json", dir);
        if (rows_of(out) != rows) abort();
        unlink(out);
    } else if (single && !err.msg[0]) {
        abort();
    }
    hta_result_free(&res);

    /* merge: one rank, every event placed again */
    hta_merge_opts mo = {HTA_ALIGN_NONE, NULL, 0, HTA_DRIFT_AUTO};
    hta_merge_plan plan;
    snprintf(out, sizeof out, "%s/merged.json", dir);
    if (single && hta_merge_plan_build(ctx, &mo, &plan, &err) == HTA_OK) {
        hta_merge_stats ms;
        if (hta_merge_write(&plan, out, 0, &ms, &err) == HTA_OK) {
            if (rows_of(out) != rows) abort();
            unlink(out);
        } else if (!err.msg[0]) {
            abort();
        }
        hta_merge_plan_free(&plan);
    }

    /* critical path: overlay and the what-if trace */
    hta_cpath_opts cpo;
    hta_cpath_opts_default(&cpo);
    hta_cp_graph *g = NULL;
    if (single && hta_cpath_build(ctx, 0, &cpo, &g, &err) == HTA_OK) {
        hta_cpath_overlay_opts oo = {1, 1, 0, NULL};
        char *written = NULL;
        if (hta_cpath_overlay(ctx, g, dir, &oo, &written, &err) == HTA_OK) {
            if (rows_of(written) < 0) abort();
            unlink(written);
        } else if (!err.msg[0]) {
            abort();
        }
        free(written);
        hta_cpath_rule r;
        if (hta_cpath_rule_parse(size & 1 ? "gpu=x0.5" : "cpu=x2", &r, &err)) abort();
        snprintf(out, sizeof out, "%s/whatif.json", dir);
        hta_sim *sim = NULL;
        if (hta_sim_build(ctx, 0, &sim, &err) == HTA_OK) {
            hta_result res;
            hta_result_init(&res);
            hta_sim_opts so = {&r, 1, NULL, 0, INT64_MIN, INT64_MAX, 0, 0, out};
            if (hta_sim_answer(ctx, sim, &so, &res, NULL, &err) == HTA_OK) {
                if (rows_of(out) != (long)hta_ctx_rank(ctx, 0)->n) abort();
                unlink(out);
            } else if (!err.msg[0]) {
                abort();
            }
            hta_result_free(&res);
            hta_sim_free(sim);
        } else if (!err.msg[0]) {
            abort();
        }
        hta_cpath_rule_free(&r);
        hta_cpath_free(g);
    }
    hta_ctx_free(ctx);
    return 0;
}
