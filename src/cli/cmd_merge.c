/* `hta merge DIR -o OUT`: the command-line front of src/merge/ (docs/merge.md).  Unlike the analysis
 * commands it runs in two phases, the alignment plan and then the writer that streams the files again,
 * and it times both for its notes.  The plan is made rank by rank (docs/scaling.md): each rank's context
 * gives its summary (hta_merge_summary: clock, span, anchors) and is freed, and the plan is fitted on the
 * summaries (hta_merge_plan_from_summary); where the rank plan cannot go file by file, on the whole
 * load.  The writer holds one rank's file at a time either way.  Under hta-mpi (several processes) every
 * process makes the summaries of its share; process 0 fits the plan and sends the summaries to all, each
 * process fits the same plan and writes its share's ranks to part files beside OUT, and process 0 joins
 * them in rank order: the file `hta merge` writes, byte for byte.  A FIFO or a device as OUT is written
 * by process 0 alone. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "hta/merge.h"

static int ends_with(const char *s, const char *suf) {
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* One run of the command: its options, and what its phases hand on. */
typedef struct merge_run {
    hta_merge_opts mo;
    const char *out; /* -o OUT */
    double t0;       /* the start, for the notes' times */
    char *sum;       /* hta-mpi: process 0's summaries packed for the others, when the processes write the parts */
    size_t sumlen;
} merge_run;

/* Prints the alignment table and the notes of a merged trace written from t1 to t2; frees plan. */
static int report(cli_common *c, const merge_run *m, hta_merge_plan *plan, const hta_merge_stats *ms, double t1, double t2) {
    hta_error err = {0};
    hta_status st;
    hta_result res;
    hta_result_init(&res);
    st = hta_merge_result(plan, &res, &err);
    if (!st) {
        hta_result_note(&res, "wrote %s: %llu events from %zu ranks + %llu added metadata events", m->out,
                        (unsigned long long)ms->events_in, plan->n, (unsigned long long)ms->events_added);
        hta_result_note(&res, "load + align %.2f s, write %.2f s (%.0f MB/s of input JSON)", t1 - m->t0, t2 - t1,
                        ms->bytes_in / 1e6 / (t2 - t1 > 1e-9 ? t2 - t1 : 1e-9));
        if (ms->ids_kept)
            hta_result_note(&res, "%llu flow/async ids were not numbers and are kept as written (may collide "
                            "across ranks)", (unsigned long long)ms->ids_kept);
    }
    hta_merge_plan_free(plan);
    return cli_finish(c, "merge", st, &res, &err);
}

/* Writes the merged trace with plan (freed) and prints the alignment table and the notes. */
static int write_merged(cli_common *c, const merge_run *m, hta_merge_plan *plan) {
    double t1 = now_s();
    hta_merge_stats ms;
    hta_error err = {0};
    hta_status st = hta_merge_write(plan, m->out, ends_with(m->out, ".gz"), &ms, &err);
    if (st) {
        hta_merge_plan_free(plan);
        return cli_fail("merge", &err);
    }
    return report(c, m, plan, &ms, t1, now_s());
}

/* Parts can be written beside OUT unless it is a FIFO or a device (written through, by process 0). */
static int parts_possible(const char *out) {
    struct stat sb;
    return stat(out, &sb) != 0 || S_ISREG(sb.st_mode);
}

/* The part of rank `rank` beside OUT: hidden, and no .json, so that no load of the folder takes it. */
static char *part_path(const char *out, int32_t rank) {
    const char *slash = strrchr(out, '/');
    int dl = slash ? (int)(slash - out) : 1;
    const char *dir = slash ? out : ".", *base = slash ? slash + 1 : out;
    size_t n = strlen(out) + 64;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%.*s/.%s.rank-%d.part", slash == out ? 0 : dl, dir, base, (int)rank);
    return p;
}

/* hta-mpi with several processes, after the summaries: every process takes part, whatever happened
 * before (rc: its status so far).  Process 0 sends the summaries (nothing when the run is over: a
 * failure, the whole load, or a FIFO as OUT written already); each process fits the plan from them and
 * writes the parts of its share; process 0 joins the parts, removes them, and prints. */
