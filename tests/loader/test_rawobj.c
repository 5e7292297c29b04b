/* The raw event reader (hta_raw_obj) and the derived-trace writer
 * (hta_rawout_derive): keys decoded, the last of a repeated key, exact times,
 * and a derived trace that copies what it does not change byte for byte. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hta/rawjson.h"
#include "../check.h"

static int parse(hta_raw_obj *o, const char *s) { return hta_raw_obj_parse(o, s, strlen(s)); }

static void reader(void) {
    hta_raw_obj o = {0};
    int64_t v;
    CHECK(parse(&o, " {\"n\\u0061me\": \"a\", \"ts\": 1.5, \"ts\": 12.0005, \"x\\\"y\": [1, {\"}\": 2}], \"ph\": \"X\"}") == 0);
    CHECK(o.n == 5);
    const hta_raw_member *m = hta_raw_obj_get(&o, "name");
    CHECK(m && m->rklen == 9 && hta_raw_str_is(m, "a"));
    m = hta_raw_obj_get(&o, "ts"); /* the last, as the loader */
    CHECK(m && hta_raw_time_ns(m, &v) == 0 && v == 12000); /* 12000.5 ns: half to even */
    CHECK(hta_raw_obj_get(&o, "x\"y") && hta_raw_obj_get(&o, "x\"y")->vlen == 13);
    CHECK(hta_raw_str_is(hta_raw_obj_get(&o, "ph"), "X") && !hta_raw_str_is(hta_raw_obj_get(&o, "ph"), "XX"));
    CHECK(*o.close == '}');
    CHECK(parse(&o, "{\"a\": \"\\u0041\", \"i\": -42, \"f\": 1e3, \"big\": 99999999999999999999}") == 0);
    CHECK(hta_raw_str_is(hta_raw_obj_get(&o, "a"), "A"));
    CHECK(hta_raw_int(hta_raw_obj_get(&o, "i"), &v) == 0 && v == -42);
    CHECK(hta_raw_int(hta_raw_obj_get(&o, "f"), &v) == -1);
    CHECK(hta_raw_time_ns(hta_raw_obj_get(&o, "f"), &v) == 0 && v == 1000000);
    CHECK(hta_raw_int(hta_raw_obj_get(&o, "big"), &v) == -1);
    CHECK(hta_raw_time_ns(hta_raw_obj_get(&o, "a"), &v) == -1);
    CHECK(parse(&o, "{}") == 0 && o.n == 0);
    CHECK(parse(&o, "{\"a\": 1,}") == -1);
    CHECK(parse(&o, "{\"a\" 1}") == -1);
    CHECK(parse(&o, "{\"a\": \"x}") == -1);
    CHECK(parse(&o, "[1]") == -1);
    hta_raw_obj_free(&o);
    char b[32];
    CHECK(hta_raw_format_us(1500, 0, b) == 3 && !strcmp(b, "1.5"));
    CHECK(hta_raw_format_us(-1000, 0, b) == 2 && !strcmp(b, "-1"));
    CHECK(hta_raw_format_us(1500, 1, b) == 5 && !strcmp(b, "1.500"));
    CHECK(hta_raw_format_us(-5, 1, b) == 6 && !strcmp(b, "-0.005"));
}

/* Hooks: events 1 and 2 get an arg, event 3 is dropped, one event is added. */
typedef struct ctx {
    hta_raw_obj o;
    uint32_t fail_at;
} ctx;

static int on_event(void *c, hta_rawout *w, uint32_t index, const char *json, size_t len) {
    ctx *x = c;
    if (index == x->fail_at) return hta_rawout_fail(w, HTA_EINVAL, "hook says no");
    if (index == 3) return 0;
    if (index != 1 && index != 2) return hta_rawout_event(w, json, len);
    if (hta_raw_obj_parse(&x->o, json, len)) return hta_rawout_fail(w, HTA_EFORMAT, "bad event");
    return hta_rawout_add_arg(w, &x->o, json, len, "\"k\": 1", 6);
}

static int on_tail(void *c, hta_rawout *w) { return hta_rawout_event(w, "{\"ph\": \"C\"}", 11); }

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    static char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static void writer(void) {
    char in[] = "/tmp/test_rawobj_inXXXXXX";
    int fd = mkstemp(in);
    static const char src[] = "{\"schemaVersion\": 1,  \"traceEvents\" : [ {\"ph\": \"X\"},\n"
                              "{\"ph\": \"X\", \"args\": {\"a\": 1} }, { }, {\"drop\": 1}], \"after\": [1, 2]}";
    CHECK(fd >= 0 && write(fd, src, sizeof src - 1) == (ssize_t)(sizeof src - 1));
    close(fd);
    char out[64];
    snprintf(out, sizeof out, "%s.out", in);
    ctx x = {{0}, 99};
    hta_rawout_hooks h = {.event = on_event, .tail = on_tail, .ctx = &x};
    hta_error err;
    CHECK(hta_rawout_derive(in, out, 0, &h, &err) == HTA_OK);
    const char *got = slurp(out);
    CHECK(got && !strcmp(got, "{\n\"schemaVersion\": 1,\n\"traceEvents\": [\n{\"ph\": \"X\"},\n"
                              "{\"ph\": \"X\", \"args\": {\"a\": 1, \"k\": 1} },\n{ \"args\": {\"k\": 1}},\n"
                              "{\"ph\": \"C\"}\n],\n\"after\": [1, 2]\n}\n"));
    if (got) fprintf(stderr, "%s", check_fails ? got : "");
    /* a hook's failure is the writer's answer (its own message), and no
     * output is left */
    unlink(out);
    x.fail_at = 2;
    CHECK(hta_rawout_derive(in, out, 0, &h, &err) == HTA_EINVAL && !strcmp(err.msg, "hook says no"));
    CHECK(access(out, F_OK) != 0);
    hta_raw_obj_free(&x.o);
    unlink(in);
    unlink(out);
}

int main(void) {
    reader();
    writer();
    if (check_fails) return 1;
    puts("test_rawobj: ok");
    return 0;
}
