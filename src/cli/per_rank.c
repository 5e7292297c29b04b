/* The per-rank iteration of the command line (cli.h): commands whose answer for a rank depends on that
 * rank alone open no context of all ranks; hta_ctx_each_rank gives each rank a context of its own (at most
 * --threads alive), and the results are appended in rank order as they come (a rank's result waits only for
 * those before it: the parts of many ranks are not held apart, issue 36) and printed as one.  Under hta-mpi
 * (cli_distributor) each process visits its share of the files and the root gathers the parts.  Anything
 * the plan cannot take one file at a time (hta/trace.h) runs whole.  A reduced command's parts are reduced
 * after they are put together (appended, or folded by the command's fold: the same on the root of hta-mpi and
 * on the whole load's part), on the whole load's part too. */
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "hta/util.h"

const cli_dist *cli_distributor;

int cli_is_per_rank(const char *name) {
    const cli_command *c = cli_command_named(name);
    return c && c->per_rank;
}

typedef struct run {
    const cli_common *c;
    const cli_ranks *r;
    cli_part *parts;
    /* the parts appended to all as they come, in rank order (not under hta-mpi, whose root gathers them): a
     * part of its own holds a block per column and per table, which appended rows do not (the report on 256
     * generated ranks: 33 against 23 MB with one thread) */
    int running;
    pthread_mutex_t mu;
    unsigned char *fin;
    size_t next, n, ndone;
    hta_result all;
    hta_status ast;
    hta_error aerr;
} run;

/* a rank's result into the ranks' before it: the command's fold, else appended */
static hta_status put(const cli_common *c, hta_result *all, hta_result *part, hta_error *err) {
    return c->fold ? c->fold(all, part, err) : hta_result_append(all, part, err);
}

static hta_status one_rank(hta_ctx *ctx, size_t i, void *user, hta_error *err) {
    run *u = user;
    u->parts[i].done = 1;
    hta_status st = u->r->fn(ctx, u->c, u->r->user, &u->parts[i].res, err);
    if (u->running) {
        pthread_mutex_lock(&u->mu);
        u->fin[i] = 1;
        for (; u->next < u->n && u->fin[u->next] && !u->ast; u->next++) {
            u->ndone++;
            u->ast = put(u->c, &u->all, &u->parts[u->next].res, &u->aerr);
            hta_result_free(&u->parts[u->next].res);
        }
        pthread_mutex_unlock(&u->mu);
    }
    return st;
}

static void warn_at(void *user, size_t i, const char *msg) {
    cli_part *p = &((run *)user)->parts[i];
    (void)hta_strlist_add(&p->warn, &p->nwarn, "%s", msg); /* lost to a full memory: the load reports that */
}

static void parts_free(cli_part *parts, size_t n) {
    for (size_t i = 0; parts && i < n; i++) {
        hta_result_free(&parts[i].res);
        for (size_t w = 0; w < parts[i].nwarn; w++) free(parts[i].warn[w]);
        free(parts[i].warn);
    }
    free(parts);
}

/* The whole load of a reduced command: the part of every rank, its notes made unique as the appended
 * parts' are (hta_result_append), then reduced. */
static int whole_reduced(cli_common *c, const char *cmd, const cli_ranks *r) {
    hta_ctx *ctx;
    int rc = cli_open(c, c->path, &ctx);
    if (rc) return rc;
    hta_result part, all, res;
    hta_result_init(&part);
    hta_result_init(&all);
    hta_result_init(&res);
    hta_error err = {0};
    hta_status st = r->fn(ctx, c, r->user, &part, &err);
    hta_ctx_free(ctx);
    if (!st) st = put(c, &all, &part, &err);
    if (!st) st = r->reduce(c, r->user, &all, &res, &err);
    hta_result_free(&part);
    hta_result_free(&all);
    return cli_finish(c, cmd, st, &res, &err);
}

