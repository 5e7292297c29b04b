/* libFuzzer target: any text as a what-if rule (hta critical-path --what-if).  It must parse or fail with
 * a message; a parsed rule applied to a graph whose weights span the whole time range (0 .. 2^62 - 1 ns)
 * must give weights within that range, or fail with a message; the longest path under them must be
 * found or refused, never wrapped; and a slowdown (a factor >= 1) must never shorten the path. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hta/cpath.h"
#include "hta/trace.h"
#include "fuzz_graph.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static hta_cp_graph *g;
    if (!g && !(g = fuzz_graph_hostile())) abort();
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = 0;
    hta_cpath_rule r;
    hta_error err = {0};
    if (hta_cpath_rule_parse(text, &r, &err) != HTA_OK) {
        if (!err.msg[0]) abort(); /* every refusal explains itself */
        free(text);
        return 0;
    }
    /* what the parser promises (docs/critical-path.md, "Limits") */
    if (r.scale && !(r.factor >= 0 && r.factor <= 1e6)) abort();
    if (!r.scale && (r.value_ns < 0 || r.value_ns > HTA_TIME_MAX_NS)) abort();
    int64_t *w = malloc(g->nedge * sizeof *w);
    size_t changed = 0;
    if (w && hta_cpath_whatif_weights(g, &r, 1, w, &changed, &err) == HTA_OK) {
        for (size_t i = 0; i < g->nedge; i++)
            if (w[i] < -HTA_TIME_MAX_NS || w[i] > HTA_TIME_MAX_NS) abort();
        hta_cp_path p = {0};
        if (hta_cpath_longest(g, w, &p, &err) == HTA_OK) {
            if (p.length < 0) abort();
            if (r.scale && r.factor >= 1 && p.length < g->path.length) abort(); /* a slowdown saved time */
            hta_cpath_path_free(&p);
        } else if (!err.msg[0]) {
            abort();
        }
    } else if (w && !err.msg[0]) {
        abort();
    }
    free(w);
    hta_cpath_rule_free(&r);
    free(text);
    return 0;
}
