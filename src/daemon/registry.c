/* The processes libkineto registers by polling, their pending configs, and the captures with the
 * traces each waits for (dynolog-ipc.md §3, §6).  A process is known by what the kernel says of the
 * sender (its pid and uid, peer.c), never by the pids a datagram claims: a poll gets only its own
 * config.  Its pid set (its pid and its ancestors' within its namespace, leaf first, from /proc) is what
 * requests match, as in dynolog, each by its pid in htad's namespace: a pid number that another pid
 * namespace also uses never selects a process there.  A process is named by its pid in htad's namespace
 * (its trace's name and its file in the trace folder), and its start time is checked when a capture
 * selects it and when its config is given, so a pid the kernel gave again never takes a config meant for
 * the process that had it.  One pending config each; at most HTAD_PROCS_PER_UID per user, so one user
 * cannot fill the table; processes that stop polling are dropped after --gc-s, and a trace still expected
 * from one is then "lost". */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/htad.h"

static int64_t g_refused_ms; /* when a process last found the table full (mono ms) */

typedef struct proc {
    int32_t kpid;                   /* the kernel's pid of the sender (htad's namespace) */
    uint32_t uid;
    int64_t job_id;
    int64_t start;                  /* its start time: with kpid, the process (peer.c) */
    int32_t npids;
    int32_t pids[HTA_IPC_MAX_PIDS]; /* leaf first, as sent (in its namespace) */
    int32_t kpids[HTA_IPC_MAX_PIDS]; /* the same processes in htad's namespace: what requests match */
    int32_t sorted[HTA_IPC_MAX_PIDS]; /* kpids, sorted */
    int64_t last_poll_ms;
    char *pending;                  /* config text to deliver at the next idle poll */
    int cap_slot;                   /* the capture and trace it belongs to */
    size_t cap_trace;
} proc;

static proc g_procs[HTAD_MAX_PROCS];
static size_t g_nprocs;
static htad_capture *g_caps[HTAD_MAX_CAPTURES];
static unsigned g_cap_seq;

size_t htad_nprocs(void) { return g_nprocs; }

static int cmp_i32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static proc *find_proc(int32_t kpid, uint32_t uid, size_t *same_uid) {
    *same_uid = 0;
    for (size_t k = 0; k < g_nprocs; k++) {
        if (g_procs[k].kpid == kpid && g_procs[k].uid == uid) return &g_procs[k];
        *same_uid += g_procs[k].uid == uid;
    }
    return NULL;
}

static htad_trace *proc_trace(const proc *p) {
    if (p->cap_slot < 0 || !g_caps[p->cap_slot]) return NULL;
    return &g_caps[p->cap_slot]->tr[p->cap_trace];
}

int htad_known_peer(int32_t kpid, uint32_t uid, htad_peer *peer) {
    size_t mine;
    pthread_mutex_lock(&mu);
    const proc *p = find_proc(kpid, uid, &mine);
    if (p) {
        peer->pid = kpid;
        peer->uid = uid;
        peer->start = p->start;
        peer->npids = p->npids;
        memcpy(peer->pids, p->pids, 4 * (size_t)p->npids);
        memcpy(peer->kpids, p->kpids, 4 * (size_t)p->npids);
    }
    pthread_mutex_unlock(&mu);
    return p != NULL;
}

