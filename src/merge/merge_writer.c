/* `hta merge` output: every rank's file streamed again and every event
 * written back with its pid, ts (dur under drift) and ids rewritten; all
 * other bytes of the event are copied as they are.  Memory: one output
 * buffer and a small per-rank pid table. */
#include <stdlib.h>
#include <string.h>

#include "merge/merge_json.h"
#include "hta/merge.h"
#include "hta/rawtrace.h"

#define OUT_BUF (1u << 20)
#define MAX_MEMBERS 256

typedef struct pid_entry {
    char *text; /* the pid's raw JSON */
    size_t len;
    int has_name, has_sort;
} pid_entry;

typedef struct wctx {
    const hta_merge_plan *p;
    size_t ri; /* rank index in the plan */
    const hta_merge_rank *r;
    hta_trace_out *o;
    hta_error *err;
    hta_status st;
    char *buf;
    size_t n, cap;
    int first;
    pid_entry *pids;
    size_t npids;
    size_t last_pid;
    char **dinfo; /* per rank: distributedInfo raw JSON */
    hta_merge_stats *stats;
    mj_member m[MAX_MEMBERS];
    mj_member am[MAX_MEMBERS];
} wctx;

static int flush(wctx *w) {
    if (!w->n) return 0;
    w->st = hta_trace_out_write(w->o, w->buf, w->n, w->err);
    w->stats->bytes_out += w->n;
    w->n = 0;
    return w->st ? -1 : 0;
}

/* Room for need more bytes. */
static int room(wctx *w, size_t need) {
    if (w->n + need <= w->cap) return 0;
    if (flush(w)) return -1;
    if (need > w->cap) {
        char *b = realloc(w->buf, need);
        if (!b) {
            w->st = hta_oom(w->err);
            return -1;
        }
        w->buf = b;
        w->cap = need;
    }
    return 0;
}

static void put(wctx *w, const void *s, size_t l) {
    memcpy(w->buf + w->n, s, l);
    w->n += l;
}
#define PUTS(w, lit) put(w, lit, sizeof lit - 1)

static void put_i64(wctx *w, int64_t v) {
    char t[24];
    int n = 0;
    uint64_t x = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        t[n++] = (char)('0' + x % 10);
        x /= 10;
    } while (x);
    if (v < 0) w->buf[w->n++] = '-';
    while (n) w->buf[w->n++] = t[--n];
}

static void put_us(wctx *w, int64_t ns) {
    w->n += mj_format_us(ns, w->buf + w->n);
}

/* JSON string body of s (quotes not included), escaped. Room: 6 * len. */
static void put_escaped(wctx *w, const char *s) {
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            w->buf[w->n++] = '\\';
            w->buf[w->n++] = (char)c;
        } else if (c < 0x20) {
            static const char hex[] = "0123456789abcdef";
            PUTS(w, "\\u00");
            w->buf[w->n++] = hex[c >> 4];
            w->buf[w->n++] = hex[c & 15];
        } else {
            w->buf[w->n++] = (char)c;
        }
    }
}

static int pid_index(wctx *w, const char *v, size_t l, size_t *idx) {
    if (w->last_pid < w->npids && w->pids[w->last_pid].len == l && !memcmp(w->pids[w->last_pid].text, v, l)) {
        *idx = w->last_pid;
        return 0;
    }
    for (size_t i = 0; i < w->npids; i++)
        if (w->pids[i].len == l && !memcmp(w->pids[i].text, v, l)) {
            *idx = w->last_pid = i;
            return 0;
        }
    if (w->npids >= (size_t)w->p->pid_stride) {
        w->st = hta_fail(w->err, HTA_EFORMAT, "%s: more than %lld distinct pids", w->r->path,
                         (long long)w->p->pid_stride);
        return -1;
    }
    char *t = malloc(l + 1);
    if (!t) {
        w->st = hta_oom(w->err);
        return -1;
    }
    memcpy(t, v, l);
    t[l] = 0;
    w->pids[w->npids] = (pid_entry){t, l, 0, 0};
    *idx = w->last_pid = w->npids++;
    return 0;
}

static int is_num(const mj_member *m) {
    return m->vl && (m->v[0] == '-' || (m->v[0] >= '0' && m->v[0] <= '9'));
}

static int is_str(const mj_member *m, const char *s) {
    size_t l = strlen(s);
    return m->vl == l + 2 && m->v[0] == '"' && !memcmp(m->v + 1, s, l);
}

