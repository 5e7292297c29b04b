/* Tests of libhtatrace.  In-process checks here (return codes, get/set); the
 * files written are checked by tests/tracer/test_c_api.py and test_concurrency.py.
 *
 *   test-tracer main OUTDIR     scopes, args, ctx/slots, ticks, threads, discard, write errors
 *   test-tracer atexit          records, never flushes (file from HTA_TRACE_FILE at exit)
 *   test-tracer gpu OUTDIR      GPU scopes (run with HTA_TRACE_CUDART=libfakecudart.so)
 *   test-tracer cap OUTDIR      per-thread memory cap drops events
 *   test-tracer spans OUTDIR    spans: overlapping on one thread, ended on another thread
 *   test-tracer fork OUTDIR     20 forks while another thread flushes; prints the children's pids
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hta/tracer.h"
#include "../check.h"

#define CHECK_RC(expr, want)                                                          \
    do {                                                                              \
        int rc_ = (expr);                                                             \
        if (rc_ != (want)) {                                                          \
            fprintf(stderr, "%s:%d: %s returned %d (%s), wanted %d\n", __FILE__,      \
                    __LINE__, #expr, rc_, hta_tracer_strerror(rc_), (int)(want));    \
            check_fails++;                                                               \
        }                                                                             \
    } while (0)

static void spin_ns(long ns)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do
        clock_gettime(CLOCK_MONOTONIC, &b);
    while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < ns);
}

/* cfg: writes outdir/name (pattern, 1024 bytes, holds the path), no flush at exit. */
static void config_to(hta_tracer_config *cfg, char *pattern, const char *outdir, const char *name)
{
    hta_tracer_config_init(cfg);
    snprintf(pattern, 1024, "%s/%s", outdir, name);
    cfg->file_pattern = pattern;
    cfg->flush_at_exit = 0;
}

/* hta_tracer_init with config_to's settings (the pattern is copied by the init) */
static int init_to(const char *outdir, const char *name)
{
    char pattern[1024];
    hta_tracer_config cfg;
    config_to(&cfg, pattern, outdir, name);
    return hta_tracer_init(&cfg);
}

static int early_return(int x)
{
    HTA_TRACER_SCOPE_ARGS("early_return", HTA_TRACER_ARG_INT("x", x));
    spin_ns(2000);
    if (x)
        return 1;
    return 0;
}

static void *worker(void *arg)
{
    int k = (int)(intptr_t)arg;
    char name[32];
    snprintf(name, sizeof name, "worker-%d", k);
    CHECK_RC(hta_tracer_thread_name(name), HTA_TRACER_OK);
    for (int i = 0; i < 1000; i++) {
        hta_tracer_arg a[2] = {HTA_TRACER_ARG_INT("i", i), HTA_TRACER_ARG_INT("worker", k)};
        CHECK_RC(hta_tracer_begin_args("work", a, 2), HTA_TRACER_OK);
        {
            HTA_TRACER_SCOPE("sub");
        }
        CHECK_RC(hta_tracer_end(), HTA_TRACER_OK);
    }
    CHECK(hta_tracer_depth() == 0);
    return NULL;
}