static int spread(cli_common *c, merge_run *m, int rc) {
    const cli_dist *d = cli_distributor;
    char *bytes = d->root ? m->sum : NULL;
    size_t len = d->root ? m->sumlen : 0;
    hta_error err = {0};
    hta_status st = d->bcast(&bytes, &len, &err);
    m->sum = NULL;
    if (st || !len) {
        free(bytes);
        return st ? 1 : rc;
    }
    double t1 = now_s();
    hta_result sum;
    hta_merge_plan plan;
    memset(&plan, 0, sizeof plan);
    st = hta_result_unpack(bytes, len, NULL, &sum, &err);
    free(bytes);
    if (!st) {
        st = hta_merge_plan_from_summary(&sum, &m->mo, &plan, &err);
        hta_result_free(&sum);
    }
    size_t n = plan.n, *which = NULL, nwhich = 0, failed = SIZE_MAX;
    int in_load = 0;
    cli_part *parts = calloc(n ? n : 1, sizeof *parts);
    char **paths = calloc(n ? n : 1, sizeof *paths);
    hta_rank_plan rp;
    memset(&rp, 0, sizeof rp);
    rp.files = calloc(n ? n : 1, sizeof *rp.files);
    if (!st && (!parts || !paths || !rp.files)) st = hta_oom(&err);
    for (size_t i = 0; i < n && !st; i++) {
        /* the share of the writing, by file size as for the summaries: the same in every process */
        struct stat sb;
        rp.files[i].rank = plan.r[i].rank;
        rp.files[i].path = plan.r[i].path;
        rp.files[i].bytes = stat(plan.r[i].path, &sb) == 0 ? (uint64_t)sb.st_size : 0;
        if (!(paths[i] = part_path(m->out, plan.r[i].rank))) st = hta_oom(&err);
    }
    rp.n = n;
    if (!st) st = d->share(&rp, &which, &nwhich, &err);
    for (size_t k = 0; k < nwhich && !st; k++) {
        size_t i = which[k];
        parts[i].done = 1;
        if ((st = hta_merge_write_part(&plan, i, paths[i], &parts[i].res, &err))) failed = i;
    }
    hta_status gs = d->gather(parts, n, cli_command_named("merge"), &st, &failed, &in_load, &err);
    if (gs && !st) st = gs;
    rc = st ? 1 : 0;
    if (d->root) {
        hta_result info;
        hta_result_init(&info);
        for (size_t i = 0; i < n && !st; i++) st = hta_result_append(&info, &parts[i].res, &err);
        hta_merge_stats ms;
        if (!st) st = hta_merge_join(&plan, m->out, ends_with(m->out, ".gz"), &info, (const char *const *)paths, &ms,
                                     &err);
        hta_result_free(&info);
        for (size_t i = 0; i < n && paths; i++)
            if (paths[i]) unlink(paths[i]);
        if (st) rc = cli_fail("merge", &err);
        else {
            rc = report(c, m, &plan, &ms, t1, now_s());
            memset(&plan, 0, sizeof plan); /* report freed it */
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (parts) hta_result_free(&parts[i].res);
        if (paths) free(paths[i]);
    }
    free(parts), free(paths), free(rp.files), free(which);
    hta_merge_plan_free(&plan);
    return rc;
}

/* The whole load: the plan from the loaded ranks, which are freed before the writer streams the files. */
static int whole(cli_common *c, const char *cmd, void *user) {
    (void)cmd;
    const merge_run *m = user;
    hta_ctx *ctx;
    int rc = cli_open(c, c->path, &ctx);
    if (rc) return rc;
    hta_merge_plan plan;
    hta_error err = {0};
    hta_status st = hta_merge_plan_build(ctx, &m->mo, &plan, &err);
    hta_ctx_free(ctx);
    if (st) return cli_fail("merge", &err);
    return write_merged(c, m, &plan);
}

/* one rank's summary */
static hta_status summarise(hta_ctx *ctx, const cli_common *c, void *user, hta_result *out, hta_error *err) {
    return hta_merge_summary(ctx, &((const merge_run *)user)->mo, out, err);
}

/* the plan from every rank's summary, then the file */
static int done(cli_common *c, const char *cmd, void *user, const hta_rank_plan *files, hta_result *all) {
    (void)files;
    (void)cmd;
    merge_run *m = user;
    hta_merge_plan plan;
    hta_error err = {0};
    hta_status st = hta_merge_plan_from_summary(all, &m->mo, &plan, &err);
    if (!st && cli_distributor && cli_distributor->nproc > 1 && parts_possible(m->out)) {
        /* the processes write the parts (spread): the summaries go to all of them */
        hta_merge_plan_free(&plan);
        st = hta_result_pack(all, &m->sum, &m->sumlen, &err);
        hta_result_free(all);
        return st ? cli_fail("merge", &err) : 0;
    }
    hta_result_free(all);
    if (st) return cli_fail("merge", &err);
    return write_merged(c, m, &plan);
}

/* The place of v among the words of one_of ("none, barrier, collective"), or -1 after saying on stderr that
 * --opt takes none of them. */
static int choice(const char *opt, const char *v, const char *one_of) {
    int i = 0;
    for (const char *w = one_of; *w; i++) {
        size_t n = strcspn(w, ",");
        if (strlen(v) == n && !strncmp(w, v, n)) return i;
        for (w += n; *w == ',' || *w == ' '; w++) {}
    }
    fprintf(stderr, "hta merge: unknown --%s '%s' (%s)\n", opt, v, one_of);
    return -1;
}

static int cmd_merge(int argc, char **argv) {
    const char *out = NULL, *align = "none", *barrier = NULL, *edge = "begin", *drift = "auto";
    const cli_opt opts[] = {
        {"output", CLI_STR, &out, "OUT",
         "merged trace to write (.json, or .json.gz / .gz for gzip; a FIFO or /dev/stdout is streamed); "
         "required; not a .json or .gz file inside DIR"},
        {"align", CLI_STR, &align, "METHOD", "none (default), barrier or collective"},
        {"barrier", CLI_STR, &barrier, "NAME", "barrier: the marker event's name (default: each ProfilerStep#N)"},
        {"barrier-edge", CLI_STR, &edge, "EDGE", "barrier: align the marker's begin (default) or end"},
        {"drift", CLI_STR, &drift, "MODE", "collective: fit a clock drift: auto (default: when significant), on, off"},
        {0},
    };
    /* -o is the short form of --output */
    char *args[256];
    if (argc > 255) argc = 255;
    for (int i = 0; i < argc; i++) args[i] = strcmp(argv[i], "-o") ? argv[i] : (char *)"--output";
    args[argc] = NULL;
    cli_common c;
    int rc = cli_parse(argc, args, "DIR -o OUT [options]",
                       "Merges the per-rank traces of DIR (Kineto or libhtatrace files) into one Chrome trace,\n"
                       "one set of process tracks per rank (pid = rank * 1000 + process number), every event\n"
                       "kept, clocks aligned by the chosen method.  Prints each rank's clock offset, drift and\n"
                       "the residual error of the alignment (see docs/merge.md).",
                       opts, 1, 1, &c);
    if (rc >= 0) return rc;
    hta_merge_opts mo = {0};
    /* merge copies every event of every file; a window (which rows the analyses see) has no meaning here */
    if (c.ctx.window.kind != HTA_WINDOW_NONE)
        return cli_usage("merge",
                         "--window does not apply: merge writes every event of every rank");
    if (!out) return cli_usage("merge", "-o OUT is required");
    static const hta_align_method methods[] = {HTA_ALIGN_NONE, HTA_ALIGN_BARRIER, HTA_ALIGN_COLLECTIVE};
    static const hta_drift_mode drifts[] = {HTA_DRIFT_AUTO, HTA_DRIFT_ON, HTA_DRIFT_OFF};
    int ai, ei, di;
    if ((ai = choice("align", align, "none, barrier, collective")) < 0 ||
        (ei = choice("barrier-edge", edge, "begin, end")) < 0 || (di = choice("drift", drift, "auto, on, off")) < 0)
        return EXIT_USAGE;
    mo.method = methods[ai];
    mo.barrier_end = ei; /* end: 1 */
    mo.drift = drifts[di];
    mo.barrier = barrier;

    merge_run m = {mo, out, now_s(), NULL, 0};
    const cli_ranks r = {summarise, NULL, done, whole, &m, 0};
    rc = cli_run_ranks(&c, "merge", &r);
    if (cli_distributor && cli_distributor->nproc > 1) rc = spread(&c, &m, rc);
    return rc;
}

HTA_CLI_RANK_COMMAND(60, "merge", "merge per-rank traces into one, clocks aligned (none, barrier, collective)",
                cmd_merge, &HTA_MERGE_ALIGNMENT_TABLE)
