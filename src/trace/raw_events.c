/* Reading back the raw JSON of chosen rows: for args that have no slot. */
#include "hta/rawtrace.h"
#include "hta/trace.h"

typedef struct want {
    const hta_rank *r;
    const size_t *rows;
    size_t n, next;
    hta_raw_event_fn fn;
    void *ctx;
} want;

static int on_event(void *ctx, uint32_t index, const char *json, size_t len) {
    want *w = ctx;
    while (w->next < w->n && w->r->index[w->rows[w->next]] < index) w->next++;
    if (w->next >= w->n) return 0;
    if (w->r->index[w->rows[w->next]] != index) return 0;
    return w->fn(w->ctx, w->rows[w->next++], json, len);
}

hta_status hta_trace_raw_events(const hta_rank *r, const size_t *rows, size_t nrows, hta_raw_event_fn fn,
                                void *ctx, hta_error *err) {
    want w = {r, rows, nrows, 0, fn, ctx};
    hta_raw_callbacks cb = {NULL, on_event, &w};
    return hta_raw_scan(r->path, &cb, err);
}