void htad_on_req(const hta_ipc_req *r, const htad_peer *peer, hta_sbuf *out) {
    pthread_mutex_lock(&mu);
    size_t mine;
    proc *p = find_proc(peer->pid, peer->uid, &mine);
    if (!p && (g_nprocs >= HTAD_MAX_PROCS || mine >= HTAD_PROCS_PER_UID)) {
        /* full: the process is answered (an empty config) and not registered; the registered keep
         * their places, and a capture that matches nothing says why */
        g_procs_refused_total++;
        int64_t now = htad_mono_ms();
        if (now - g_refused_ms > 10000) { /* one line per 10 s: a flood does not flood the log */
            if (g_nprocs >= HTAD_MAX_PROCS)
                htad_log("process %d (uid %u) not registered: the process table is full (%d)", (int)peer->pids[0],
                         (unsigned)peer->uid, HTAD_MAX_PROCS);
            else
                htad_log("process %d (uid %u) not registered: its user has %d processes registered",
                         (int)peer->pids[0], (unsigned)peer->uid, HTAD_PROCS_PER_UID);
        }
        g_refused_ms = now;
    } else if (!p) {
        p = &g_procs[g_nprocs++];
        memset(p, 0, sizeof *p);
        p->kpid = peer->pid;
        p->uid = peer->uid;
        p->start = peer->start;
        p->job_id = r->job_id;
        p->npids = peer->npids;
        memcpy(p->pids, peer->pids, 4 * (size_t)peer->npids);
        memcpy(p->kpids, peer->kpids, 4 * (size_t)peer->npids);
        memcpy(p->sorted, peer->kpids, 4 * (size_t)peer->npids);
        qsort(p->sorted, (size_t)p->npids, 4, cmp_i32);
        p->cap_slot = -1;
        if (!g_opt.quiet)
            htad_log("process %d registered (pid %d in its namespace, uid %u, job %" PRId64 ")", (int)p->kpid,
                     (int)p->pids[0], (unsigned)p->uid, r->job_id);
    }
    if (p && p->pending && (r->type & 2) && htad_proc_start(p->kpid) != p->start) {
        /* the pid names another process now (the kernel gave it again): the config was not meant for it,
         * and the entry is the gone process's */
        htad_trace *t = proc_trace(p);
        if (t && t->state <= TR_DELIVERED) {
            t->state = TR_LOST;
            snprintf(t->error, sizeof t->error, "process %d exited before taking its config (its pid now names "
                     "another process)", (int)t->pid);
            g_traces_lost_total++;
        }
        free(p->pending);
        g_procs[p - g_procs] = g_procs[--g_nprocs];
        p = NULL;
    }
    if (p) {
        p->job_id = r->job_id;
        p->last_poll_ms = htad_mono_ms();
        /* type 0 means the profiler is busy: the config waits for an idle poll (type & 2) */
        if (p->pending && (r->type & 2)) {
            hta_sb_add(out, p->pending, strlen(p->pending));
            HTA_SB_LIT(out, "\n");
            free(p->pending);
            p->pending = NULL;
            htad_trace *t = proc_trace(p);
            if (t && t->state == TR_REQUESTED) t->state = TR_DELIVERED;
            if (!g_opt.quiet) htad_log("config delivered to process %d", (int)p->kpid);
        }
    }
    pthread_mutex_unlock(&mu);
}

/* Old clients' registration (dynolog's jobInstancesPerGpu_): a set of pids per (job, gpu); it makes no
 * process traceable (§3.2), the answer is the set's size, or -1 when the table (or the sender's user's
 * share of it) is full.  An entry goes when its process is gone (htad_tick). */
static struct ctxt {
    int64_t job;
    int32_t gpu, pid, kpid;
    uint32_t uid;
} g_ctxt[HTAD_MAX_PROCS];
static size_t g_nctxt;

int32_t htad_on_ctxt(int64_t job_id, int32_t gpu, const htad_peer *peer) {
    int32_t n = 0, pid = peer->pids[0];
    int have = 0;
    size_t mine = 0;
    pthread_mutex_lock(&mu);
    for (size_t k = 0; k < g_nctxt; k++) {
        if (g_ctxt[k].job == job_id && g_ctxt[k].gpu == gpu) n++, have |= g_ctxt[k].kpid == peer->pid;
        mine += g_ctxt[k].uid == peer->uid;
    }
    if (!have && g_nctxt < HTAD_MAX_PROCS && mine < HTAD_PROCS_PER_UID) {
        g_ctxt[g_nctxt++] = (struct ctxt){job_id, gpu, pid, peer->pid, peer->uid};
        n++;
    } else if (!have) {
        g_procs_refused_total++;
        n = -1;
    }
    pthread_mutex_unlock(&mu);
    return n;
}

/* dynolog's order of matched processes: std::map over the sorted pid sets. */
static int cmp_proc_idx(const void *a, const void *b) {
    const proc *x = &g_procs[*(const size_t *)a], *y = &g_procs[*(const size_t *)b];
    int32_t n = x->npids < y->npids ? x->npids : y->npids;
    for (int32_t k = 0; k < n; k++)
        if (x->sorted[k] != y->sorted[k]) return x->sorted[k] < y->sorted[k] ? -1 : 1;
    return (x->npids > y->npids) - (x->npids < y->npids);
}