static int run_main(const char *outdir)
{
    char pattern[1024], path[2048], want[2048];
    hta_tracer_config cfg;
    hta_tracer_config_init(&cfg);
    snprintf(pattern, sizeof pattern, "%s/main-{rank}-{dp}-{pp}-{tp}-{world_size}.json", outdir);
    cfg.rank = 2;
    cfg.world_size = 8;
    cfg.dp = 1;
    cfg.pp = 0;
    cfg.tp = 3;
    cfg.file_pattern = pattern;
    cfg.flush_at_exit = 0;
    CHECK_RC(hta_tracer_init(&cfg), HTA_TRACER_OK);
    CHECK_RC(hta_tracer_output_path(path, sizeof path), HTA_TRACER_OK);
    snprintf(want, sizeof want, "%s/main-2-1-0-3-8.json", outdir);
    CHECK(strcmp(path, want) == 0);
    CHECK_RC(hta_tracer_output_path(path, 4), HTA_TRACER_EINVAL);

    /* errors */
    CHECK_RC(hta_tracer_end(), HTA_TRACER_ESTATE);
    CHECK_RC(hta_tracer_begin(NULL), HTA_TRACER_EINVAL);
    hta_tracer_arg bad = {.key = "k", .value = {.type = 99}};
    CHECK_RC(hta_tracer_begin_args("x", &bad, 1), HTA_TRACER_EINVAL);
    /* JSON text is checked: anything written must parse */
    static const char *const bad_json[] = {"", "[1,]", "{\"a\" 1}", "[1] 2", "nan", "01", "\"\x01\"", "\"\xff\"",
                                           "tru", "[", "\"\\x\"", "1.", "-", "{1: 2}"};
    for (size_t i = 0; i < sizeof bad_json / sizeof bad_json[0]; i++) {
        hta_tracer_arg j = HTA_TRACER_ARG_JSON("j", bad_json[i]);
        CHECK_RC(hta_tracer_begin_args("x", &j, 1), HTA_TRACER_EINVAL);
        CHECK_RC(hta_tracer_tick("x", &j, 1), HTA_TRACER_EINVAL);
    }
    char deep[200], longj[5000], ok64[200];
    memset(deep, '[', 99); /* 99 levels */
    deep[99] = '1';
    memset(deep + 100, ']', 99);
    deep[199] = 0;
    memset(ok64, '[', 64); /* 64 levels: accepted */
    ok64[64] = '1';
    memset(ok64 + 65, ']', 64);
    ok64[129] = 0;
    hta_tracer_arg j64 = HTA_TRACER_ARG_JSON("j", ok64);
    CHECK_RC(hta_tracer_begin_args("x", &j64, 1), HTA_TRACER_OK);
    CHECK_RC(hta_tracer_end(), HTA_TRACER_OK);
    CHECK_RC(hta_tracer_discard(), HTA_TRACER_OK);
    memset(longj, ' ', sizeof longj);
    longj[0] = '1';
    longj[sizeof longj - 1] = 0;
    hta_tracer_arg jd = HTA_TRACER_ARG_JSON("j", deep), jl = HTA_TRACER_ARG_JSON("j", longj);
    CHECK_RC(hta_tracer_tick("x", &jd, 1), HTA_TRACER_EINVAL); /* nested past 64 */
    CHECK_RC(hta_tracer_tick("x", &jl, 1), HTA_TRACER_EINVAL); /* past 4096 bytes */
    CHECK_RC(hta_tracer_set_str("x", "y"), HTA_TRACER_ENOENT);
    hta_tracer_value jv = {.type = HTA_TRACER_JSON, .u = {.s = "{"}};
    CHECK_RC(hta_tracer_set("x", &jv), HTA_TRACER_EINVAL);
    CHECK_RC(hta_tracer_tick("x", NULL, -1), HTA_TRACER_EINVAL);
    CHECK(hta_tracer_depth() == 0);

    /* interning */
    char dyn[16];
    snprintf(dyn, sizeof dyn, "dyn_%d", 5);
    const char *i1 = hta_tracer_intern(dyn);
    const char *i2 = hta_tracer_intern("dyn_5");
    CHECK(i1 && i1 == i2 && i1 != dyn && strcmp(i1, "dyn_5") == 0);

    CHECK_RC(hta_tracer_thread_name("main-thread"), HTA_TRACER_OK);

    /* outer: args, ctx down, slots up */
    static const char *const outer_slots[] = {"tokens", "loss"};
    hta_tracer_arg outer_args[] = {
        HTA_TRACER_ARG_INT("iter", 42),
        HTA_TRACER_ARG_DOUBLE("lr", 0.5),
        HTA_TRACER_ARG_STR("tag", "a\"b\\c\n\xc3\xa9"),
        HTA_TRACER_ARG_INT("big", -9007199254740993LL),
        HTA_TRACER_ARG_STR("bad_utf8", "x\xff" "y"),
        HTA_TRACER_ARG_BOOL("flag", 7),
        HTA_TRACER_ARG_NULL("none"),
        HTA_TRACER_ARG_JSON("shape", " [8, 1024, {\"a\": [true, null, -1.5e3, \"\\u00e9\"]}] "),
        HTA_TRACER_ARG_NULL("tokens"), /* also a slot: the value set at the end replaces it */
    };
    hta_tracer_arg outer_ctx[] = {HTA_TRACER_ARG_INT("micro_batch", 7), HTA_TRACER_ARG_STR("phase", "fwd"),
                                  HTA_TRACER_ARG_JSON("ids", "[3,4]"), HTA_TRACER_ARG_BOOL("dbg", 1)};
    hta_tracer_scope_desc outer = {
        .name = "outer", .args = outer_args, .nargs = 9, .ctx = outer_ctx, .nctx = 4,
        .slots = outer_slots, .nslots = 2,
    };
    CHECK_RC(hta_tracer_begin_desc(&outer), HTA_TRACER_OK);
    spin_ns(5000);
    hta_tracer_value v;
    {
        HTA_TRACER_SCOPE(i1); /* interned dynamic name */
        CHECK(hta_tracer_depth() == 2);
        CHECK_RC(hta_tracer_get("micro_batch", &v), HTA_TRACER_OK);
        CHECK(v.type == HTA_TRACER_INT && v.u.i == 7);
        CHECK_RC(hta_tracer_get("phase", &v), HTA_TRACER_OK);
        CHECK(v.type == HTA_TRACER_STR && strcmp(v.u.s, "fwd") == 0);
        CHECK_RC(hta_tracer_get("nope", &v), HTA_TRACER_ENOENT);
        CHECK_RC(hta_tracer_get("ids", &v), HTA_TRACER_OK); /* JSON ctx comes back as its text */
        CHECK(v.type == HTA_TRACER_JSON && strcmp(v.u.s, "[3,4]") == 0);
        CHECK_RC(hta_tracer_get("dbg", &v), HTA_TRACER_OK);
        CHECK(v.type == HTA_TRACER_BOOL && v.u.i == 1);
        CHECK_RC(hta_tracer_set_int("tokens", 1000), HTA_TRACER_OK);
        CHECK_RC(hta_tracer_set_int("tokens", 1024), HTA_TRACER_OK); /* replaces */
        CHECK_RC(hta_tracer_set_int("nope", 1), HTA_TRACER_ENOENT);
        spin_ns(5000);

        /* a context-only scope: not timed, shadows a ctx value, owns a slot */
        static const char *const inner_slots[] = {"loss"};
        hta_tracer_arg cctx[] = {HTA_TRACER_ARG_INT("micro_batch", 8)};
        hta_tracer_scope_desc c = {.name = NULL, .ctx = cctx, .nctx = 1, .slots = inner_slots, .nslots = 1};
        CHECK_RC(hta_tracer_begin_desc(&c), HTA_TRACER_OK);
        {
            HTA_TRACER_SCOPE_ARGS("leaf", HTA_TRACER_ARG_STR("kind", "matmul"));
            CHECK_RC(hta_tracer_get("micro_batch", &v), HTA_TRACER_OK);
            CHECK(v.u.i == 8);
            CHECK_RC(hta_tracer_get("phase", &v), HTA_TRACER_OK);
            CHECK(strcmp(v.u.s, "fwd") == 0);
            CHECK_RC(hta_tracer_set_double("loss", 2.5), HTA_TRACER_OK);
            spin_ns(3000);
        }
        CHECK_RC(hta_tracer_end(), HTA_TRACER_OK); /* forwards loss to outer */
        CHECK_RC(hta_tracer_get("micro_batch", &v), HTA_TRACER_OK);
        CHECK(v.u.i == 7);
        hta_tracer_arg targs[] = {HTA_TRACER_ARG_INT("step", 3), HTA_TRACER_ARG_STR("what", "ckpt")};
        CHECK_RC(hta_tracer_tick("checkpoint", targs, 2), HTA_TRACER_OK);
    }
    CHECK(early_return(1) == 1);
    CHECK(early_return(0) == 0);
    CHECK(hta_tracer_depth() == 1);
    CHECK_RC(hta_tracer_end(), HTA_TRACER_OK);
    CHECK(hta_tracer_depth() == 0);
    CHECK_RC(hta_tracer_get("micro_batch", &v), HTA_TRACER_ENOENT);
    CHECK_RC(hta_tracer_set_str("tokens", "x"), HTA_TRACER_ENOENT);

    /* GPU timing asked for without a runtime: CPU scope, ENOCUDA */
    hta_tracer_scope_desc g = {.name = "gpu_wanted", .gpu = 1};
    CHECK_RC(hta_tracer_begin_desc(&g), HTA_TRACER_ENOCUDA);
    CHECK_RC(hta_tracer_end(), HTA_TRACER_OK);
    CHECK(hta_tracer_gpu_available() == 0);

    /* threads */
    pthread_t th[4];
    for (int k = 0; k < 4; k++)
        CHECK(pthread_create(&th[k], NULL, worker, (void *)(intptr_t)k) == 0);
    for (int k = 0; k < 4; k++)
        pthread_join(th[k], NULL);

    /* a scope still open at flush */
    CHECK_RC(hta_tracer_begin("unfinished_scope"), HTA_TRACER_OK);
    spin_ns(1000);
    CHECK_RC(hta_tracer_flush_path(path, sizeof path), HTA_TRACER_OK);
    CHECK(strcmp(path, want) == 0);
    CHECK_RC(hta_tracer_end(), HTA_TRACER_OK);

    /* discard: nothing before it is written again */
    CHECK_RC(hta_tracer_begin("discarded"), HTA_TRACER_OK);
    CHECK_RC(hta_tracer_end(), HTA_TRACER_OK);
    CHECK_RC(hta_tracer_begin("open_across_discard"), HTA_TRACER_OK);
    CHECK_RC(hta_tracer_discard(), HTA_TRACER_OK);
    CHECK_RC(hta_tracer_end(), HTA_TRACER_OK);
    CHECK_RC(hta_tracer_begin("kept"), HTA_TRACER_OK);
    CHECK_RC(hta_tracer_end(), HTA_TRACER_OK);
    snprintf(pattern, sizeof pattern, "%s/discard-r{rank}.json", outdir);
    CHECK_RC(hta_tracer_init(&cfg), HTA_TRACER_OK); /* update: new pattern */
    CHECK_RC(hta_tracer_flush(), HTA_TRACER_OK);

    /* a missing folder is made (mkdir -p) */
    snprintf(pattern, sizeof pattern, "%s/no/such/dir/x.json", outdir);
    CHECK_RC(hta_tracer_init(&cfg), HTA_TRACER_OK);
    CHECK_RC(hta_tracer_flush(), HTA_TRACER_OK);
    CHECK(strcmp(hta_tracer_last_error(), "") == 0 && hta_tracer_last_errno() == 0);

    /* unwritable targets: the error names the path and the system's reason */
    snprintf(pattern, sizeof pattern, "%s/main-2-1-0-3-8.json/x.json", outdir); /* under a file */
    CHECK_RC(hta_tracer_init(&cfg), HTA_TRACER_OK);
    CHECK_RC(hta_tracer_flush(), HTA_TRACER_EIO);
    snprintf(want, sizeof want, "cannot write %s: Not a directory", pattern);
    CHECK(strcmp(hta_tracer_last_error(), want) == 0);
    CHECK(hta_tracer_last_errno() == ENOTDIR);
    snprintf(pattern, sizeof pattern, "%s/no", outdir); /* a folder */
    CHECK_RC(hta_tracer_init(&cfg), HTA_TRACER_OK);
    CHECK_RC(hta_tracer_flush(), HTA_TRACER_EIO);
    snprintf(want, sizeof want, "cannot write %s: Is a directory", pattern);
    CHECK(strcmp(hta_tracer_last_error(), want) == 0);
    CHECK(hta_tracer_last_errno() == EISDIR);

    /* shutdown, then a fresh start on the same threads */
    CHECK_RC(hta_tracer_shutdown(), HTA_TRACER_OK);
    CHECK(hta_tracer_depth() == 0);
    snprintf(pattern, sizeof pattern, "%s/restart.json", outdir);
    CHECK_RC(hta_tracer_init(&cfg), HTA_TRACER_OK);
    CHECK_RC(hta_tracer_begin("after_restart"), HTA_TRACER_OK);
    CHECK_RC(hta_tracer_end(), HTA_TRACER_OK);
    CHECK_RC(hta_tracer_flush(), HTA_TRACER_OK);
    CHECK_RC(hta_tracer_shutdown(), HTA_TRACER_OK);
    return check_fails;
}

