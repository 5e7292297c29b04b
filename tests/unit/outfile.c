/* Unit tests of the one writer of output files (hta/outfile.h) as a library caller sees it: commit and
 * roll back, a replaced file's identity, the checks of outputs against inputs, the loader's name rule,
 * the signal handler's removal of temporary files, and the derived-trace writer's own refusal to write
 * over the trace it streams.  The command-line behaviour is in tests/robust/test_outputs.py. */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hta/outfile.h"
#include "hta/rawjson.h"
#include "unit.h"

static char dir[64];

/* A fresh temporary folder per test, removed (with what it holds, one level) by cleanup(). */
static void fresh(void) {
    snprintf(dir, sizeof dir, "/tmp/hta-unit-outfile-XXXXXX");
    if (!mkdtemp(dir)) abort();
}

static void cleanup(void) {
    DIR *d = opendir(dir);
    struct dirent *e;
    char p[512];
    while (d && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
    if (d) closedir(d);
    rmdir(dir);
}

static int entries(void) {
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (d) closedir(d);
    return n;
}

/* dir/name, in a ring of 64 buffers: each test uses fewer paths than that */
static char *path_in(const char *name) {
    static char p[64][256];
    static int k;
    char *s = p[k++ & 63];
    snprintf(s, 256, "%s/%s", dir, name);
    return s;
}

static void put_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

static size_t read_file(const char *path, char *buf, size_t cap) {
    FILE *f = fopen(path, "r");
    if (!f) return (size_t)-1;
    size_t n = fread(buf, 1, cap, f);
    fclose(f);
    return n;
}

static void commit_and_rollback(void) {
    fresh();
    hta_error err = {0};
    hta_outfile *o;
    const char *out = path_in("out.bin");
    CHECK_EQ_I64(hta_outfile_open(out, &o, &err), HTA_OK);
    CHECK_EQ_I64(entries(), 1); /* the temporary file only */
    static char big[300000];
    for (size_t i = 0; i < sizeof big; i++) big[i] = (char)(i * 7);
    /* small pieces (buffered) and one larger than the buffer (written straight) */
    for (size_t i = 0; i < 1000; i++) CHECK_EQ_I64(hta_outfile_write(o, big + i * 10, 10, &err), HTA_OK);
    CHECK_EQ_I64(hta_outfile_write(o, big + 10000, sizeof big - 10000, &err), HTA_OK);
    CHECK_EQ_I64(hta_outfile_write(o, NULL, 0, &err), HTA_OK);
    CHECK_EQ_I64(hta_outfile_close(o, 1, &err), HTA_OK);
    static char got[400000];
    CHECK_EQ_I64(read_file(out, got, sizeof got), sizeof big);
    CHECK(!memcmp(got, big, sizeof big));
    CHECK_EQ_I64(entries(), 1);
    /* rolled back: the old file stays as it was, no temporary file */
    put_file(out, "old");
    CHECK_EQ_I64(hta_outfile_open(out, &o, &err), HTA_OK);
    CHECK_EQ_I64(hta_outfile_write(o, "new", 3, &err), HTA_OK);
    CHECK_EQ_I64(hta_outfile_close(o, 0, NULL), HTA_OK);
    CHECK_EQ_I64(read_file(out, got, sizeof got), 3);
    CHECK(!memcmp(got, "old", 3));
    CHECK_EQ_I64(entries(), 1);
    cleanup();
}

static void identity(void) {
    fresh();
    hta_error err = {0};
    hta_outfile *o;
    const char *out = path_in("a.json"), *other = path_in("b.json"), *link = path_in("l.json");
    put_file(out, "x");
    put_file(other, "y");
    CHECK(!symlink(out, link));
    CHECK_EQ_I64(hta_outfile_open(out, &o, &err), HTA_OK);
    CHECK(hta_outfile_is(o, out));
    CHECK(hta_outfile_is(o, link));
    CHECK(!hta_outfile_is(o, other));
    CHECK(!strcmp(hta_outfile_path(o), out));
    hta_outfile_close(o, 0, NULL);
    /* a new file is no input */
    CHECK_EQ_I64(hta_outfile_open(path_in("new.json"), &o, &err), HTA_OK);
    CHECK(!hta_outfile_is(o, out));
    hta_outfile_close(o, 0, NULL);
    CHECK_EQ_I64(entries(), 3);
    cleanup();
}

static void checks(void) {
    fresh();
    hta_error err = {0};
    const char *r0 = path_in("rank0.json");
    put_file(r0, "{}");
    CHECK_EQ_I64(hta_output_check(r0, r0, &err), HTA_EINVAL);
    CHECK(strstr(err.msg, "is the input") != NULL);
    CHECK_EQ_I64(hta_output_check(r0, dir, &err), HTA_EINVAL);
    CHECK(strstr(err.msg, "is one of the input files") != NULL);
    CHECK_EQ_I64(hta_output_check(path_in("m.json.gz"), dir, &err), HTA_EINVAL);
    CHECK(strstr(err.msg, "one more rank") != NULL);
    CHECK_EQ_I64(hta_output_check(path_in(".m.json"), dir, &err), HTA_OK);
    CHECK_EQ_I64(hta_output_check(path_in("m.txt"), dir, &err), HTA_OK);
    CHECK_EQ_I64(hta_output_check(path_in("sim.json"), r0, &err), HTA_OK); /* beside a single file */
    CHECK_EQ_I64(hta_output_check(dir, r0, &err), HTA_EINVAL);              /* a folder is no output */
    CHECK(strstr(err.msg, "is a folder") != NULL);
    CHECK_EQ_I64(hta_output_dir_check(dir, dir, &err), HTA_EINVAL);
    CHECK_EQ_I64(hta_output_dir_check(path_in("sub"), dir, &err), HTA_OK);
    CHECK_EQ_I64(hta_output_check(path_in("x.json"), path_in("missing"), &err), HTA_OK);
    cleanup();
}

static void rank_file_names(void) {
    CHECK(hta_rank_file_name("rank0.json"));
    CHECK(hta_rank_file_name("a.json.gz"));
    CHECK(hta_rank_file_name("x.gz"));
    CHECK(!hta_rank_file_name(".json"));
    CHECK(!hta_rank_file_name(".rank0.json"));
    CHECK(!hta_rank_file_name(".gz"));
    CHECK(!hta_rank_file_name("rank0.json.tmp"));
    CHECK(!hta_rank_file_name("notes.txt"));
}

static void signal_handler_removes_temps(void) {
    fresh();
    hta_error err = {0};
    hta_outfile *a, *b;
    CHECK_EQ_I64(hta_outfile_open(path_in("a.json"), &a, &err), HTA_OK);
    CHECK_EQ_I64(hta_outfile_open(path_in("b.json"), &b, &err), HTA_OK);
    CHECK_EQ_I64(entries(), 2);
    hta_outfile_remove_temps();
    CHECK_EQ_I64(entries(), 0);
    /* the rename then has nothing to put in place: an error naming the output, nothing created */
    CHECK_EQ_I64(hta_outfile_close(a, 1, &err), HTA_EIO);
    CHECK(strstr(err.msg, "a.json: cannot put the file in place") != NULL);
    hta_outfile_close(b, 0, NULL);
    CHECK_EQ_I64(entries(), 0);
    cleanup();
}

static void derived_trace_refuses_its_input(void) {
    fresh();
    hta_error err = {0};
    const char *in = path_in("in.json");
    const char *text =
        "{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\", \"cat\": \"cpu_op\", \"ts\": 1, \"dur\": 2}]}";
    put_file(in, text);
    CHECK_EQ_I64(hta_rawout_derive(in, in, 0, NULL, &err), HTA_EINVAL);
    CHECK(strstr(err.msg, "is the input") != NULL);
    char got[256];
    CHECK_EQ_I64(read_file(in, got, sizeof got), strlen(text));
    CHECK(!memcmp(got, text, strlen(text)));
    CHECK_EQ_I64(entries(), 1);
    /* and to another file it is written */
    CHECK_EQ_I64(hta_rawout_derive(in, path_in("out.json"), 0, NULL, &err), HTA_OK);
    CHECK_EQ_I64(entries(), 2);
    cleanup();
}

UNIT_MAIN(T(commit_and_rollback), T(identity), T(checks), T(rank_file_names), T(signal_handler_removes_temps),
          T(derived_trace_refuses_its_input))