static int slot_for_new_capture(void) {
    for (int k = 0; k < HTAD_MAX_CAPTURES; k++)
        if (!g_caps[k]) return k;
    /* full: drop the oldest finished capture (its files stay in the store) */
    int old = -1;
    for (int k = 0; k < HTAD_MAX_CAPTURES; k++)
        if (g_caps[k]->t_done_ms && (old < 0 || g_caps[k]->t_request_ms < g_caps[old]->t_request_ms)) old = k;
    if (old < 0) return -1;
    for (size_t k = 0; k < g_nprocs; k++)
        if (g_procs[k].cap_slot == old) g_procs[k].cap_slot = -1;
    free(g_caps[old]);
    g_caps[old] = NULL;
    return old;
}

static void add_pids(hta_sbuf *b, const char *key, const int32_t *v, size_t n) {
    hta_sb_printf(b, "\"%s\":[", key);
    for (size_t k = 0; k < n; k++) hta_sb_printf(b, "%s%d", k ? "," : "", (int)v[k]);
    HTA_SB_LIT(b, "]");
}

hta_status htad_trigger(const htad_request *r, hta_sbuf *reply, hta_error *err) {
    hta_config_info ci = {r->copts.duration_ms, r->copts.warmup_s < 0 ? 5 : r->copts.warmup_s,
                          r->copts.start_time_ms, r->copts.iterations, -1};
    int64_t t_req = htad_now_ms();
    if (r->config) {
        /* refused here, with the reason, rather than reported triggered and never traced */
        char lf[PATH_MAX];
        HTA_TRY(hta_config_check(r->config, strlen(r->config), t_req, &ci, err));
        if (!hta_config_log_file(r->config, strlen(r->config), lf, sizeof lf))
            return hta_fail(err, HTA_EINVAL, "the config has no ACTIVITIES_LOG_FILE");
        HTA_TRY(hta_path_confined(lf, g_opt.trace_dir, err));
    }
    /* every capture ends: its traces are due by the end of its window plus the margin; the iteration
     * form's end is not known in time, it has its own bound */
    int64_t deadline;
    if (r->config ? ci.start_iteration >= 0 : ci.iterations > 0) {
        deadline = t_req + (int64_t)g_opt.iterations_timeout_s * 1000;
    } else {
        /* no start time: libkineto starts warm-up seconds (and two of its 1 s ticks) after the poll
         * that takes the config, which comes within its 5 s poll interval */
        int64_t start = ci.start_time_ms > 0 ? (ci.start_time_ms > t_req ? ci.start_time_ms : t_req)
                                             : t_req + 5000 + ci.warmup_s * 1000 + 2000;
        deadline = start + ci.duration_ms + (int64_t)g_opt.capture_margin_s * 1000;
    }
    int trace_all = r->npids == 0 || (r->npids == 1 && r->pids[0] == 0);
    int64_t limit = r->limit < 0 ? 0 : r->limit > HTAD_MAX_TRACES ? HTAD_MAX_TRACES : r->limit;
    pthread_mutex_lock(&mu);
    size_t *idx = malloc((g_nprocs + 1) * sizeof *idx), nm = 0;
    htad_capture *c = calloc(1, sizeof *c);
    int slot = idx && c ? slot_for_new_capture() : -1;
    if (slot < 0) {
        pthread_mutex_unlock(&mu);
        free(idx);
        free(c);
        return idx && c ? hta_fail(err, HTA_EINVAL, "%d captures are still running: try again later",
                                   HTAD_MAX_CAPTURES)
                        : hta_oom(err);
    }
    for (size_t k = 0; k < g_nprocs; k++) {
        const proc *p = &g_procs[k];
        if (p->job_id != r->job_id) continue;
        int hit = trace_all;
        for (size_t q = 0; !hit && q < r->npids; q++)
            for (int32_t j = 0; j < p->npids; j++) hit |= p->kpids[j] == r->pids[q];
        /* still the process that registered (a gone one's pid may name another now) */
        if (hit && htad_proc_start(p->kpid) == p->start) idx[nm++] = k;
    }
    qsort(idx, nm, sizeof *idx, cmp_proc_idx);
    if (!r->config && nm == 0) { /* htaCapture: a request that matches nothing is an error, and leaves nothing */
        /* and why a process may be missing: it found the table full (within the garbage-collection time) */
        char full[160] = "";
        if (g_refused_ms && htad_mono_ms() - g_refused_ms <= (int64_t)g_opt.gc_s * 1000)
            snprintf(full, sizeof full, " (processes were refused registration lately: the process table, or "
                     "their user's share of %d, is full)", HTAD_PROCS_PER_UID);
        if (trace_all) hta_fail(err, HTA_ENODATA, "no process of job %" PRId64 " is registered%s", r->job_id, full);
        else hta_fail(err, HTA_ENODATA, "no process of job %" PRId64 " has pid %d (or it as an ancestor)%s%s",
                      r->job_id, (int)r->pids[0], r->npids > 1 ? " nor the other pids given" : "", full);
        free(idx);
        free(c);
        pthread_mutex_unlock(&mu);
        return HTA_ENODATA;
    }
    int64_t now = t_req;
    /* the request's ms first (retention's order), then this htad's tag: unique among htads sharing a store */
    snprintf(c->id, sizeof c->id, "%" PRId64 "-%u-%s", now, ++g_cap_seq, g_opt.tag);
    c->job_id = r->job_id;
    c->t_request_ms = now;
    c->deadline_ms = deadline;
    c->dyno = r->config != NULL;
    int32_t matched[HTAD_MAX_TRACES], trig[HTAD_MAX_TRACES];
    size_t nmatch = 0, ntrig = 0, busy = 0;
    char lf[PATH_MAX] = "";
    if (r->config) hta_config_log_file(r->config, strlen(r->config), lf, sizeof lf);
    hta_status st = HTA_OK;
    for (size_t m = 0; m < nm && !st; m++) {
        proc *p = &g_procs[idx[m]];
        if (nmatch < HTAD_MAX_TRACES) matched[nmatch++] = p->kpid;
        if (p->pending) {
            busy++;
            continue;
        }
        if ((int64_t)ntrig >= limit) continue;
        /* htaCapture: a log file per process, named by its pid in htad's namespace; libkineto adds its own
         * pid (in its namespace), so two processes of one pid in two namespaces never share a file */
        if (!r->config) snprintf(lf, sizeof lf, "%s/%s-%d.json", g_opt.trace_dir, c->id, (int)p->kpid);
        char spool[sizeof c->tr[0].spool];
        if (hta_kineto_trace_path(lf, p->pids[0], spool, sizeof spool)) {
            st = hta_fail(err, HTA_EINVAL, "%s: trace path too long", lf);
            break;
        }
        int taken = 0; /* a dyno config names one file for all: two processes of one pid would share it */
        for (size_t q = 0; q < c->n && !taken; q++) taken = !strcmp(c->tr[q].spool, spool);
        if (taken) {
            htad_trace *t = &c->tr[c->n++];
            memset(t, 0, sizeof *t);
            t->pid = p->kpid;
            t->uid = p->uid;
            t->state = TR_FAILED;
            t->size = -1;
            snprintf(t->name, sizeof t->name, "%s_%d.json", g_opt.host, (int)p->kpid);
            snprintf(t->error, sizeof t->error, "not triggered: another process of this capture has pid %d in its "
                     "namespace too, and the config's ACTIVITIES_LOG_FILE names one file for both (htaCapture "
                     "names each its own)", (int)p->pids[0]);
            continue;
        }
        hta_sbuf cfg = {0};
        if (r->config) {
            hta_sb_add(&cfg, r->config, strlen(r->config));
            hta_sb_printf(&cfg, "\nREQUEST_TRACE_ID=%s", c->id);
        } else {
            hta_capture_opts o = r->copts;
            o.log_file = lf;
            o.trace_id = c->id;
            st = hta_capture_config(&o, &cfg, err);
        }
        if (!st && cfg.oom) st = hta_oom(err);
        if (!st && cfg.len + 1 > 65536 - HTA_IPC_HEADER) /* it goes in one datagram, with a newline */
            st = hta_fail(err, HTA_EINVAL, "the config is %zu bytes with its trace id: one datagram holds at most %d",
                          cfg.len + 1, 65536 - HTA_IPC_HEADER);
        if (st) {
            hta_sb_free(&cfg);
            break;
        }
        htad_trace *t = &c->tr[c->n];
        memset(t, 0, sizeof *t);
        t->pid = p->kpid;
        t->uid = p->uid;
        t->state = TR_REQUESTED;
        t->size = -1;
        memcpy(t->spool, spool, sizeof spool);
        /* its name in the store: this host's, and the pid in htad's namespace (unique among the processes
         * of one capture; the capture's folder keeps captures apart) */
        snprintf(t->name, sizeof t->name, "%s_%d.json", g_opt.host, (int)p->kpid);
        p->pending = cfg.p;
        p->cap_slot = slot;
        p->cap_trace = c->n++;
        trig[ntrig++] = p->kpid;
    }
    free(idx);
    if (st) { /* nothing half-done: the configs of this capture are withdrawn */
        for (size_t k = 0; k < g_nprocs; k++)
            if (g_procs[k].cap_slot == slot && g_procs[k].pending) {
                free(g_procs[k].pending);
                g_procs[k].pending = NULL;
                g_procs[k].cap_slot = -1;
            }
        free(c);
        pthread_mutex_unlock(&mu);
        return st;
    }
    if (c->n == 0) c->t_done_ms = now;
    g_caps[slot] = c;
    g_captures_total++;
    /* dynolog's reply keys, sorted as nlohmann writes them; htaCapture adds the capture's id */
    hta_sb_printf(reply, "{\"activityProfilersBusy\":%zu,", busy);
    add_pids(reply, "activityProfilersTriggered", trig, ntrig);
    if (!r->config) {
        HTA_SB_LIT(reply, ",\"capture\":");
        hta_sb_quote(reply, c->id);
    }
    HTA_SB_LIT(reply, ",\"eventProfilersBusy\":0,\"eventProfilersTriggered\":[]");
    if (!r->config) {
        HTA_SB_LIT(reply, ",\"host\":");
        hta_sb_quote(reply, g_opt.host);
    }
    HTA_SB_LIT(reply, ",");
    add_pids(reply, "processesMatched", matched, nmatch);
    HTA_SB_LIT(reply, "}");
    if (!g_opt.quiet)
        htad_log("capture %s: %zu processes matched, %zu triggered, %zu busy", c->id, nmatch, ntrig, busy);
    pthread_mutex_unlock(&mu);
    return HTA_OK;
}