static int run_atexit(void)
{
    /* configured from the environment only; written by the atexit handler */
    for (int i = 0; i < 3; i++) {
        HTA_TRACER_SCOPE_ARGS("atexit_scope", HTA_TRACER_ARG_INT("i", i));
        hta_tracer_tick("atexit_tick", NULL, 0);
    }
    return check_fails;
}

static int run_gpu(const char *outdir)
{
    CHECK_RC(init_to(outdir, "gpu.json"), HTA_TRACER_OK);
    CHECK(hta_tracer_gpu_available() == 1);
    for (int i = 0; i < 3; i++) {
        hta_tracer_arg a[] = {HTA_TRACER_ARG_INT("i", i)};
        hta_tracer_scope_desc d = {.name = "gpu_step", .args = a, .nargs = 1, .gpu = 1};
        CHECK_RC(hta_tracer_begin_desc(&d), HTA_TRACER_OK);
        spin_ns(200000);
        hta_tracer_scope_desc in = {.name = "gpu_inner", .gpu = 1};
        CHECK_RC(hta_tracer_begin_desc(&in), HTA_TRACER_OK);
        spin_ns(50000);
        CHECK_RC(hta_tracer_end(), HTA_TRACER_OK);
        CHECK_RC(hta_tracer_end(), HTA_TRACER_OK);
        if (i == 1)
            spin_ns(1100000000L); /* past the re-anchor interval */
    }
    CHECK_RC(hta_tracer_flush(), HTA_TRACER_OK);
    /* events are reused after a flush; a second flush writes the same */
    hta_tracer_scope_desc d = {.name = "gpu_after_flush", .gpu = 1};
    CHECK_RC(hta_tracer_begin_desc(&d), HTA_TRACER_OK);
    spin_ns(100000);
    CHECK_RC(hta_tracer_end(), HTA_TRACER_OK);
    CHECK_RC(hta_tracer_flush(), HTA_TRACER_OK);
    CHECK_RC(hta_tracer_shutdown(), HTA_TRACER_OK);
    return check_fails;
}

