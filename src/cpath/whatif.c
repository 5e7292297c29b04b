/* What-if simulation: rules that change edge weights, the new critical path,
 * and a re-timed trace (docs/critical-path.md, "What-if"). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpath/internal.h"
#include "hta/util.h"
#include "hta/vocab.h"
#include "trace/json_lex.h"

/* The selectors of a rule (docs/critical-path.md, "What-if").  Every selector but edge:... acts on
 * operator edges, through the event the edge's time is attributed to. */

/* The largest factor of xF (docs/critical-path.md, "Limits"): far beyond any real slowdown, small enough
 * that a weight times it is a checked double product, never a wrapped integer. */
#define FACTOR_MAX 1e6

/* A plain decimal number, the whole text: digits, an optional fraction, an optional exponent.  strtod
 * alone would also take " 1", "+1", "inf", "nan" and hex floats; none of those is a factor or a time. */
static int decimal(const char *s, double *v) {
    const char *p = s;
    if (!isdigit((unsigned char)*p)) return -1;
    while (isdigit((unsigned char)*p)) p++;
    if (*p == '.') {
        p++;
        if (!isdigit((unsigned char)*p)) return -1;
        while (isdigit((unsigned char)*p)) p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') p++;
        if (!isdigit((unsigned char)*p)) return -1;
        while (isdigit((unsigned char)*p)) p++;
    }
    if (*p) return -1;
    *v = strtod(s, NULL);
    return isfinite(*v) ? 0 : -1;
}

/* Decimal us text (checked by decimal()) to exact ns, rounded half to even below the ns: the loader's
 * own conversion (json_lex), on a copy with the sentinel and padding it reads. */
static int exact_ns(const char *s, int64_t *ns) {
    char b[64 + HTA_LEX_PAD];
    size_t n = strlen(s);
    if (n >= 64) return -1;
    memcpy(b, s, n);
    b[n] = ' '; /* ends the number before the sentinel */
    memset(b + n + 1, 0, sizeof b - n - 1);
    lex L = {.end = b + n + 1};
    lex_num x;
    const char *q;
    return lex_number(&L, b, &q, &x) || q != b + n || lex_num_scaled(&x, 3, ns) ? -1 : 0;
}

hta_status hta_cpath_rule_parse(const char *text, hta_cpath_rule *r, hta_error *err) {
    memset(r, 0, sizeof *r);
    /* the last '=': a name glob may contain one, the action never does */
    const char *eq = strrchr(text, '=');
    if (!eq || eq == text)
        return hta_fail(err, HTA_EINVAL, "what-if rule '%s': expected SELECTOR=ACTION (e.g. type:comm=x0.5)", text);
    size_t sl = (size_t)(eq - text);
    char sel[512];
    if (sl >= sizeof sel) return hta_fail(err, HTA_EINVAL, "what-if rule '%s': selector too long", text);
    memcpy(sel, text, sl);
    sel[sl] = 0;
    const char *act = eq + 1, *arg = strchr(sel, ':');
    char *end;
    /* xF or *F scales, a bare number sets: plain decimals in a bounded range, so that no weight a rule
     * makes can leave int64 (the scaled weight is checked again when applied) */
    if (!strcmp(act, "median") && !strncmp(sel, "rank:", 5)) {
        /* rank:R=median: the rank as fast as the median rank (hta_sim_weights) */
        r->scale = 1;
        r->factor = 1;
        r->median = 1;
    } else if (*act == 'x' || *act == '*') {
        r->scale = 1;
        if (decimal(act + 1, &r->factor) || r->factor > FACTOR_MAX)
            return hta_fail(err, HTA_EINVAL,
                            "what-if rule '%s': bad factor '%s' (xF with F a decimal number, 0 <= F <= 1e6)",
                            text, act);
    } else {
        double v;
        /* the action is in us, as every time the user sees; edges weigh ns, at most a time's range.  The
         * ns are read from the text exactly, as the loader reads a dur. */
        if (decimal(act, &v) || exact_ns(act, &r->value_ns) || r->value_ns > HTA_TIME_MAX_NS)
            return hta_fail(err, HTA_EINVAL,
                            "what-if rule '%s': bad action '%s' (xF scales; a decimal number of us, "
                            "0 <= V < 2^62 ns, sets)", text, act);
    }
    size_t kl = arg ? (size_t)(arg - sel) : sl;
    const char *a = arg ? arg + 1 : "";
#define IS(k) (kl == strlen(k) && !strncmp(sel, k, kl))
    if (IS("kernel") && *a) r->what = W_KERNEL;
    else if (IS("op") && *a) r->what = W_OP;
    else if (IS("cpu") && !arg) r->what = W_CPU;
    else if (IS("gpu") && !arg) r->what = W_GPU;
    else if (IS("type")) {
        r->what = W_TYPE;
        if (strcmp(a, "comm") && strcmp(a, "comp") && strcmp(a, "mem") && strcmp(a, "other"))
            return hta_fail(err, HTA_EINVAL, "what-if rule '%s': type is comm, comp, mem or other", text);
    } else if (IS("stream")) {
        /* digits only, within int64 (strtoll would clamp 99999999999999999999 to INT64_MAX) */
        r->what = W_STREAM;
        errno = 0;
        r->num = strtoll(a, &end, 10);
        if (!isdigit((unsigned char)*a) || *end || errno)
            return hta_fail(err, HTA_EINVAL, "what-if rule '%s': stream needs a number, 0 <= N < 2^63", text);
    } else if (IS("rank")) {
        /* digits only, a rank number */
        r->what = W_RANK;
        errno = 0;
        r->num = strtoll(a, &end, 10);
        if (!isdigit((unsigned char)*a) || *end || errno || r->num > INT32_MAX)
            return hta_fail(err, HTA_EINVAL, "what-if rule '%s': rank needs a number, 0 <= R < 2^31", text);
    } else if (IS("edge")) {
        r->what = W_EDGE;
        if (strcmp(a, "launch") && strcmp(a, "kk"))
            return hta_fail(err, HTA_EINVAL, "what-if rule '%s': edge is launch or kk", text);
    } else {
        return hta_fail(err, HTA_EINVAL,
                        "what-if rule '%s': unknown selector (kernel:GLOB, type:comm|comp|mem|other, op:GLOB, "
                        "cpu, gpu, stream:N, edge:launch|kk, rank:R)", text);
    }
#undef IS
    if (!(r->pattern = strdup(a))) return hta_oom(err);
    return HTA_OK;
}

