/* libFuzzer target: any bytes, as a plain or gzipped trace file, must load
 * or fail with an error message; never crash, hang or leak. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hta/analysis.h"
#include "hta/context.h"
#include "hta/report.h"
#include "hta/sim.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static char path[64];
    if (!path[0]) snprintf(path, sizeof path, "/tmp/hta-fuzz-%d.json", (int)getpid());
    if (fuzz_to_file(path, data, size)) return 0;
    hta_ctx_opts o = {0};
    o.threads = 1;
    o.hta_compat = size & 1; /* both time origins and filter rules */
    hta_ctx *ctx = NULL;
    hta_error err;
    if (hta_ctx_open(path, &o, &ctx, &err) == HTA_OK) {
        /* exercise the derived view and a table over everything loaded */
        hta_result res;
        hta_result_init(&res);
        if (hta_info(ctx, &res, &err) == HTA_OK) {
            FILE *devnull = fopen("/dev/null", "w");
            if (devnull) {
                hta_result_write(devnull, &res, HTA_FMT_JSON);
                fclose(devnull);
            }
        }
        hta_result_free(&res);
        /* every analysis the report runs, on whatever the loader accepted */
        hta_result_init(&res);
        hta_report_opts ro;
        hta_report_opts_default(&ro);
        ro.top_kernels = 5;
        hta_error e2;
        if (hta_report(ctx, &ro, &res, &e2) != HTA_OK && !e2.msg[0]) abort();
        hta_result_free(&res);
        /* the simulation graph of the first rank: its answer with a what-if */
        hta_sim *sim = NULL;
        if (hta_ctx_nranks(ctx) && hta_sim_build(ctx, 0, &sim, &e2) == HTA_OK) {
            hta_cpath_rule r;
            hta_result_init(&res);
            if (hta_cpath_rule_parse("cpu=x0.5", &r, &e2) == HTA_OK) {
                hta_sim_opts so = {&r, 1, NULL, 0, INT64_MIN, INT64_MAX, 1, 3, NULL};
                hta_sim_answer(ctx, sim, &so, &res, NULL, &e2);
                hta_cpath_rule_free(&r);
            }
            hta_result_free(&res);
            hta_sim_free(sim);
        } else if (!e2.msg[0]) {
            abort();
        }
        /* ... and the same in bounded memory (rank skeletons, replay, paths), with a what-if */
        hta_cpath_rule jr;
        if (hta_cpath_rule_parse("gpu=x0.5", &jr, &e2) == HTA_OK) {
            hta_job_scenario sc = {&jr, 1, NULL, 1};
            hta_job_opts jo = {.scn = &sc, .nscn = 1, .paths = 1, .threads = 1};
            hta_job *job = NULL;
            hta_result_init(&res);
            if (hta_job_run_ctx(ctx, &jo, &job, &res, &e2) != HTA_OK && !e2.msg[0]) abort();
            hta_result_free(&res);
            hta_job_free(job);
            hta_cpath_rule_free(&jr);
        }
        hta_ctx_free(ctx);
    } else if (!err.msg[0]) {
        abort(); /* every failure must explain itself */
    }
    return 0;
}