static int run_cap(const char *outdir)
{
    char pattern[1024];
    hta_tracer_config cfg;
    config_to(&cfg, pattern, outdir, "cap.json");
    cfg.chunk_bytes = 4096;
    cfg.max_bytes_per_thread = 16384;
    CHECK_RC(hta_tracer_init(&cfg), HTA_TRACER_OK);
    for (int i = 0; i < 5000; i++) {
        CHECK_RC(hta_tracer_begin("capped"), HTA_TRACER_OK);
        CHECK_RC(hta_tracer_end(), HTA_TRACER_OK);
    }
    CHECK(hta_tracer_depth() == 0);
    CHECK_RC(hta_tracer_flush(), HTA_TRACER_OK);
    CHECK_RC(hta_tracer_shutdown(), HTA_TRACER_OK);
    return check_fails;
}

/* ---- spans ---- */

static int64_t cross_span;

static void *end_elsewhere(void *arg)
{
    (void)arg;
    spin_ns(200000);
    hta_tracer_arg a = HTA_TRACER_ARG_STR("ended_by", "other thread");
    CHECK_RC(hta_tracer_span_end(cross_span, &a, 1), HTA_TRACER_OK);
    return NULL;
}

static int run_spans(const char *outdir)
{
    CHECK_RC(init_to(outdir, "spans.json"), HTA_TRACER_OK);
    CHECK_RC(hta_tracer_thread_name("loop"), HTA_TRACER_OK);
    hta_tracer_scope_desc bad = {.name = "x", .nslots = 1, .slots = (const char *const[]){"k"}};
    CHECK(hta_tracer_span_begin(&bad, 0) == HTA_TRACER_EINVAL); /* spans carry no context */
    hta_tracer_scope_desc noname = {.name = NULL};
    CHECK(hta_tracer_span_begin(&noname, 0) == HTA_TRACER_EINVAL);
    CHECK_RC(hta_tracer_span_end(HTA_TRACER_EINVAL, NULL, 0), HTA_TRACER_OK); /* a failed begin's "id" */

    /* a C scope around everything: the spans nest in it or go to a track of their own */
    CHECK_RC(hta_tracer_begin("loop_iteration"), HTA_TRACER_OK);
    hta_tracer_arg aa[] = {HTA_TRACER_ARG_INT("task", 1), HTA_TRACER_ARG_NULL("result")};
    hta_tracer_scope_desc da = {.name = "task_a", .args = aa, .nargs = 2};
    int64_t a = hta_tracer_span_begin(&da, 0);
    CHECK(a > 0);
    spin_ns(1000000);
    hta_tracer_scope_desc db = {.name = "task_b", .args = (hta_tracer_arg[]){HTA_TRACER_ARG_INT("task", 2)}, .nargs = 1};
    int64_t b = hta_tracer_span_begin(&db, 0);
    CHECK(b > a);
    hta_tracer_scope_desc dbc = {.name = "b_child"};
    int64_t bc = hta_tracer_span_begin(&dbc, (uint64_t)b); /* inside b (and, by time, inside a) */
    spin_ns(500000);
    CHECK_RC(hta_tracer_span_end(bc, NULL, 0), HTA_TRACER_OK);
    spin_ns(500000);
    hta_tracer_arg ra = HTA_TRACER_ARG_INT("result", 42);
    CHECK_RC(hta_tracer_span_end(a, &ra, 1), HTA_TRACER_OK); /* a ends first: not b */
    spin_ns(2000000);
    {
        HTA_TRACER_SCOPE("inside_b"); /* a C scope while b is open */
        spin_ns(100000);
    }
    CHECK_RC(hta_tracer_span_end(b, NULL, 0), HTA_TRACER_OK);
    hta_tracer_arg late = HTA_TRACER_ARG_INT("result", -1);
    CHECK_RC(hta_tracer_span_end(a, &late, 1), HTA_TRACER_OK); /* a second end: ignored at flush */
    CHECK_RC(hta_tracer_end(), HTA_TRACER_OK);

    /* ended on another thread: written on the thread that began it */
    hta_tracer_scope_desc dc = {.name = "cross_thread"};
    cross_span = hta_tracer_span_begin(&dc, 0);
    CHECK(cross_span > 0);
    pthread_t th;
    CHECK(pthread_create(&th, NULL, end_elsewhere, NULL) == 0);
    pthread_join(th, NULL);
    /* one still open at flush */
    hta_tracer_scope_desc dd = {.name = "open_span"};
    CHECK(hta_tracer_span_begin(&dd, 0) > 0);
    CHECK_RC(hta_tracer_flush(), HTA_TRACER_OK);
    CHECK_RC(hta_tracer_shutdown(), HTA_TRACER_OK);
    return check_fails;
}

