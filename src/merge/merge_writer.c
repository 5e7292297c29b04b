/* `hta merge` output: every rank's file streamed again through the
 * derived-trace writer (hta_rawout_events) and every event written back with
 * its pid, ts (dur under drift) and ids rewritten; all other members are
 * copied as they are.  Memory: the writer's buffer and a small per-rank pid
 * table. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hta/merge.h"
#include "hta/rawjson.h"
#include "hta/util.h"

typedef struct pid_entry {
    char *text; /* the pid's raw JSON */
    size_t len;
    int has_name, has_sort;
} pid_entry;

typedef struct wctx {
    const hta_merge_plan *p;
    size_t ri; /* rank index in the plan */
    const hta_merge_rank *r;
    hta_rawout *o;
    char *buf; /* room reserved in the output (hta_rawout_room), n bytes used */
    size_t n;
    pid_entry *pids;
    size_t npids;
    size_t last_pid;
    char **dinfo; /* per rank: distributedInfo raw JSON */
    /* per rank: its original pids (raw JSON, in the order of pid_base + n) and the events written for it,
     * added metadata included, so that a loader can give the merged file back as its ranks (htaMerge) */
    char ***rank_pids;
    size_t *rank_npids;
    uint64_t *rank_events;
    hta_merge_stats *stats;
    hta_raw_obj ev, args;
} wctx;

/* Text is formatted in place: room() reserves enough for what follows (the
 * put helpers below do not check), done() hands it to the writer. */
static void done(wctx *w) {
    hta_rawout_wrote(w->o, w->n);
    w->n = 0;
}

static int room(wctx *w, size_t need) {
    done(w);
    w->buf = hta_rawout_room(w->o, need);
    return w->buf ? 0 : -1;
}

/* Starts an event of at most need bytes. */
static int event_room(wctx *w, size_t need) {
    done(w);
    return hta_rawout_sep(w->o) || room(w, need);
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
    w->n += hta_raw_format_us(ns, 1, w->buf + w->n);
}

static int put_cb(void *w, const char *s, size_t n) {
    put(w, s, n);
    return 0;
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
    if (w->npids >= (size_t)w->p->pid_stride)
        return hta_rawout_fail(w->o, HTA_EFORMAT, "%s: more than %lld distinct pids", w->r->path,
                               (long long)w->p->pid_stride);
    char *t = malloc(l + 1);
    if (!t) return hta_rawout_oom(w->o);
    memcpy(t, v, l);
    t[l] = 0;
    w->pids[w->npids] = (pid_entry){t, l, 0, 0};
    *idx = w->last_pid = w->npids++;
    return 0;
}

/* id -> id * stride + rank, so equal ids of two ranks stay apart and a
 * rank's pairs stay pairs.  Hex string ids (Chrome's "0x...") become numbers. */
static int put_id(wctx *w, const hta_raw_member *m) {
    int64_t id;
    int ok = !hta_raw_int(m, &id);
    if (!ok && m->vlen > 4 && m->val[0] == '"' && m->val[1] == '0' && (m->val[2] == 'x' || m->val[2] == 'X')) {
        uint64_t x = 0;
        ok = 1;
        for (size_t i = 3; i + 1 < m->vlen && ok; i++) {
            char c = m->val[i];
            int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
            if (d < 0 || x >> 59) ok = 0;
            else x = x * 16 + (uint64_t)d;
        }
        if (m->vlen == 4 || x > (uint64_t)INT64_MAX) ok = 0;
        id = (int64_t)x;
    }
    int64_t s = w->p->id_stride, rk = w->r->rank;
    if (ok && (id > (INT64_MAX - rk) / s || id < (INT64_MIN + rk) / s)) ok = 0;
    if (!ok) {
        w->stats->ids_kept++;
        put(w, m->val, m->vlen);
        return 0;
    }
    put_i64(w, id * s + (id < 0 ? -rk : rk));
    return 0;
}

