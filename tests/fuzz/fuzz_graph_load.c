/* libFuzzer target: any bytes as a saved critical-path graph (hta critical-path --graph FILE).  The
 * reader must load them or refuse them with a message; a graph it loads must hold what store.c checks
 * (times within |t| < 2^62 ns, ids in range, names valid UTF-8 without NUL), and the report and what-if
 * on it must succeed or fail with a message: no overflow (UBSan), no invalid output. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "hta/cpath.h"
#include "hta/trace.h"
#include "trace/json_lex.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const hta_cp_graph *g) {
    for (uint32_t i = 0; i < hta_symtab_count(g->sym); i++)
        if (!lex_utf8_valid(hta_sym(g->sym, i), hta_sym_len(g->sym, i))) abort();
    for (size_t i = 0; i < g->nnode; i++) {
        int64_t ts = hta_cp_node_ts(g, i);
        if (ts < -HTA_TIME_MAX_NS || ts > HTA_TIME_MAX_NS || hta_cp_node_ev(g, i) >= g->nev) abort();
    }
    for (size_t i = 0; i < g->nedge; i++) {
        const hta_cp_edge *e = &g->edge[i];
        int64_t w = hta_cp_edge_w(g, i);
        if (e->u >= g->nnode || e->v >= g->nnode || w < -HTA_TIME_MAX_NS || w > HTA_TIME_MAX_NS ||
            e->attr >= (int64_t)g->nev)
            abort();
    }
    if (g->path.length < 0) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static char path[64];
    if (!path[0]) snprintf(path, sizeof path, "/tmp/hta-fuzz-%d.cpg", (int)getpid());
    if (fuzz_to_file(path, data, size)) return 0;
    hta_cp_graph *g = NULL;
    hta_error err = {0};
    if (hta_cpath_load(path, &g, &err) != HTA_OK) {
        if (!err.msg[0]) abort();
        return 0;
    }
    check(g);
    hta_result res;
    hta_result_init(&res);
    static const char *const rules[] = {"gpu=x2", "cpu=x0.5", "edge:kk=4611686018427387.903", "kernel:*=x1e6"};
    if (hta_cpath_report(g, &g->path, NULL, NULL, 0, 3, &res, &err) == HTA_OK) {
        int64_t *w = malloc((g->nedge ? g->nedge : 1) * sizeof *w);
        for (size_t k = 0; w && k < sizeof rules / sizeof *rules; k++) {
            hta_cpath_rule r;
            if (hta_cpath_rule_parse(rules[k], &r, &err)) abort();
            size_t changed;
            hta_cp_path p = {0};
            if (hta_cpath_whatif_weights(g, &r, 1, w, &changed, &err) == HTA_OK &&
                hta_cpath_longest(g, w, &p, &err) == HTA_OK) {
                if (p.length < 0) abort();
                if (r.scale && r.factor >= 1 && p.length < g->path.length) abort();
                if (hta_cpath_summary(g, &p, w, NULL, 0, &HTA_CP_WHATIF_SUMMARY_TABLE, &res, &err)) abort();
                hta_cpath_path_free(&p);
            } else if (!err.msg[0]) {
                abort();
            }
            hta_cpath_rule_free(&r);
        }
        free(w);
        FILE *devnull = fopen("/dev/null", "w");
        if (devnull) {
            hta_result_write(devnull, &res, HTA_FMT_JSON);
            fclose(devnull);
        }
    } else if (!err.msg[0]) {
        abort();
    }
    hta_result_free(&res);
    hta_cpath_free(g);
    return 0;
}