static int whole(cli_common *c, const char *cmd, const cli_ranks *r) {
    /* under hta-mpi a run that cannot be shared is the root's alone */
    if (cli_distributor && !cli_distributor->root) return 0;
    if (r->done) return r->whole(c, cmd, r->user);
    return r->reduce ? whole_reduced(c, cmd, r) : cli_analyse(c, cmd, r->fn, r->user);
}

int cli_plan(const cli_common *c, hta_rank_plan *plan) {
    memset(plan, 0, sizeof *plan);
    const char *env = getenv("HTA_PER_RANK");
    if (!hta_ctx_per_rank_ok(&c->ctx) || (env && !strcmp(env, "0"))) return 0;
    hta_error err = {0};
    /* a plan that cannot be made: the whole load fails the same way, with the same message */
    if (hta_rank_plan_make(c->path, c->ctx.ranks, c->ctx.nranks, plan, &err) || !plan->per_rank) return 0;
    /* More files than threads: each file's model and graph come and go while the ranks' results (the report's
     * parts, the job's skeletons) stay.  glibc raises its mmap threshold to the largest block freed (a model's
     * 1 MB arena blocks), so a file's arrays below that would come from the heap, between the results kept,
     * and their pages stay resident after them (the report on 256 generated ranks: 34 against 20 MB with one
     * thread).  A fixed threshold (glibc's default, 128 KB) keeps them out of the heap: freed, they go back.
     * Not where each thread has its file to itself: there the phases reuse the heap's pages (a fixed threshold
     * maps every large array afresh, 18% more CPU for the report on one 250 MB rank, in page faults), and the
     * report gives the holes back between its phases instead (src/report/part.c).  There glibc's threshold
     * stops at 32 MB, so a rank's largest arrays (its graph's edges, 21 MB and more on a 250 MB rank, grown by
     * doubling; each scenario's weights) were mapped and zeroed afresh at every pass: fixed at 256 MB, with
     * the heap's top kept as long, they come from pages already faulted in (the report on 2 x 250 MB ranks:
     * 1.60 -> 1.55 s CPU; the report gives the holes back between its phases as before). */
    if (plan->n > hta_threads(c->ctx.threads)) {
        mallopt(M_MMAP_THRESHOLD, 128 << 10);
    } else {
        mallopt(M_MMAP_THRESHOLD, 256 << 20);
        mallopt(M_TRIM_THRESHOLD, 256 << 20);
    }
    return 1;
}

