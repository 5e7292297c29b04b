/* Unit tests of the library's error and memory conventions: scratch arenas
 * (alignment, mark/reset reuse, overflow refusal, growth), HTA_TRY /
 * HTA_TRY_GOTO forwarding, and failures told apart by status, not by text
 * (HTA_ENOTTRACE from the loader, HTA_ESTOPPED from hta_raw_scan, a
 * callback's own failure kept as is).  Self-contained: prints one
 * "ok NAME" / "FAIL NAME" line per check and exits non-zero on a failure. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hta/arena.h"
#include "hta/error.h"
#include "hta/rawjson.h"
#include "hta/trace.h"

static int failures;

static void check(int ok, const char *name) {
    printf("%s %s\n", ok ? "ok" : "FAIL", name);
    if (!ok) failures++;
}

static int aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

/* ---- arenas ---- */

static void test_arena(void) {
    hta_arena a = HTA_ARENA_INIT;
    int ok = 1;
    static const size_t sizes[] = {1, 3, 7, 16, 17, 100, 4095, 1u << 20, (1u << 20) + 5, 3};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        unsigned char *p = hta_arena_alloc(&a, sizes[i]);
        ok &= p != NULL && aligned16(p);
        if (p) memset(p, 0xab, sizes[i]); /* the whole request is usable */
    }
    check(ok, "arena_alloc_aligned_16");

    /* mark / reset: the space after the mark is handed out again */
    hta_arena_mark m = hta_arena_save(&a);
    void *x = hta_arena_alloc(&a, 1000);
    hta_arena_reset(&a, m);
    void *y = hta_arena_alloc(&a, 1000);
    check(x != NULL && x == y, "arena_reset_reuses_space");

    /* a big block freed by a reset is kept and reused, not given back */
    m = hta_arena_save(&a);
    void *big1 = hta_arena_alloc(&a, 8u << 20);
    hta_arena_reset(&a, m);
    void *big2 = hta_arena_alloc(&a, 8u << 20);
    check(big1 != NULL && big1 == big2, "arena_reset_keeps_big_block");
    hta_arena_reset(&a, m);

    /* nested marks release in order */
    hta_arena_mark outer = hta_arena_save(&a);
    char *s1 = hta_arena_strdup(&a, "outer");
    hta_arena_mark inner = hta_arena_save(&a);
    (void)hta_arena_alloc(&a, 2u << 20);
    hta_arena_reset(&a, inner);
    check(s1 && !strcmp(s1, "outer"), "arena_inner_reset_keeps_outer");
    hta_arena_reset(&a, outer);

    /* calloc zeroes; overflowing sizes are refused, not wrapped */
    m = hta_arena_save(&a);
    (void)memset(hta_arena_alloc(&a, 256), 0xff, 256);
    hta_arena_reset(&a, m);
    unsigned char *z = hta_arena_calloc(&a, 64, 4);
    ok = z != NULL;
    for (int i = 0; z && i < 256; i++) ok &= z[i] == 0;
    check(ok, "arena_calloc_zeroes");
    check(hta_arena_calloc(&a, SIZE_MAX / 2, 4) == NULL, "arena_calloc_overflow_refused");
    check(hta_arena_array(&a, SIZE_MAX / 8 + 1, 16) == NULL, "arena_array_overflow_refused");
    check(hta_arena_alloc(&a, SIZE_MAX - 3) == NULL, "arena_alloc_huge_refused");
    check(HTA_ANEW(&a, int64_t, 0) != NULL, "arena_anew_zero_is_valid");

    /* growth keeps the contents; the last allocation grows in place */
    size_t cap = 4;
    int32_t *v = HTA_ANEW(&a, int32_t, cap);
    for (int i = 0; i < 4; i++) v[i] = i;
    int32_t *w = hta_arena_grow(&a, v, &cap, 100, sizeof *v);
    ok = w == v && cap >= 100;
    for (int i = 0; w && i < 4; i++) ok &= w[i] == i;
    check(ok, "arena_grow_last_in_place");
    void *other = hta_arena_alloc(&a, 8);
    (void)other;
    size_t cap2 = cap;
    int32_t *u = hta_arena_grow(&a, w, &cap2, cap + 1, sizeof *w);
    ok = u != NULL && u != w && cap2 > cap;
    for (int i = 0; u && i < 4; i++) ok &= u[i] == i;
    check(ok, "arena_grow_copies");
    hta_arena_free(&a);
    check(a.head == NULL && a.spare == NULL, "arena_free_empties");
}

/* ---- forwarding ---- */

static int reached;

static hta_status fails_eio(hta_error *err) { return hta_fail(err, HTA_EIO, "%s: disk says no", "f.json"); }
static hta_status succeeds(hta_error *err) {
    (void)err;
    return HTA_OK;
}
static hta_status forwards(hta_error *err) {
    HTA_TRY(succeeds(err));
    HTA_TRY(fails_eio(err));
    reached = 1;
    return HTA_OK;
}
static hta_status forwards_goto(hta_error *err, int *cleaned) {
    hta_status st = HTA_OK;
    HTA_TRY_GOTO(st, succeeds(err), out);
    HTA_TRY_GOTO(st, fails_eio(err), out);
    reached = 1;
out:
    *cleaned = 1;
    return st;
}