htad_capture *htad_capture_find(const char *id) {
    for (int k = 0; k < HTAD_MAX_CAPTURES; k++)
        if (g_caps[k] && !strcmp(g_caps[k]->id, id)) return g_caps[k];
    return NULL;
}

static const char *state_name(tr_state s) {
    static const char *const names[] = {"requested", "delivered", "storing", "stored", "lost", "failed", "removed"};
    return names[s];
}

void htad_capture_json(const htad_capture *c, hta_sbuf *b) {
    HTA_SB_LIT(b, "{\"status\":\"ok\",\"capture\":");
    hta_sb_quote(b, c->id);
    HTA_SB_LIT(b, ",\"host\":");
    hta_sb_quote(b, g_opt.host);
    hta_sb_printf(b, ",\"job_id\":%" PRId64 ",\"t_request_ms\":%" PRId64 ",\"done\":%s,\"traces\":[", c->job_id,
                  c->t_request_ms, c->t_done_ms ? "true" : "false");
    for (size_t k = 0; k < c->n; k++) {
        const htad_trace *t = &c->tr[k];
        hta_sb_printf(b, "%s{\"pid\":%d,\"state\":\"%s\",\"name\":", k ? "," : "", (int)t->pid, state_name(t->state));
        hta_sb_quote(b, t->name);
        if (t->size >= 0) hta_sb_printf(b, ",\"size\":%" PRId64, t->size);
        if (t->error[0]) {
            HTA_SB_LIT(b, ",\"error\":");
            hta_sb_quote(b, t->error);
        }
        HTA_SB_LIT(b, "}");
    }
    HTA_SB_LIT(b, "]}");
}