/* args of a process_name / process_sort_index event, rewritten. */
static int put_meta_args(wctx *w, const hta_raw_member *args, int is_name, int64_t newpid) {
    if (hta_raw_obj_parse(&w->args, args->val, args->vlen)) {
        put(w, args->val, args->vlen);
        return 0;
    }
    char rk[32];
    int rl = snprintf(rk, sizeof rk, "rank %d", (int)w->r->rank);
    w->buf[w->n++] = '{';
    for (size_t i = 0; i < w->args.n; i++) {
        const hta_raw_member *a = &w->args.m[i];
        if (i) w->buf[w->n++] = ',';
        w->buf[w->n++] = '"';
        put(w, a->rkey, a->rklen);
        PUTS(w, "\":");
        if (is_name && hta_raw_key_is(a, "name")) {
            w->buf[w->n++] = '"';
            put(w, rk, (size_t)rl);
            if (a->vlen >= 2 && a->val[0] == '"') {
                const char *b = a->val + 1;
                size_t bl = a->vlen - 2;
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
        } else if (!is_name && hta_raw_key_is(a, "sort_index")) {
            put_i64(w, newpid);
        } else {
            put(w, a->val, a->vlen);
        }
    }
    w->buf[w->n++] = '}';
    return 0;
}

static int on_event(void *ctx, hta_rawout *o, uint32_t index, const char *json, size_t len) {
    wctx *w = ctx;
    w->stats->events_in++;
    w->stats->bytes_in += len;
    int rc = hta_raw_obj_parse(&w->ev, json, len);
    if (rc == -2) return hta_rawout_oom(o);
    if (rc) return hta_rawout_fail(o, HTA_EFORMAT, "%s: event %u: malformed object", w->r->path, index);
    const hta_raw_obj *ev = &w->ev;
    const hta_raw_member *ph = hta_raw_obj_get(ev, "ph"), *pid = hta_raw_obj_get(ev, "pid");
    const hta_raw_member *ts = hta_raw_obj_get(ev, "ts"), *name = hta_raw_obj_get(ev, "name");
    const hta_raw_member *dur = hta_raw_obj_get(ev, "dur");
    /* ph's first letter, as the loader reads it */
    char phc = ph && ph->vlen >= 3 && ph->val[0] == '"' ? ph->val[1] : 0;
    int is_pname = 0, is_psort = 0;
    if (phc == 'M' && name) {
        is_pname = hta_raw_str_is(name, "process_name");
        is_psort = hta_raw_str_is(name, "process_sort_index");
    }
    int64_t newpid = 0;
    if (pid) {
        size_t pi = 0;
        if (pid_index(w, pid->val, pid->vlen, &pi)) return 1;
        newpid = w->r->pid_base + (int64_t)pi;
        if (is_pname) w->pids[pi].has_name = 1;
        if (is_psort) w->pids[pi].has_sort = 1;
    }
    int64_t ts_ns = 0, dur_ns = 0;
    int have_ts = ts && !hta_raw_time_ns(ts, &ts_ns);
    int new_dur = have_ts && dur && w->r->drift != 0.0 && !hta_raw_time_ns(dur, &dur_ns);
    int64_t mts = have_ts ? hta_merge_map(w->p, w->ri, ts_ns + w->r->base_ns) : 0;

    /* members are written again without spaces; each grows by at most a new
     * number (< 32 bytes), a process name by its rank prefix, and the args of
     * a process_sort_index by a new number per arg (each at least 5 bytes) */
    if (event_room(w, len + 32 * ev->n + 64 + (is_pname || is_psort ? 4 * len : 0))) return 1;
    w->buf[w->n++] = '{';
    for (size_t i = 0; i < ev->n; i++) {
        const hta_raw_member *m = &ev->m[i];
        if (i) w->buf[w->n++] = ',';
        w->buf[w->n++] = '"';
        put(w, m->rkey, m->rklen);
        PUTS(w, "\":");
        if (m == pid) {
            put_i64(w, newpid);
        } else if (m == ts && have_ts) {
            put_us(w, mts);
        } else if (m == dur && new_dur) {
            put_us(w, hta_merge_map(w->p, w->ri, ts_ns + dur_ns + w->r->base_ns) - mts);
        } else if (hta_raw_key_is(m, "id") || hta_raw_key_is(m, "bind_id")) {
            put_id(w, m);
        } else if ((is_pname || is_psort) && hta_raw_key_is(m, "args") && m->val[0] == '{') {
            put_meta_args(w, m, is_pname, newpid);
        } else {
            put(w, m->val, m->vlen);
        }
    }
    w->buf[w->n++] = '}';
    done(w);
    return 0;
}

static int on_meta(void *ctx, hta_rawout *o, const char *key, size_t klen, const char *json, size_t jlen) {
    wctx *w = ctx;
    if (klen == 15 && !memcmp(key, "distributedInfo", 15) && !w->dinfo[w->ri]) {
        char *d = malloc(jlen + 1);
        if (!d) return hta_rawout_oom(o);
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
        if (!e->has_name) {
            if (event_room(w, e->len + 128)) return -1;
            PUTS(w, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":");
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
            if (event_room(w, 128)) return -1;
            PUTS(w, "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":");
            put_i64(w, np);
            PUTS(w, ",\"tid\":0,\"args\":{\"sort_index\":");
            put_i64(w, np);
            PUTS(w, "}}");
            w->stats->events_added++;
        }
    }
    done(w);
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
        PUTS(w, ",\"file\":");
        hta_json_quote(r->path, put_cb, w);
        PUTS(w, ",\"clock\":\"");
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
        PUTS(w, ",\"events\":");
        put_i64(w, (int64_t)w->rank_events[i]);
        PUTS(w, ",\"pids\":[");
        for (size_t j = 0; j < w->rank_npids[i]; j++) {
            const char *pt = w->rank_pids[i][j];
            if (room(w, strlen(pt) + 8)) return -1;
            if (j) w->buf[w->n++] = ',';
            put(w, pt, strlen(pt));
        }
        if (room(w, 16)) return -1; /* this "]}" and the closing "]}\n}\n" */
        PUTS(w, "]}");
    }
    PUTS(w, "]}\n}\n");
    done(w);
    return 0;
}

static void wctx_free(wctx *w) {
    if (!w) return;
    if (w->dinfo)
        for (size_t i = 0; i < w->p->n; i++) free(w->dinfo[i]);
    free(w->dinfo);
    if (w->rank_pids)
        for (size_t i = 0; i < w->p->n; i++) {
            for (size_t j = 0; w->rank_pids[i] && j < w->rank_npids[i]; j++) free(w->rank_pids[i][j]);
            free(w->rank_pids[i]);
        }
    free(w->rank_pids);
    free(w->rank_npids);
    free(w->rank_events);
    free(w->pids);
    hta_raw_obj_free(&w->ev);
    hta_raw_obj_free(&w->args);
    free(w);
}

static wctx *wctx_new(const hta_merge_plan *p, hta_merge_stats *stats) {
    memset(stats, 0, sizeof *stats);
    wctx *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->p = p;
    w->stats = stats;
    w->pids = calloc((size_t)p->pid_stride, sizeof *w->pids);
    w->dinfo = calloc(p->n + 1, sizeof *w->dinfo);
    w->rank_pids = calloc(p->n + 1, sizeof *w->rank_pids);
    w->rank_npids = calloc(p->n + 1, sizeof *w->rank_npids);
    w->rank_events = calloc(p->n + 1, sizeof *w->rank_events);
    if (!w->pids || !w->dinfo || !w->rank_pids || !w->rank_npids || !w->rank_events) {
        wctx_free(w);
        return NULL;
    }
    return w;
}

static int put_header(wctx *w) {
    if (room(w, 128)) return -1;
    PUTS(w, "{\"schemaVersion\":1,\"displayTimeUnit\":\"ms\",");
    if (w->p->unix_known) {
        PUTS(w, "\"baseTimeNanoseconds\":");
        put_i64(w, w->p->origin_ns);
        PUTS(w, ",");
    }
    PUTS(w, "\n\"traceEvents\":[");
    done(w);
    return 0;
}

/* Rank i's events (added metadata included) to w->o; non-zero when the writer failed. */
static int write_rank(wctx *w, size_t i) {
    hta_rawout_hooks h = {.event = on_event, .meta = on_meta, .ctx = w};
    w->ri = i;
    w->r = &w->p->r[i];
    w->npids = 0;
    w->last_pid = 0;
    uint64_t ev0 = hta_rawout_count(w->o);
    int bad = hta_rawout_events(w->o, w->r->path, &h) || add_missing_meta(w);
    w->rank_events[i] = hta_rawout_count(w->o) - ev0;
    /* the pid texts move to the rank's list, for htaMerge */
    w->rank_pids[i] = malloc((w->npids ? w->npids : 1) * sizeof(char *));
    if (w->rank_pids[i]) {
        for (size_t j = 0; j < w->npids; j++) w->rank_pids[i][j] = w->pids[j].text;
        w->rank_npids[i] = w->npids;
    } else {
        for (size_t j = 0; j < w->npids; j++) free(w->pids[j].text);
        if (!bad) bad = hta_rawout_fail(w->o, HTA_ENOMEM, "out of memory");
    }
    return bad;
}

hta_status hta_merge_write(const hta_merge_plan *p, const char *out_path, int gz, hta_merge_stats *stats,
                           hta_error *err) {
    hta_merge_stats dummy;
    if (!stats) stats = &dummy;
    wctx *w = wctx_new(p, stats);
    if (!w) return hta_oom(err);
    hta_status st = hta_rawout_open(out_path, gz, &w->o, err);
    if (st) goto out;
    if (put_header(w)) goto write_failed;
    for (size_t i = 0; i < p->n; i++)
        if (write_rank(w, i)) goto write_failed;
    put_summary(w);
write_failed: /* the writer keeps the failure: close answers with it */
    stats->bytes_out = hta_rawout_bytes(w->o);
    st = hta_rawout_close(w->o, 1);
out:
    wctx_free(w);
    return st;
}

/* ---- the merged trace in parts (hta-mpi) ---- */

HTA_TABLE_DEFINE(HTA_MERGE_PART);
HTA_TABLE_DEFINE(HTA_MERGE_PART_PIDS);

hta_status hta_merge_write_part(const hta_merge_plan *p, size_t i, const char *part_path, hta_result *info,
                                hta_error *err) {
    hta_merge_stats stats;
    wctx *w = wctx_new(p, &stats);
    hta_table *pt = hta_table_from_def(&HTA_MERGE_PART_TABLE), *qt = hta_table_from_def(&HTA_MERGE_PART_PIDS_TABLE);
    hta_status st = HTA_OK;
    if (!w || !pt || !qt) {
        st = hta_oom(err);
        goto out;
    }
    /* the rank's events exactly as the whole file has them, but for the first separator (hta_merge_join) */
    if ((st = hta_rawout_open(part_path, 0, &w->o, err))) goto out;
    write_rank(w, i);
    uint64_t bytes = hta_rawout_bytes(w->o);
    if ((st = hta_rawout_close(w->o, 1))) goto out;
    long row = hta_table_add_row(pt);
    if (row < 0) goto oom;
    hta_table_set_int(pt, (size_t)row, HTA_MPART_RANK, p->r[i].rank);
    hta_table_set_int(pt, (size_t)row, HTA_MPART_EVENTS, (int64_t)w->rank_events[i]);
    hta_table_set_int(pt, (size_t)row, HTA_MPART_BYTES, (int64_t)bytes);
    hta_table_set_int(pt, (size_t)row, HTA_MPART_EVENTS_IN, (int64_t)stats.events_in);
    hta_table_set_int(pt, (size_t)row, HTA_MPART_BYTES_IN, (int64_t)stats.bytes_in);
    hta_table_set_int(pt, (size_t)row, HTA_MPART_ADDED, (int64_t)stats.events_added);
    hta_table_set_int(pt, (size_t)row, HTA_MPART_IDS_KEPT, (int64_t)stats.ids_kept);
    if (hta_table_set_str(pt, (size_t)row, HTA_MPART_DINFO, w->dinfo[i])) goto oom;
    for (size_t j = 0; j < w->rank_npids[i]; j++) {
        if ((row = hta_table_add_row(qt)) < 0) goto oom;
        hta_table_set_int(qt, (size_t)row, HTA_MPART_PIDS_RANK, p->r[i].rank);
        if (hta_table_set_str(qt, (size_t)row, HTA_MPART_PID, w->rank_pids[i][j])) goto oom;
    }
    if (!HTA_RESULT_ADD(info, &pt, &qt)) goto out;
oom:
    st = hta_oom(err);
out:
    hta_table_free(pt);
    hta_table_free(qt);
    wctx_free(w);
    return st;
}

/* The table of declaration d in info, checked column by column (it comes from another process). */
static const hta_table *part_table(const hta_result *info, const hta_table_def *d) {
    const hta_table *t = hta_result_find(info, d->name);
    int ok = t && t->ncols == d->ncols;
    for (size_t c = 0; ok && c < d->ncols; c++)
        ok = t->cols[c].type == d->cols[c].type && !strcmp(t->cols[c].name, d->cols[c].name);
    return ok ? t : NULL;
}

#define I64(t, c, r) ((t)->cols[c].v.i[r])

hta_status hta_merge_join(const hta_merge_plan *p, const char *out_path, int gz, const hta_result *info,
                          const char *const *part_paths, hta_merge_stats *stats, hta_error *err) {
    hta_merge_stats dummy;
    if (!stats) stats = &dummy;
    const hta_table *pt = part_table(info, &HTA_MERGE_PART_TABLE), *qt = part_table(info, &HTA_MERGE_PART_PIDS_TABLE);
    if (!pt || !qt || pt->nrows != p->n) return hta_fail(err, HTA_EINVAL, "merge: the parts' accounts are damaged");
    wctx *w = wctx_new(p, stats);
    char *buf = malloc(1 << 20);
    hta_status st = HTA_OK;
    if (!w || !buf) {
        st = hta_oom(err);
        goto out;
    }
    /* what each part's writer saw: the accounts htaMerge and the notes give */
    for (size_t i = 0, q = 0; i < p->n; i++) {
        if (I64(pt, HTA_MPART_RANK, i) != p->r[i].rank) {
            st = hta_fail(err, HTA_EINVAL, "merge: the parts' accounts are damaged");
            goto out;
        }
        w->rank_events[i] = (uint64_t)I64(pt, HTA_MPART_EVENTS, i);
        stats->events_in += (uint64_t)I64(pt, HTA_MPART_EVENTS_IN, i);
        stats->bytes_in += (uint64_t)I64(pt, HTA_MPART_BYTES_IN, i);
        stats->events_added += (uint64_t)I64(pt, HTA_MPART_ADDED, i);
        stats->ids_kept += (uint64_t)I64(pt, HTA_MPART_IDS_KEPT, i);
        const char *d = pt->cols[HTA_MPART_DINFO].v.s[i];
        if (d && !(w->dinfo[i] = strdup(d))) goto oom;
        size_t q0 = q;
        while (q < qt->nrows && I64(qt, HTA_MPART_PIDS_RANK, q) == p->r[i].rank) q++;
        if (!(w->rank_pids[i] = calloc(q - q0 + 1, sizeof(char *)))) goto oom;
        for (size_t j = q0; j < q; j++) {
            const char *t = qt->cols[HTA_MPART_PID].v.s[j];
            if (!(w->rank_pids[i][w->rank_npids[i]++] = strdup(t ? t : ""))) goto oom;
        }
    }
    if ((st = hta_rawout_open(out_path, gz, &w->o, err))) goto out;
    if (put_header(w)) goto write_failed;
    uint64_t before = 0;
    for (size_t i = 0; i < p->n; i++) {
        FILE *f = fopen(part_paths[i], "rb");
        if (!f) {
            hta_rawout_fail(w->o, HTA_EIO, "%s: cannot open: %s (the output's folder must be one all processes "
                            "share)", part_paths[i], strerror(errno));
            goto write_failed;
        }
        /* a part starts its first event as the first of a file does; after other events it takes a comma */
        if (before && w->rank_events[i] && hta_rawout_put(w->o, ",", 1)) {
            fclose(f);
            goto write_failed;
        }
        before += w->rank_events[i];
        uint64_t got = 0;
        size_t k;
        while ((k = fread(buf, 1, 1 << 20, f)) > 0) {
            got += k;
            if (hta_rawout_put(w->o, buf, k)) break;
        }
        int rerr = ferror(f);
        fclose(f);
        if (rerr || got != (uint64_t)I64(pt, HTA_MPART_BYTES, i)) {
            hta_rawout_fail(w->o, HTA_EIO, "%s: %s", part_paths[i], rerr ? "read error" : "not the part written");
            goto write_failed;
        }
    }
    put_summary(w);
write_failed: /* the writer keeps the failure: close answers with it */
    stats->bytes_out = hta_rawout_bytes(w->o);
    st = hta_rawout_close(w->o, 1);
    goto out;
oom:
    st = hta_oom(err);
out:
    free(buf);
    wctx_free(w);
    return st;
}