/* id -> id * stride + rank, so equal ids of two ranks stay apart and a
 * rank's pairs stay pairs.  Hex string ids (Chrome's "0x...") become numbers. */
static int put_id(wctx *w, const mj_member *m) {
    int64_t id;
    int ok = 0;
    if (is_num(m)) {
        ok = !mj_int(m->v, m->vl, &id);
    } else if (m->vl > 4 && m->v[0] == '"' && m->v[1] == '0' && (m->v[2] == 'x' || m->v[2] == 'X')) {
        uint64_t x = 0;
        ok = 1;
        for (size_t i = 3; i + 1 < m->vl && ok; i++) {
            char c = m->v[i];
            int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
            if (d < 0 || x >> 59) ok = 0;
            else x = x * 16 + (uint64_t)d;
        }
        if (m->vl == 4 || x > (uint64_t)INT64_MAX) ok = 0;
        id = (int64_t)x;
    }
    int64_t s = w->p->id_stride, rk = w->r->rank;
    if (ok && (id > (INT64_MAX - rk) / s || id < (INT64_MIN + rk) / s)) ok = 0;
    if (!ok) {
        w->stats->ids_kept++;
        put(w, m->v, m->vl);
        return 0;
    }
    put_i64(w, id * s + (id < 0 ? -rk : rk));
    return 0;
}

/* args of a process_name / process_sort_index event, rewritten. */
static int put_meta_args(wctx *w, const mj_member *args, int is_name, int64_t newpid) {
    size_t n;
    if (mj_members(args->v, args->v + args->vl, w->am, MAX_MEMBERS, &n)) {
        put(w, args->v, args->vl);
        return 0;
    }
    char rk[32];
    int rl = snprintf(rk, sizeof rk, "rank %d", (int)w->r->rank);
    w->buf[w->n++] = '{';
    for (size_t i = 0; i < n; i++) {
        const mj_member *a = &w->am[i];
        if (i) w->buf[w->n++] = ',';
        w->buf[w->n++] = '"';
        put(w, a->k, a->kl);
        PUTS(w, "\":");
        if (is_name && a->kl == 4 && !memcmp(a->k, "name", 4)) {
            w->buf[w->n++] = '"';
            put(w, rk, (size_t)rl);
            if (a->vl >= 2 && a->v[0] == '"') {
                const char *b = a->v + 1;
                size_t bl = a->vl - 2;
                /* the tracer already names its process "rank R" */
                int named = bl >= (size_t)rl && !memcmp(b, rk, (size_t)rl) && (bl == (size_t)rl || b[rl] == ' ');
                if (named) {
                    b += rl;
                    bl -= (size_t)rl;
                } else if (bl) {
                    w->buf[w->n++] = ' ';
                }
                put(w, b, bl);
            }
            w->buf[w->n++] = '"';
        } else if (!is_name && a->kl == 10 && !memcmp(a->k, "sort_index", 10)) {
            put_i64(w, newpid);
        } else {
            put(w, a->v, a->vl);
        }
    }
    w->buf[w->n++] = '}';
    return 0;
}

