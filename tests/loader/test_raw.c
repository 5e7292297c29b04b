/* hta_trace_raw_events hands back the exact JSON text of chosen rows: the
 * way to reach args that have no slot in the model. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hta/trace.h"
#include "../check.h"

typedef struct seen {
    size_t rows[4], n;
    char text[4][16384];
} seen;

static int on_event(void *ctx, size_t row, const char *json, size_t len) {
    seen *s = ctx;
    if (s->n < 4) {
        s->rows[s->n] = row;
        snprintf(s->text[s->n], sizeof s->text[0], "%.*s", (int)(len < 16000 ? len : 16000), json);
        s->n++;
    }
    return 0;
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "tests/data/hta/critical_path/simple_add";
    hta_trace *t;
    hta_error err;
    if (hta_trace_load(path, NULL, &t, &err)) {
        fprintf(stderr, "test_raw: %s\n", err.msg);
        return 1;
    }
    const hta_rank *r = t->ranks[0];
    /* the first kernel row and the last row */
    size_t want[2] = {0, r->n - 1};
    for (size_t i = 0; i < r->n; i++)
        if (!strcmp(hta_sym(t->sym, hta_row_cat_sym(t, r, i)), "kernel")) {
            want[0] = i;
            break;
        }
    seen s = {0};
    REQUIRE(hta_trace_raw_events(r, want, 2, on_event, &s, &err) == HTA_OK);
    REQUIRE(s.n == 2);
    REQUIRE(s.rows[0] == want[0] && s.rows[1] == want[1]);
    /* the kernel's raw args carry what the model has no slot for */
    REQUIRE(strstr(s.text[0], "\"cat\": \"kernel\"") != NULL);
    REQUIRE(strstr(s.text[0], "registers per thread") != NULL);
    char name[64];
    snprintf(name, sizeof name, "%.40s", hta_sym(t->sym, r->name[want[1]]));
    REQUIRE(strstr(s.text[1], name) != NULL);
    hta_trace_free(t);
    puts("test_raw: ok");
    return 0;
}