const char *cp_rule_text(const hta_cpath_rule *r, char *buf, size_t n) {
    static const char *const SEL[] = {"kernel", "type", "op", "cpu", "gpu", "stream", "edge", "rank"};
    char act[64];
    if (r->median) snprintf(act, sizeof act, "median");
    else if (r->scale) snprintf(act, sizeof act, "x%g", r->factor);
    else hta_raw_format_us(r->value_ns, 0, act);
    snprintf(buf, n, "%s%s%s=%s", SEL[r->what], *r->pattern ? ":" : "", r->pattern, act);
    return buf;
}

void hta_cpath_rule_free(hta_cpath_rule *r) {
    free(r->pattern);
    r->pattern = NULL;
}

/* HTA's kernel types (analyses.md §1), the same words as its breakdowns */
int cp_type_match(const char *pat, const char *name) {
    hta_kernel_type k = hta_kernel_type_of(name);
    if (!strcmp(pat, "comm")) return k == HTA_KT_COMMUNICATION;
    if (!strcmp(pat, "comp")) return k == HTA_KT_COMPUTATION;
    if (!strcmp(pat, "mem")) return k == HTA_KT_MEMORY;
    return k == HTA_KT_OTHER;
}

/* Full name or shortened name (analyses.md §0.4): a glob like aten::* or nccl* need not spell out template
 * arguments.  Both shortenings: the breakdown's s_name is HTA's (at::native::::k), the rest of hta
 * writes at::native::k. */
int cp_name_match(const char *pat, const char *name) {
    if (cp_glob(pat, name)) return 1;
    char *s = hta_shorten_name(name), *h = hta_shorten_name_hta(name);
    int m = (s && cp_glob(pat, s)) || (h && cp_glob(pat, h));
    free(s);
    free(h);
    return m;
}

static int selects(const hta_cp_graph *g, const hta_cpath_rule *r, const hta_cp_edge *e) {
    if (r->what == W_EDGE)
        return e->type == (strcmp(r->pattern, "launch") ? HTA_CP_KK : HTA_CP_LAUNCH);
    /* Only operator time belongs to an event; dependency and sync edges carry no time, and launch or
     * kernel-kernel gaps belong to no event's own work. */
    if (e->type != HTA_CP_OPERATOR || e->attr < 0) return 0;
    const hta_cp_event *ev = &g->ev[e->attr];
    int gpu = ev->stream != -1;
    const char *name = hta_sym(g->sym, ev->name);
    switch (r->what) {
    case W_CPU: return !gpu;
    case W_GPU: return gpu;
    case W_OP: return !gpu && cp_name_match(r->pattern, name);
    case W_KERNEL: return gpu && cp_name_match(r->pattern, name);
    case W_TYPE: return gpu && cp_type_match(r->pattern, name);
    case W_STREAM: return gpu && ev->stream == r->num;
    case W_RANK: return g->rank == r->num;
    default: return 0;
    }
}