static int on_event(void *ctx, uint32_t index, const char *json, size_t len) {
    wctx *w = ctx;
    size_t n;
    w->stats->events_in++;
    w->stats->bytes_in += len;
    int rc = mj_members(json, json + len, w->m, MAX_MEMBERS, &n);
    if (rc) {
        w->st = hta_fail(w->err, HTA_EFORMAT, "%s: event %u: %s", w->r->path, index,
                         rc == -2 ? "too many keys" : "malformed object");
        return 1;
    }
    /* the event grows by at most the new numbers and a rank prefix */
    if (room(w, len + 64 * 4 + 64)) return 1;
    const mj_member *ph = mj_find(w->m, n, "ph"), *pid = mj_find(w->m, n, "pid"), *ts = mj_find(w->m, n, "ts");
    const mj_member *name = mj_find(w->m, n, "name"), *dur = mj_find(w->m, n, "dur");
    char phc = ph && ph->vl >= 3 && ph->v[0] == '"' ? ph->v[1] : 0;
    int is_pname = 0, is_psort = 0;
    if (phc == 'M' && name) {
        is_pname = is_str(name, "process_name");
        is_psort = is_str(name, "process_sort_index");
    }
    int64_t newpid = 0;
    if (pid) {
        size_t pi;
        if (pid_index(w, pid->v, pid->vl, &pi)) return 1;
        newpid = w->r->pid_base + (int64_t)pi;
        if (is_pname) w->pids[pi].has_name = 1;
        if (is_psort) w->pids[pi].has_sort = 1;
    }
    int64_t ts_ns = 0, dur_ns = 0;
    int have_ts = ts && is_num(ts) && !mj_us_to_ns(ts->v, ts->vl, &ts_ns);
    int new_dur = have_ts && dur && w->r->drift != 0.0 && is_num(dur) && !mj_us_to_ns(dur->v, dur->vl, &dur_ns);
    int64_t mts = have_ts ? hta_merge_map(w->p, w->ri, ts_ns + w->r->base_ns) : 0;

    if (!w->first) PUTS(w, ",\n");
    w->first = 0;
    w->buf[w->n++] = '{';
    for (size_t i = 0; i < n; i++) {
        const mj_member *m = &w->m[i];
        if (i) w->buf[w->n++] = ',';
        w->buf[w->n++] = '"';
        put(w, m->k, m->kl);
        PUTS(w, "\":");
        if (m == pid) {
            put_i64(w, newpid);
        } else if (m == ts && have_ts) {
            put_us(w, mts);
        } else if (m == dur && new_dur) {
            put_us(w, hta_merge_map(w->p, w->ri, ts_ns + dur_ns + w->r->base_ns) - mts);
        } else if ((m->kl == 2 && !memcmp(m->k, "id", 2)) || (m->kl == 7 && !memcmp(m->k, "bind_id", 7))) {
            put_id(w, m);
        } else if ((is_pname || is_psort) && m->kl == 4 && !memcmp(m->k, "args", 4) && m->vl && m->v[0] == '{') {
            put_meta_args(w, m, is_pname, newpid);
        } else {
            put(w, m->v, m->vl);
        }
    }
    w->buf[w->n++] = '}';
    return 0;
}

static int on_meta(void *ctx, const char *key, size_t klen, const char *json, size_t jlen) {
    wctx *w = ctx;
    if (klen == 15 && !memcmp(key, "distributedInfo", 15) && !w->dinfo[w->ri]) {
        char *d = malloc(jlen + 1);
        if (!d) return 1;
        memcpy(d, json, jlen);
        d[jlen] = 0;
        w->dinfo[w->ri] = d;
    }
    return 0;
}

