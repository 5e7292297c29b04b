/* JSON string quoting shared by every writer of JSON (tables, traces). */
#include "hta/util.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


int hta_json_quote(const char *s, hta_put_fn put, void *ctx) {
    int rc = put(ctx, "\"", 1);
    const char *run = s; /* bytes that need no escape go out in one call */
    for (const char *p = s; !rc && *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c != '"' && c != '\\' && c >= 0x20) continue;
        char e[8];
        size_t en = 2;
        if (c < 0x20) en = (size_t)snprintf(e, sizeof e, "\\u%04x", c);
        else e[0] = '\\', e[1] = (char)c;
        if (p > run) rc = put(ctx, run, (size_t)(p - run));
        if (!rc) rc = put(ctx, e, en);
        run = p + 1;
    }
    if (!rc && *run) rc = put(ctx, run, strlen(run));
    return rc ? rc : put(ctx, "\"", 1);
}
