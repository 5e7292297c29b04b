/* `hta info`: the command-line front of hta_info (src/analysis/info.c): what was loaded, per rank.
 * No options of its own; runs rank by rank (cli_run_ranks), each rank's rows appended. */
#include <string.h>

#include "cli/cli.h"

/* Chrome's displayTimeUnit ("ms", the default, or "ns") only picks the unit Chrome's viewer displays:
 * ts and dur are microseconds whatever it says (Trace Event Format; TF§3, HTA ignores it), and so they are
 * read.  A file that asks for another unit gets a note, so that nobody reads its times as nanoseconds. */
static hta_status note_time_unit(hta_ctx *ctx, hta_result *out, hta_error *err) {
    for (size_t k = 0; k < hta_ctx_nranks(ctx); k++) {
        const hta_rank *r = hta_ctx_rank(ctx, k);
        const char *u = hta_rank_meta(r, "displayTimeUnit");
        /* one note per file: the ranks of a merged trace share theirs */
        if (!u || !strcmp(u, "\"ms\"") || (k && !strcmp(hta_ctx_rank(ctx, k - 1)->path, r->path))) continue;
        if (hta_result_note(out, "%s: displayTimeUnit %s sets Chrome's display unit only; ts and dur are read as "
                                 "microseconds, as the Trace Event Format defines them",
                            r->path, u))
            return hta_oom(err);
    }
    return HTA_OK;
}

/* A trace in PyTorch <= 1.9's names lists today's categories (docs/loading.md, "PyTorch 1.9 and older"):
 * the note says why they differ from the file's. */
static hta_status note_legacy(hta_ctx *ctx, hta_result *out, hta_error *err) {
    for (size_t k = 0; k < hta_ctx_nranks(ctx); k++) {
        const hta_rank *r = hta_ctx_rank(ctx, k);
        if (r->legacy_schema &&
            hta_result_note(out, "%s: written by PyTorch <= 1.9 (Operator, Runtime, Kernel, Memcpy, Memset, 'external "
                                 "id'): read as today's cpu_op, cuda_runtime, kernel, gpu_memcpy, gpu_memset, "
                                 "'External id' (--hta-compat: as written)",
                            r->path))
            return hta_oom(err);
    }
    return HTA_OK;
}

static hta_status run_info(hta_ctx *ctx, const cli_common *c, void *user, hta_result *out, hta_error *err) {
    HTA_TRY(hta_info(ctx, out, err));
    HTA_TRY(note_legacy(ctx, out, err));
    return note_time_unit(ctx, out, err);
}

HTA_CLI_PLAIN_COMMAND(10, "info", "what was loaded: ranks, events by category, streams, steps",
                      "What was loaded: per rank its file, events, threads, GPU streams, time span and\n"
                      "profiler steps; rows per category, in the file and in HTA's table (after its\n"
                      "profiler-step filter); rows and busy time per GPU stream.",
                      run_info, NULL, &HTA_INFO_RANKS_TABLE, &HTA_INFO_CATEGORIES_TABLE, &HTA_INFO_STREAMS_TABLE)
