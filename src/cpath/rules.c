/* The what-if rules, one module for every engine (docs/critical-path.md, "What-if"): parsing, the rule as
 * written, what a selector selects on a graph (HTA's, a rank's simulation graph, a job's), the action on a
 * weight with its limits, and the rule that a rule matching nothing is an error.  HTA's graph, the
 * simulation graph and the job's replay all apply rules through cp_rules_apply and cp_rule_scale, so a rule
 * means the same everywhere. */
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
static int cp_type_match(const char *pat, const char *name) {
    hta_kernel_type k = hta_kernel_type_of(name);
    if (!strcmp(pat, "comm")) return k == HTA_KT_COMMUNICATION;
    if (!strcmp(pat, "comp")) return k == HTA_KT_COMPUTATION;
    if (!strcmp(pat, "mem")) return k == HTA_KT_MEMORY;
    return k == HTA_KT_OTHER;
}

/* Full name or shortened name (analyses.md §0.4): a glob like aten::* or nccl* need not spell out template
 * arguments.  Both shortenings: the breakdown's s_name is HTA's (at::native::::k), the rest of hta
 * writes at::native::k. */
static int cp_name_match(const char *pat, const char *name) {
    if (cp_glob(pat, name)) return 1;
    char *s = hta_shorten_name(name), *h = hta_shorten_name_hta(name);
    int m = (s && cp_glob(pat, s)) || (h && cp_glob(pat, h));
    free(s);
    free(h);
    return m;
}

/* Whether x or an event enclosing it on its thread (the simulation graph's ev_parent; HTA's graph has none)
 * has a name the glob matches; in[] memoises per event (-1 unknown), memo[] per name. */
static int inside(const hta_cp_graph *g, const char *pat, int8_t *in, signed char *memo, uint32_t x) {
    uint32_t chain[256];
    size_t n = 0;
    int32_t y = (int32_t)x;
    int v = 0;
    while (y >= 0 && in[y] < 0) {
        signed char *m = &memo[g->ev[y].name];
        if (*m < 0) *m = (signed char)cp_name_match(pat, hta_sym(g->sym, g->ev[y].name));
        if (*m) {
            v = 1;
            break;
        }
        if (n < sizeof chain / sizeof *chain) chain[n++] = (uint32_t)y;
        y = g->ev_parent ? g->ev_parent[y] : -1;
    }
    if (y >= 0 && !v) v = in[y];
    if (y >= 0 && v && in[y] < 0) in[y] = 1;
    for (size_t i = 0; i < n; i++) in[chain[i]] = (int8_t)v;
    return v;
}

/* What a selector selects.  Time is an event's own (an operator edge) or, on a thread, the untraced time
 * between events (a gap edge, CPU time of no event or of the innermost one open); launch delays and
 * kernel-kernel gaps belong to no event; dependency, sync and wait edges carry no work. */
static int selects(const hta_cp_graph *g, const hta_cpath_rule *r, const hta_cp_edge *e, int64_t rank,
                   int8_t *in, signed char *memo) {
    if (r->what == W_EDGE) return e->type == (strcmp(r->pattern, "launch") ? HTA_CP_KK : HTA_CP_LAUNCH);
    /* an edge of neither kind of work is no selector's: known from the edge alone, before its event is read
     * (a cache miss on the events per edge, most of a rule's time) */
    if (e->type != HTA_CP_OPERATOR && e->type != HTA_CP_GAP) return 0;
    if (e->type == HTA_CP_GAP && r->what != W_OP) /* CPU time; only an operator's selector reads its event */
        return r->what == W_CPU || (r->what == W_RANK && rank == r->num);
    const hta_cp_event *ev = e->attr >= 0 ? &g->ev[e->attr] : NULL;
    int64_t stream = ev ? hta_cp_ev_stream(g, ev) : -1;
    int cpu = e->type == HTA_CP_GAP || (e->type == HTA_CP_OPERATOR && ev && stream == -1);
    int gpu = e->type == HTA_CP_OPERATOR && ev && stream != -1;
    switch (r->what) {
    case W_CPU: return cpu;
    case W_GPU: return gpu;
    case W_OP: return cpu && ev && inside(g, r->pattern, in, memo, (uint32_t)e->attr);
    case W_KERNEL:
    case W_TYPE:
        if (!gpu) return 0;
        if (memo[ev->name] < 0)
            memo[ev->name] = (signed char)(r->what == W_KERNEL ? cp_name_match(r->pattern, hta_sym(g->sym, ev->name))
                                                               : cp_type_match(r->pattern, hta_sym(g->sym, ev->name)));
        return memo[ev->name];
    case W_STREAM: return gpu && stream == r->num;
    case W_RANK: return (cpu || gpu) && rank == r->num;
    default: return 0;
    }
}