/* Process names and sort order for the pids whose file had none. */
static int add_missing_meta(wctx *w) {
    for (size_t i = 0; i < w->npids; i++) {
        pid_entry *e = &w->pids[i];
        int64_t np = w->r->pid_base + (int64_t)i;
        if (room(w, e->len + 256)) return -1;
        if (!e->has_name) {
            PUTS(w, ",\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":");
            put_i64(w, np);
            PUTS(w, ",\"tid\":0,\"args\":{\"name\":\"rank ");
            put_i64(w, w->r->rank);
            if (e->text[0] == '"') {
                if (e->len > 2) w->buf[w->n++] = ' ';
                put(w, e->text + 1, e->len - 2);
            } else {
                PUTS(w, " pid ");
                put(w, e->text, e->len);
            }
            PUTS(w, "\"}}");
            w->stats->events_added++;
        }
        if (!e->has_sort) {
            PUTS(w, ",\n{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":");
            put_i64(w, np);
            PUTS(w, ",\"tid\":0,\"args\":{\"sort_index\":");
            put_i64(w, np);
            PUTS(w, "}}");
            w->stats->events_added++;
        }
    }
    return 0;
}

static void put_double(wctx *w, double v) {
    char t[40];
    int l = snprintf(t, sizeof t, "%.17g", v);
    if (v != v) l = snprintf(t, sizeof t, "null");
    put(w, t, (size_t)l);
}

static const char *method_str(hta_align_method m) {
    return m == HTA_ALIGN_BARRIER ? "barrier" : m == HTA_ALIGN_COLLECTIVE ? "collective" : "none";
}

static const char *clock_str(hta_clock_source c) {
    return c == HTA_CLOCK_KINETO_BASE     ? "baseTimeNanoseconds"
           : c == HTA_CLOCK_TRACER_ANCHOR ? "htaClockAnchor"
                                          : "as written";
}

/* htaMerge: how each rank was placed, so the mapping can be undone. */
static int put_summary(wctx *w) {
    const hta_merge_plan *p = w->p;
    if (room(w, 512)) return -1;
    PUTS(w, "\n],\n\"htaMerge\":{\"version\":1,\"align\":\"");
    put(w, method_str(p->opts.method), strlen(method_str(p->opts.method)));
    PUTS(w, "\",\"origin_ns\":");
    put_i64(w, p->origin_ns);
    PUTS(w, ",\"unix_time\":");
    if (p->unix_known) PUTS(w, "true");
    else PUTS(w, "false");
    PUTS(w, ",\"pid_stride\":");
    put_i64(w, p->pid_stride);
    PUTS(w, ",\"id_stride\":");
    put_i64(w, p->id_stride);
    PUTS(w, ",\"ranks\":[");
    for (size_t i = 0; i < p->n; i++) {
        const hta_merge_rank *r = &p->r[i];
        size_t dl = w->dinfo[i] ? strlen(w->dinfo[i]) : 4;
        if (room(w, 6 * strlen(r->path) + dl + 512)) return -1;
        if (i) w->buf[w->n++] = ',';
        PUTS(w, "\n {\"rank\":");
        put_i64(w, r->rank);
        PUTS(w, ",\"file\":\"");
        put_escaped(w, r->path);
        PUTS(w, "\",\"clock\":\"");
        put(w, clock_str(r->clock), strlen(clock_str(r->clock)));
        PUTS(w, "\",\"base_ns\":");
        put_i64(w, r->base_ns);
        PUTS(w, ",\"pid_base\":");
        put_i64(w, r->pid_base);
        PUTS(w, ",\"offset_ns\":");
        put_double(w, r->offset_ns);
        PUTS(w, ",\"drift\":");
        put_double(w, r->drift);
        PUTS(w, ",\"t0_ns\":");
        put_i64(w, r->t0_ns);
        PUTS(w, ",\"anchors\":");
        put_i64(w, (int64_t)r->anchors);
        PUTS(w, ",\"rms_ns\":");
        put_double(w, r->rms_ns);
        PUTS(w, ",\"max_ns\":");
        put_double(w, r->max_ns);
        PUTS(w, ",\"distributedInfo\":");
        if (w->dinfo[i]) put(w, w->dinfo[i], dl);
        else PUTS(w, "null");
        w->buf[w->n++] = '}';
    }
    PUTS(w, "]}\n}\n");
    return 0;
}

hta_status hta_merge_write(const hta_merge_plan *p, const char *out_path, int gz, hta_merge_stats *stats,
                           hta_error *err) {
    hta_merge_stats dummy;
    if (!stats) stats = &dummy;
    memset(stats, 0, sizeof *stats);
    wctx *w = calloc(1, sizeof *w);
    if (!w) return hta_oom(err);
    w->p = p;
    w->err = err;
    w->stats = stats;
    w->cap = OUT_BUF;
    w->buf = malloc(w->cap);
    w->pids = calloc((size_t)p->pid_stride, sizeof *w->pids);
    w->dinfo = calloc(p->n + 1, sizeof *w->dinfo);
    w->first = 1;
    hta_status st = HTA_OK;
    if (!w->buf || !w->pids || !w->dinfo) {
        st = hta_oom(err);
        goto out;
    }
    if ((st = hta_trace_out_open(out_path, gz, &w->o, err))) goto out;
    PUTS(w, "{\"schemaVersion\":1,\"displayTimeUnit\":\"ms\",");
    if (p->unix_known) {
        PUTS(w, "\"baseTimeNanoseconds\":");
        put_i64(w, p->origin_ns);
        PUTS(w, ",");
    }
    PUTS(w, "\n\"traceEvents\":[\n");
    hta_raw_callbacks cb = {on_meta, on_event, w};
    for (size_t i = 0; i < p->n && !st; i++) {
        w->ri = i;
        w->r = &p->r[i];
        w->npids = 0;
        w->last_pid = 0;
        st = hta_raw_scan(w->r->path, &cb, err);
        if (w->st) st = w->st; /* our own error, not the scan's "stopped" */
        if (!st && add_missing_meta(w)) st = w->st;
        for (size_t j = 0; j < w->npids; j++) free(w->pids[j].text);
    }
    if (!st && (put_summary(w) || flush(w))) st = w->st;
    hta_status cst = hta_trace_out_close(w->o, !st, st ? NULL : err);
    if (!st) st = cst;
out:
    if (w->dinfo)
        for (size_t i = 0; i < p->n; i++) free(w->dinfo[i]);
    free(w->dinfo);
    free(w->pids);
    free(w->buf);
    free(w);
    return st;
}