/* Rules on operator edges depend on the attributed event only through its
 * name and side (CPU/GPU), except stream rules: name matches (globs on the
 * shortened name, kernel types) are decided once per (name, side). */
hta_status hta_cpath_whatif_weights(const hta_cp_graph *g, const hta_cpath_rule *rules,
                                    size_t nrules, int64_t *w, size_t *nchanged, hta_error *err) {
    for (size_t i = 0; i < g->nedge; i++) w[i] = g->edge[i].w;
    size_t nm = 2 * (size_t)hta_symtab_count(g->sym) + 2;
    unsigned char *changed = calloc(g->nedge ? g->nedge : 1, 1);
    signed char *memo = malloc(nm);
    if (!changed || !memo) {
        free(changed);
        free(memo);
        return hta_oom(err);
    }
    /* Rules apply in order, each to the weights the earlier ones left (docs: a later rule acts on their
     * result). */
    for (size_t k = 0; k < nrules; k++) {
        const hta_cpath_rule *r = &rules[k];
        if (r->median) {
            free(changed);
            free(memo);
            return hta_fail(err, HTA_EINVAL, "what-if rule 'rank:%lld=median' needs every rank: the trace and "
                                             "--all-ranks", (long long)r->num);
        }
        int by_name = r->what != W_EDGE && r->what != W_STREAM;
        memset(memo, -1, nm);
        for (size_t i = 0; i < g->nedge; i++) {
            const hta_cp_edge *e = &g->edge[i];
            int s;
            if (by_name && e->type == HTA_CP_OPERATOR && e->attr >= 0) {
                const hta_cp_event *ev = &g->ev[e->attr];
                signed char *m = &memo[2 * (size_t)ev->name + (ev->stream != -1)];
                if (*m < 0) *m = (signed char)selects(g, r, e);
                s = *m;
            } else {
                s = selects(g, r, e);
            }
            if (!s) continue;
            if (r->scale) {
                /* an int64 weight times a factor <= FACTOR_MAX is a finite double; a result beyond the
                 * times the model holds is refused rather than wrapped.  The test is x < 2^62 exactly:
                 * HTA_TIME_MAX_NS as a double rounds up to 2^62, which llround would make 2^62 ns. */
                double x = (double)w[i] * r->factor;
                if (!(fabs(x) < 0x1p62)) {
                    free(changed);
                    free(memo);
                    char rt[600];
                    return hta_fail(err, HTA_EINVAL,
                                    "what-if rule '%s': an edge of %.3f us would weigh %.6g us, beyond the times "
                                    "hta holds (|t| < 2^62 ns)", cp_rule_text(r, rt, sizeof rt),
                                    (double)w[i] / 1000.0, x / 1000.0);
                }
                w[i] = llround(x);
            } else {
                w[i] = r->value_ns;
            }
            changed[i] = 1;
        }
    }
    size_t n = 0;
    for (size_t i = 0; i < g->nedge; i++) n += changed[i];
    *nchanged = n;
    free(changed);
    free(memo);
    return HTA_OK;
}

/* ---- simulated trace ---- */

typedef struct sim {
    const hta_cp_graph *g;
    const hta_rank *r;
    int32_t *ev_of_index; /* event index -> graph event, -1 */
    size_t nindex;
    int64_t *tn;          /* simulated node times */
    hta_raw_obj obj;
} sim;

/* Rewrites one event of the original file: a graph event gets its simulated start and the duration its
 * nodes' new distance implies; every other event (annotations, flows, events without nodes) is copied
 * unchanged. */