/* The trace file is there when libkineto has renamed its .tmp to the final name (§3.6). */
static int trace_ready(const htad_trace *t, int64_t t_request_ms) {
    struct stat st;
    if (lstat(t->spool, &st) || !S_ISREG(st.st_mode)) return 0;
    /* a file older than the request is a leftover (or planted): not this capture's */
    return (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000 >= t_request_ms - 2000;
}

/* past its capture's deadline: a config not taken is withdrawn, a trace not written is given up */
static void expire_trace(int slot, size_t k, htad_trace *t) {
    int taken = t->state == TR_DELIVERED;
    for (size_t q = 0; q < g_nprocs; q++) {
        proc *p = &g_procs[q];
        if (p->cap_slot != slot || p->cap_trace != k) continue;
        free(p->pending);
        p->pending = NULL;
        p->cap_slot = -1;
    }
    t->state = TR_FAILED;
    if (taken)
        snprintf(t->error, sizeof t->error, "timed out: process %d took its config and wrote no trace by the "
                 "capture's end plus %d s", (int)t->pid, g_opt.capture_margin_s);
    else
        snprintf(t->error, sizeof t->error, "timed out: process %d never took its config (its profiler stayed "
                 "busy, or it stopped asking)", (int)t->pid);
    g_traces_lost_total++;
    if (!g_opt.quiet) htad_log("trace of process %d: %s", (int)t->pid, t->error);
}

static void finish_capture(htad_capture *c) {
    for (size_t k = 0; k < c->n; k++)
        if (c->tr[k].state < TR_STORED) return;
    c->t_done_ms = htad_now_ms();
    htad_store_enqueue(c->id, (size_t)-1); /* its metrics file */
    if (!g_opt.quiet) htad_log("capture %s done", c->id);
}

void htad_tick(void) {
    int64_t mono = htad_mono_ms();
    pthread_mutex_lock(&mu);
    /* garbage collection: processes silent for gc_s, with what they still owed */
    for (size_t k = 0; k < g_nprocs;) {
        proc *p = &g_procs[k];
        if (mono - p->last_poll_ms <= (int64_t)g_opt.gc_s * 1000) {
            k++;
            continue;
        }
        htad_trace *t = proc_trace(p);
        if (t && t->state <= TR_DELIVERED && !trace_ready(t, g_caps[p->cap_slot]->t_request_ms)) {
            t->state = TR_LOST;
            snprintf(t->error, sizeof t->error, "process %d stopped polling before its trace was written",
                     (int)t->pid);
            g_traces_lost_total++;
        }
        if (!g_opt.quiet) htad_log("process %d dropped: no poll for %d s", (int)p->kpid, g_opt.gc_s);
        free(p->pending);
        g_procs[k] = g_procs[--g_nprocs];
    }
    /* ctxt entries of processes that are gone */
    for (size_t k = 0; k < g_nctxt;) {
        if (kill(g_ctxt[k].kpid, 0) && errno == ESRCH) g_ctxt[k] = g_ctxt[--g_nctxt];
        else k++;
    }
    int64_t now = htad_now_ms();
    for (int s = 0; s < HTAD_MAX_CAPTURES; s++) {
        htad_capture *c = g_caps[s];
        if (!c || c->t_done_ms) continue;
        for (size_t k = 0; k < c->n; k++) {
            htad_trace *t = &c->tr[k];
            if (t->state <= TR_DELIVERED && trace_ready(t, c->t_request_ms)) {
                t->state = TR_STORING;
                htad_store_enqueue(c->id, k);
            } else if (t->state <= TR_DELIVERED && now > c->deadline_ms) {
                expire_trace(s, k, t);
            }
        }
        finish_capture(c);
    }
    pthread_mutex_unlock(&mu);
}

void htad_registry_free(void) {
    for (size_t k = 0; k < g_nprocs; k++) free(g_procs[k].pending);
    g_nprocs = 0;
    for (int k = 0; k < HTAD_MAX_CAPTURES; k++) {
        free(g_caps[k]);
        g_caps[k] = NULL;
    }
}