int cli_run_ranks(cli_common *c, const char *cmd, const cli_ranks *r) {
    hta_rank_plan plan;
    if (!cli_plan(c, &plan)) {
        hta_rank_plan_free(&plan);
        return whole(c, cmd, r);
    }
    hta_error err = {0};
    int root = !cli_distributor || cli_distributor->root;
    /* a job the root's done may run, which every other process follows (cli_common.follow) */
    int announced = 0, gathered = 0;
    const cli_dist *cd = c->follow ? cli_distributor : NULL;
    hta_job_dist jd = {cd && cd->root, cd ? cd->nproc : 1, cd ? cd->share : NULL, cd ? cd->allgather : NULL,
                       &announced};
    if (root && !c->quiet)
        for (size_t i = 0; i < plan.nwarnings; i++) fprintf(stderr, "hta: warning: %s\n", plan.warnings[i]);
    run u = {c, r, calloc(plan.n ? plan.n : 1, sizeof(cli_part)), 0, PTHREAD_MUTEX_INITIALIZER, NULL, 0, plan.n, 0,
             {0}, HTA_OK, {0}};
    hta_result_init(&u.all);
    u.running = !cli_distributor && (u.fin = calloc(plan.n ? plan.n : 1, 1)) != NULL;
    int rc = 1;
    size_t *which = NULL, nwhich = 0, failed = SIZE_MAX;
    int in_load = 0;
    hta_status st = HTA_OK;
    if (!u.parts) {
        st = hta_oom(&err);
        goto out;
    }
    if (cli_distributor && (st = cli_distributor->share(&plan, &which, &nwhich, &err))) goto out;
    /* files the command's done reads again, no more than the threads: every context would be alive at once in
     * that pass anyway, so each stays from its part to it instead of being read and parsed twice */
    if (r->keep && !cli_distributor && plan.n <= hta_threads(c->ctx.threads) &&
        !(c->kept = calloc(plan.n ? plan.n : 1, sizeof *c->kept))) {
        st = hta_oom(&err);
        goto out;
    }
    hta_each_opts eo = {which, nwhich, c->ctx.threads, warn_at, c->kept};
    st = hta_ctx_each_rank(&plan, &c->ctx, &eo, one_rank, &u, &failed, &in_load, &err);
    if (cli_distributor) {
        hta_status gs = cli_distributor->gather(u.parts, plan.n, cli_command_named(cmd), &st, &failed, &in_load,
                                                &err);
        if (gs && !st) st = gs, in_load = 0;
        gathered = 1;
        if (!root) {
            if (cd) {
                /* the root's job, this process's share of its passes (the root tells its failures) */
                size_t jf;
                int jl;
                hta_error je = {0};
                (void)hta_job_follow(&plan, &c->ctx, &jd, &jf, &jl, &je);
            }
            rc = st ? 1 : 0;
            goto out;
        }
    }
    /* warnings first, rank by rank, as the whole load gives them before any analysis */
    for (size_t i = 0; i < plan.n && !c->quiet; i++)
        for (size_t w = 0; w < u.parts[i].nwarn; w++) fprintf(stderr, "hta: warning: %s\n", u.parts[i].warn[w]);
    if (st) goto out;
    hta_result all = u.all;
    hta_result_init(&u.all);
    size_t ndone = u.ndone;
    if (u.ast) st = u.ast, err = u.aerr;
    for (size_t i = u.next; i < plan.n && !st; i++) {
        if (!u.parts[i].done) continue;
        ndone++;
        st = put(c, &all, &u.parts[i].res, &err);
        hta_result_free(&u.parts[i].res); /* its rows moved: give its columns back as we go */
    }
    if (!st && !ndone) st = hta_fail(&err, HTA_ENODATA, "%s: no trace files", c->path), in_load = 1;
    if (!st && r->reduce) {
        hta_result red;
        hta_result_init(&red);
        st = r->reduce(c, r->user, &all, &red, &err);
        hta_result_free(&all);
        all = red;
    }
    if (st) {
        hta_result_free(&all);
        goto out;
    }
    c->job_dist = cd ? &jd : NULL;
    rc = r->done ? r->done(c, cmd, r->user, &plan, &all) : cli_emit(c, &all);
    c->job_dist = NULL;
out:
    if (cd && root && gathered && !announced) {
        /* the processes that follow (they all came through the gather) wait for the root's job: none */
        hta_error je = {0};
        (void)hta_job_announce_none(&jd, &je);
    }
    if (st && root) {
        /* as the whole run says it: a load failure as cli_open does, an analysis failure as cli_fail */
        if (in_load) fprintf(stderr, "hta: error: %s\n", err.msg);
        else cli_fail(cmd, &err);
        rc = 1;
    }
    for (size_t i = 0; c->kept && i < plan.n; i++) hta_ctx_free(c->kept[i]);
    free(c->kept);
    c->kept = NULL;
    free(which);
    parts_free(u.parts, plan.n);
    hta_result_free(&u.all);
    free(u.fin);
    hta_rank_plan_free(&plan);
    return rc;
}

int cli_parse_run_ranks(int argc, char **argv, const char *usage, const char *desc, const cli_opt *opts,
                        const cli_ranks *r) {
    cli_common c;
    int rc = cli_parse(argc, argv, usage, desc, opts, 1, 1, &c);
    if (rc >= 0) return rc;
    return cli_run_ranks(&c, argv[0], r);
}