hta_status cp_rule_scale(const hta_cpath_rule *r, double f, int64_t *w, hta_error *err) {
    if (!r->scale) {
        *w = r->value_ns;
        return HTA_OK;
    }
    /* an int64 weight times a factor <= FACTOR_MAX is a finite double; a result beyond the times the model
     * holds is refused rather than wrapped or left as it was.  The test is x < 2^62 exactly: HTA_TIME_MAX_NS
     * as a double rounds up to 2^62, which llround would make 2^62 ns. */
    double x = (double)*w * f;
    if (!(fabs(x) < 0x1p62)) {
        char rt[600];
        return hta_fail(err, HTA_EINVAL,
                        "what-if rule '%s': an edge of %.3f us would weigh %.6g us, beyond the times hta holds "
                        "(|t| < 2^62 ns)", cp_rule_text(r, rt, sizeof rt), (double)*w / 1000.0, x / 1000.0);
    }
    *w = llround(x);
    return HTA_OK;
}

hta_status cp_rules_apply(const hta_cp_graph *g, const hta_cpath_rule *rules, size_t nrules, const cp_rules_opts *o,
                          int64_t *w, size_t *nchanged, hta_error *err) {
    /* w is filled by the first rule's pass over the edges (w[0 .. filled) done), which reads each edge anyway:
     * one pass over the graph's largest array less (the fill alone was a third of this function's time) */
    size_t filled = 0, nch = 0;
    unsigned char *changed = calloc(g->nedge ? g->nedge : 1, 1);
    signed char *memo = malloc(hta_symtab_count(g->sym) + 1);
    int8_t *in = malloc(g->nev ? g->nev : 1);
    hta_status st = HTA_OK;
    if (!changed || !memo || !in) {
        st = hta_oom(err);
        goto done;
    }
    /* Rules apply in order, each to the weights the earlier ones left */
    for (size_t k = 0; k < nrules && !st; k++) {
        const hta_cpath_rule *r = &rules[k];
        const double *mf = o && o->factor ? o->factor[k] : NULL;
        if (r->median && !mf) {
            if (o && o->pending && o->pending(o->ctx, k)) {
                /* the factors are not known yet (the job's first pass): this rank's work is left as it is */
                if (o->hits) o->hits[k] += 1;
                continue;
            }
            if (!o) { /* HTA's graph: no factors come for it */
                st = hta_fail(err, HTA_EINVAL, "what-if rule 'rank:%lld=median' needs every rank: the trace and "
                                               "--all-ranks", (long long)r->num);
                break;
            }
        }
        memset(memo, -1, hta_symtab_count(g->sym) + 1);
        memset(in, -1, g->nev ? g->nev : 1);
        size_t hits = 0;
        const hta_cp_edge *edge = g->edge;
        size_t ne = g->nedge;
        int64_t rank = r->what == W_RANK ? g->rank : 0; /* a graph is one rank's */
        size_t x = 0;
        for (; x < ne && !st; x++) {
            const hta_cp_edge *e = &edge[x];
            if (x >= filled) w[x] = hta_cp_edge_w(g, x);
            if (!selects(g, r, e, rank, in, memo)) continue;
            hits++;
            if ((st = cp_rule_scale(r, mf ? mf[x] : r->factor, &w[x], err))) break;
            nch += !changed[x]; /* counted as they change: no pass over changed[] after */
            changed[x] = 1;
        }
        if (x + (x < ne) > filled) filled = x + (x < ne); /* a scale's error stops at edge x, w[x] read */
        if (st) break;
        for (size_t i = 0; o && o->mask && i < o->nmask; i++) {
            const hta_cp_edge *e = &g->edge[o->mask_edge[i]];
            if (selects(g, r, e, r->what == W_RANK ? g->rank : 0, in, memo)) o->mask[i] |= (uint64_t)1 << k;
        }
        if (o && o->hits) {
            o->hits[k] += hits; /* a job's rule may select on another rank: the caller decides */
            continue;
        }
        if (!hits) {
            char rt[600], where[32] = "";
            if (g->rank >= 0) snprintf(where, sizeof where, " on rank %d", (int)g->rank);
            st = hta_fail(err, HTA_EINVAL, "what-if rule '%s' matches nothing%s", cp_rule_text(r, rt, sizeof rt),
                          where);
        }
    }
    if (!st) *nchanged = nch;
done:
    for (size_t i = filled; i < g->nedge; i++) w[i] = hta_cp_edge_w(g, i); /* no rule went over these */
    free(changed);
    free(memo);
    free(in);
    return st;
}

/* HTA's graph (a trace's or a stored one) under the rules: the same selection, action and limits as on the
 * simulation graph. */
hta_status hta_cpath_whatif_weights(const hta_cp_graph *g, const hta_cpath_rule *rules, size_t nrules, int64_t *w,
                                    size_t *nchanged, hta_error *err) {
    return cp_rules_apply(g, rules, nrules, NULL, w, nchanged, err);
}