static int sim_event(void *ctx, hta_rawout *w, uint32_t index, const char *json, size_t len) {
    sim *x = ctx;
    int32_t ce = index < x->nindex ? x->ev_of_index[index] : -1;
    const hta_cp_event *ev = ce >= 0 ? &x->g->ev[ce] : NULL;
    if (!ev || ev->start < 0 || ev->row < 0) return hta_rawout_event(w, json, len);
    int rc = hta_raw_obj_parse(&x->obj, json, len);
    if (rc == -2) return hta_rawout_oom(w);
    const hta_raw_member *ts = rc ? NULL : hta_raw_obj_get(&x->obj, "ts");
    if (!ts) return hta_rawout_event(w, json, len);
    const hta_cp_node *ns = &x->g->node[ev->start], *ne = &x->g->node[ev->end];
    /* The duration as written plus the change of the node distance: the graph's times may be HTA-rounded,
     * the file's are exact, so the file's own ts and dur are shifted rather than replaced by graph times.
     * Every step is checked, and the new times must lie where the loader takes them again (trace.h). */
    int64_t shift, span, ndur, nts, nend;
    if (__builtin_sub_overflow(x->tn[ev->start], ns->ts, &shift) ||
        __builtin_sub_overflow(x->tn[ev->end], x->tn[ev->start], &span) ||
        __builtin_add_overflow(x->r->dur[ev->row], span, &ndur) ||
        __builtin_sub_overflow(ndur, ne->ts - ns->ts, &ndur) ||
        __builtin_add_overflow(x->r->ts[ev->row], shift, &nts))
        return hta_rawout_fail(w, HTA_EINVAL, "what-if trace: event %u would move beyond int64 ns", index);
    if (ndur < 0) ndur = 0;
    if (nts > HTA_TIME_MAX_NS || nts < -HTA_TIME_MAX_NS || __builtin_add_overflow(nts, ndur, &nend) ||
        nend > HTA_TIME_MAX_NS) {
        char a[32], b[32];
        hta_raw_format_us(nts, 0, a);
        hta_raw_format_us(ndur, 0, b);
        return hta_rawout_fail(w, HTA_EINVAL,
                               "what-if trace: event %u would start at %s us and last %s us, beyond the times hta "
                               "holds (|t| < 2^62 ns)", index, a, b);
    }
    const hta_raw_member *dur = hta_raw_obj_get(&x->obj, "dur");
    char tb[32], db[32];
    hta_raw_edit e[2] = {{ts->val, ts->val + ts->vlen, tb, hta_raw_format_us(nts, 0, tb)}};
    if (dur) e[1] = (hta_raw_edit){dur->val, dur->val + dur->vlen, db, hta_raw_format_us(ndur, 0, db)};
    return hta_rawout_edited(w, json, len, e, dur ? 2 : 1);
}

hta_status hta_cpath_whatif_trace(hta_ctx *ctx, const hta_cp_graph *g, const int64_t *w,
                                  const char *out_path, hta_error *err) {
    const hta_trace *t = ctx->trace;
    const hta_rank *r = NULL;
    for (size_t i = 0; i < t->nranks; i++)
        if (t->ranks[i]->rank == g->rank) r = t->ranks[i];
    if (!r) return hta_fail(err, HTA_EINVAL, "rank %d is not in the trace", (int)g->rank);
    sim x = {g, r, NULL, 0, NULL, {0}};
    for (size_t i = 0; i < g->nev; i++) {
        if (g->ev[i].row < 0) return hta_fail(err, HTA_EINVAL, "the graph was not built from this trace");
        if (g->ev[i].index + 1 > x.nindex) x.nindex = g->ev[i].index + 1;
    }
    /* schedule weights: the real gap of every edge (so an unchanged graph
     * reproduces the trace), the changed weight where a rule changed it, and
     * 0 for a blocking call's return when a sync edge tells when it returns */
    int64_t *ws = malloc((g->nedge ? g->nedge : 1) * sizeof *ws);
    unsigned char *syncdst = calloc(g->nnode ? g->nnode : 1, 1);
    x.ev_of_index = malloc((x.nindex ? x.nindex : 1) * sizeof *x.ev_of_index);
    x.tn = malloc((g->nnode ? g->nnode : 1) * sizeof *x.tn);
    hta_status st = HTA_OK;
    if (!ws || !syncdst || !x.ev_of_index || !x.tn) {
        st = hta_oom(err);
        goto done;
    }
    for (size_t i = 0; i < g->nedge; i++)
        if (g->edge[i].type == HTA_CP_SYNC) syncdst[g->edge[i].v] = 1;
    for (size_t i = 0; i < g->nedge; i++) {
        const hta_cp_edge *e = &g->edge[i];
        int64_t gap;
        if (__builtin_sub_overflow(g->node[e->v].ts, g->node[e->u].ts, &gap)) {
            st = hta_fail(err, HTA_EINVAL, "the graph's node times are more than 2^63 ns apart");
            goto done;
        }
        /* A blocking call (weight 0) whose end a sync edge decides gets 0: it returns when the synchronised
         * GPU work ends, not after its old duration. */
        if (w[i] != e->w) ws[i] = w[i];
        else if (e->type == HTA_CP_OPERATOR && e->w == 0 && gap > 0 && syncdst[e->v]) ws[i] = 0;
        else ws[i] = gap;
    }
    if ((st = hta_cpath_schedule(g, ws, x.tn, err))) goto done;
    for (size_t i = 0; i < x.nindex; i++) x.ev_of_index[i] = -1;
    for (size_t i = 0; i < g->nev; i++) x.ev_of_index[g->ev[i].index] = (int32_t)i;
    size_t pl = strlen(out_path);
    hta_rawout_hooks h = {.event = sim_event, .ctx = &x};
    st = hta_rawout_derive(r->path, out_path, pl > 3 && !strcmp(out_path + pl - 3, ".gz"), &h, err);
done:
    free(ws);
    free(syncdst);
    free(x.ev_of_index);
    free(x.tn);
    hta_raw_obj_free(&x.obj);
    return st;
}