/* ---- fork while another thread flushes ---- */

static atomic_int stop_flushing;
static atomic_int flushes;

static void *flusher(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop_flushing)) {
        CHECK_RC(hta_tracer_flush(), HTA_TRACER_OK);
        atomic_fetch_add(&flushes, 1);
    }
    return NULL;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int run_fork(const char *outdir)
{
    enum { NCHILD = 20 };
    char pattern[1024];
    hta_tracer_config cfg;
    hta_tracer_config_init(&cfg);
    snprintf(pattern, sizeof pattern, "%s/fork-{pid}.json", outdir);
    cfg.file_pattern = pattern;
    cfg.flush_at_exit = 1;
    CHECK_RC(hta_tracer_init(&cfg), HTA_TRACER_OK);
    for (int i = 0; i < 3; i++) {
        HTA_TRACER_SCOPE_ARGS("parent_pre", HTA_TRACER_ARG_INT("i", i));
    }
    CHECK_RC(hta_tracer_begin("parent_open_at_fork"), HTA_TRACER_OK);
    pthread_t th;
    CHECK(pthread_create(&th, NULL, flusher, NULL) == 0);
    while (atomic_load(&flushes) < 2)
        spin_ns(100000);
    pid_t kids[NCHILD];
    for (int i = 0; i < NCHILD; i++) {
        fflush(stdout);
        kids[i] = fork();
        if (kids[i] == 0) {
            /* the child: empty buffer, own pid; the parent's open scope is not ours */
            int bad = hta_tracer_depth() != 0 || hta_tracer_end() != HTA_TRACER_ESTATE;
            {
                HTA_TRACER_SCOPE_ARGS("child_scope", HTA_TRACER_ARG_INT("i", i), HTA_TRACER_ARG_INT("pid", getpid()));
                hta_tracer_tick("child_tick", NULL, 0);
            }
            exit(bad ? 3 : 0); /* the exit flush writes fork-<pid>.json */
        }
        CHECK(kids[i] > 0);
    }
    /* every child must exit promptly: a hang is a failure, not a stuck test */
    int64_t deadline = now_ms() + 30000;
    int left = NCHILD;
    while (left && now_ms() < deadline) {
        for (int i = 0; i < NCHILD; i++) {
            int st;
            if (kids[i] > 0 && waitpid(kids[i], &st, WNOHANG) == kids[i]) {
                if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
                    fprintf(stderr, "child %d: status %#x\n", (int)kids[i], st);
                    check_fails++;
                }
                printf("%d %d\n", i, (int)kids[i]);
                kids[i] = -kids[i];
                left--;
            }
        }
        spin_ns(1000000);
    }
    for (int i = 0; i < NCHILD; i++) {
        if (kids[i] > 0) {
            fprintf(stderr, "child %d hung at exit\n", (int)kids[i]);
            kill(kids[i], SIGKILL);
            waitpid(kids[i], NULL, 0);
            check_fails++;
        }
    }
    atomic_store(&stop_flushing, 1);
    pthread_join(th, NULL);
    CHECK_RC(hta_tracer_end(), HTA_TRACER_OK);
    CHECK_RC(hta_tracer_flush(), HTA_TRACER_OK);
    return check_fails;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "main") == 0)
        return run_main(argv[2]) != 0;
    if (argc >= 2 && strcmp(argv[1], "atexit") == 0)
        return run_atexit() != 0;
    if (argc >= 3 && strcmp(argv[1], "gpu") == 0)
        return run_gpu(argv[2]) != 0;
    if (argc >= 3 && strcmp(argv[1], "cap") == 0)
        return run_cap(argv[2]) != 0;
    if (argc >= 3 && strcmp(argv[1], "spans") == 0)
        return run_spans(argv[2]) != 0;
    if (argc >= 3 && strcmp(argv[1], "fork") == 0)
        return run_fork(argv[2]) != 0;
    fprintf(stderr, "usage: %s main|atexit|gpu|cap|spans|fork OUTDIR\n", argv[0]);
    return 2;
}