static void test_try(void) {
    hta_error e = {0};
    reached = 0;
    hta_status st = forwards(&e);
    check(st == HTA_EIO && e.code == HTA_EIO && !reached && !strcmp(e.msg, "f.json: disk says no"),
          "hta_try_forwards_status_and_message");
    int cleaned = 0;
    memset(&e, 0, sizeof e);
    reached = 0;
    st = forwards_goto(&e, &cleaned);
    check(st == HTA_EIO && cleaned && !reached && strstr(e.msg, "disk says no") != NULL,
          "hta_try_goto_runs_cleanup");
    check(hta_oom(NULL) == HTA_ENOMEM && hta_fail(NULL, HTA_EINVAL, "x") == HTA_EINVAL, "hta_fail_null_error");
    check(!strcmp(hta_status_name(HTA_ENOTTRACE), "not a trace") &&
              !strcmp(hta_status_name(HTA_ESTOPPED), "stopped by caller"),
          "status_names");
}

/* ---- statuses from the loader and the raw scanner ---- */

static char g_dir[256];

static void put_file(const char *name, const char *text, char *path, size_t cap) {
    snprintf(path, cap, "%s/%s", g_dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) {
        perror(path);
        exit(2);
    }
    fputs(text, f);
    fclose(f);
}

static const char *const TRACE =
    "{\"distributedInfo\": {\"rank\": 0},\n"
    " \"traceEvents\": [\n"
    "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::add\", \"pid\": 1, \"tid\": 2, \"ts\": 10, \"dur\": 5},\n"
    "  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": 2,"
    " \"ts\": 11, \"dur\": 2, \"args\": {\"correlation\": 7}},\n"
    "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": 20, \"dur\": 3,"
    " \"args\": {\"stream\": 7, \"correlation\": 7}}\n"
    " ]}\n";

typedef struct counter {
    int events;
    int stop_at;       /* stop at this event (1-based); 0: never */
    hta_error *fail;   /* when set, fill it before stopping (a writer's own failure) */
} counter;

static int count_event(void *ctx, uint32_t index, const char *json, size_t len) {
    counter *c = ctx;
    (void)index, (void)json, (void)len;
    c->events++;
    if (c->stop_at && c->events == c->stop_at) {
        if (c->fail) hta_fail(c->fail, HTA_EIO, "out.json.tmp: write error: No space left on device");
        return 1;
    }
    return 0;
}

static void test_statuses(void) {
    char trace[512], notrace[512], bad[512];
    put_file("rank-0.json", TRACE, trace, sizeof trace);
    put_file("settings.json", "{\"schemaVersion\": 1, \"note\": \"no events here\"}\n", notrace, sizeof notrace);

    hta_trace *t = NULL;
    hta_error e = {0};
    hta_status st = hta_trace_load(trace, NULL, &t, &e);
    check(st == HTA_OK && t && t->nranks == 1 && t->ranks[0]->n == 3, "load_small_trace");
    hta_trace_free(t);

    /* a JSON file without traceEvents: its own status, by code */
    t = NULL;
    memset(&e, 0, sizeof e);
    st = hta_trace_load(notrace, NULL, &t, &e);
    check(st == HTA_ENOTTRACE && e.code == HTA_ENOTTRACE && t == NULL && strstr(e.msg, notrace) != NULL,
          "load_json_without_trace_events_is_enottrace");

    /* in a folder such a file is skipped, the trace next to it loads */
    t = NULL;
    memset(&e, 0, sizeof e);
    st = hta_trace_load(g_dir, NULL, &t, &e);
    check(st == HTA_OK && t && t->nranks == 1, "folder_skips_not_a_trace");
    hta_trace_free(t);

    /* bad JSON stays HTA_EFORMAT, with the byte offset */
    put_file("broken.json", "{\"traceEvents\": [{\"ph\": \"X\",, }]}", bad, sizeof bad);
    t = NULL;
    memset(&e, 0, sizeof e);
    st = hta_trace_load(bad, NULL, &t, &e);
    check(st == HTA_EFORMAT && strstr(e.msg, "byte ") != NULL && strstr(e.msg, bad) != NULL,
          "load_bad_json_is_eformat_with_offset");
    unlink(bad);

    /* raw scan: the whole file, then a stop asked for by the callback */
    counter c = {0, 0, NULL};
    hta_raw_callbacks cb = {NULL, count_event, &c};
    memset(&e, 0, sizeof e);
    st = hta_raw_scan(trace, &cb, &e);
    check(st == HTA_OK && c.events == 3, "raw_scan_all_events");

    c = (counter){0, 2, NULL};
    memset(&e, 0, sizeof e);
    st = hta_raw_scan(trace, &cb, &e);
    check(st == HTA_ESTOPPED && e.code == HTA_ESTOPPED && c.events == 2, "raw_scan_stop_is_estopped");

    /* a callback that stops because it failed (a full disk) keeps its failure */
    hta_error shared = {0};
    c = (counter){0, 1, &shared};
    st = hta_raw_scan(trace, &cb, &shared);
    check(st == HTA_EIO && shared.code == HTA_EIO && strstr(shared.msg, "No space left on device") != NULL &&
              strstr(shared.msg, "stopped") == NULL,
          "raw_scan_keeps_callback_failure");

    /* a missing file is HTA_EIO, not a stop */
    char missing[512];
    snprintf(missing, sizeof missing, "%s/missing.json", g_dir);
    c = (counter){0, 0, NULL};
    st = hta_raw_scan(missing, &cb, &e);
    check(st == HTA_EIO, "raw_scan_missing_file_is_eio");

    unlink(trace);
    unlink(notrace);
}

int main(void) {
    const char *tmp = getenv("TMPDIR");
    snprintf(g_dir, sizeof g_dir, "%s/hta_test_errors_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(g_dir)) {
        perror("mkdtemp");
        return 2;
    }
    test_arena();
    test_try();
    test_statuses();
    rmdir(g_dir);
    if (failures) printf("%d check%s failed\n", failures, failures == 1 ? "" : "s");
    return failures ? 1 : 0;
}
