/* htad's shared state and the interfaces between its files (docs/capture.md).  One main thread runs
 * the IPC socket (libkineto's polls must be answered within ~90 ms), the metrics timer and the trace
 * watcher; each TCP or HTTP connection gets a short-lived thread; one store thread moves finished
 * traces into the store.  Everything below the lock `mu` is shared.  Calls between the files go one
 * way (tests/layers/check.py): base.c (options, log, clocks, the lock and counters) calls no other
 * file; queue.c, s3.c, sigv4.c and peer.c call base.c only; main.c starts everything and is called by none. */
#ifndef HTAD_H
#define HTAD_H

#include <limits.h>
#include <pthread.h>
#include <stdint.h>

#include "hta/capture.h"

#define HTAD_MAX_PROCS 1024    /* registered processes (more are answered, not registered) */
#define HTAD_PROCS_PER_UID 256 /* of them, per user (the kernel's uid of the sender) */
#define HTAD_MAX_CAPTURES 64   /* captures kept in memory (the oldest finished one is dropped) */
#define HTAD_MAX_TRACES 256    /* traces per capture (process_limit is capped to this) */
#define HTAD_CONN_PER_PORT 1024 /* connections open at once on each port (the oldest unfinished request
                                  * makes way for a new connection when they are all taken) */
#define HTAD_CONN_PER_PEER 16  /* per address other than loopback */
#define HTAD_CONN_UNAUTH 64    /* per port: connections from other addresses not yet past the token */
#define HTAD_REQUEST_MS 10000  /* the whole request must arrive in this time (RPC) */
#define HTAD_HTTP_HEAD_MS 5000 /* the whole HTTP head */
#define HTAD_REPLY_MS 10000    /* the whole reply, plus 1 s per MiB of a payload */
#define HTAD_STALL_MS 10000    /* a reply that no byte of has been taken for this long ends */
#define HTAD_WINDOW 4096       /* metrics samples kept (68 minutes at 1 s) */

/* ---- options ---- */
typedef struct htad_opts {
    const char *listen;      /* address of both TCP listeners (default 127.0.0.1) */
    int port, http_port;     /* 1778, 0 = no HTTP */
    const char *store;       /* DIR or s3://bucket/prefix */
    const char *s3_endpoint, *s3_region; /* http://host:port, us-east-1 */
    const char *trace_dir;   /* where libkineto writes (default /tmp/htad): every trace path lies here */
    const char *token_file;  /* required for requests from other addresses */
    const char *ipc_dir;     /* KINETO_IPC_SOCKET_DIR (filesystem sockets), NULL: abstract */
    const char *nvml_lib, *dcgm_lib; /* override the libraries dlopen'ed */
    int interval_ms, gc_s;
    int capture_margin_s;    /* a capture's traces are due by its window's end plus this */
    int iterations_timeout_s; /* the iteration form's whole wait */
    int keep_captures;       /* retention of a folder store: captures kept, and their bytes */
    int64_t keep_bytes;
    int64_t max_trace_bytes;
    int quiet;
    char host[256];          /* this host's name, in file names */
    char instance[300];      /* this htad among those that may share a store: HOST:PORT (its request port) */
    char tag[12];            /* 8 hex digits of the instance, in capture ids: two htads never make one id */
    char token[256];
} htad_opts;
extern htad_opts g_opt; /* base.c, filled by main.c */

/* ---- logging (stderr, one line each, with a time) ---- */
void htad_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int64_t htad_now_ms(void);   /* wall clock, Unix ms */
int64_t htad_mono_ms(void);

/* ---- the lock of everything shared, and the counters under it (base.c) ---- */
extern pthread_mutex_t mu;
extern uint64_t g_captures_total, g_traces_stored_total, g_traces_lost_total, g_requests_total,
    g_requests_refused_total, g_procs_refused_total, g_polls_dropped_total;
extern uint64_t g_retention_passes_total, g_captures_removed_total;

/* ---- registered processes and captures (registry.c; every call under mu) ---- */
typedef enum { TR_REQUESTED, TR_DELIVERED, TR_STORING, TR_STORED, TR_LOST, TR_FAILED, TR_REMOVED } tr_state;
typedef struct htad_trace {
    int32_t pid;
    uint32_t uid;            /* the process's user: the trace file must be theirs */
    tr_state state;
    char spool[512];         /* where libkineto writes it */
    char name[300];          /* its name in the store, under the capture's id */
    int64_t size;
    char error[200];
} htad_trace;
typedef struct htad_capture {
    char id[64];
    int64_t job_id, t_request_ms, t_done_ms;
    int64_t deadline_ms;     /* wall ms: traces not settled by then have failed (timed out) */
    int dyno;                /* from setKinetOnDemandRequest */
    int metrics_written;
    size_t n;
    htad_trace tr[HTAD_MAX_TRACES];
} htad_capture;

/* A capture request (RPC) for the processes it matches; fills the reply text (dyno's keys, or with
 * capture != NULL the capture's id and host too). */
typedef struct htad_request {
    int64_t job_id;
    int32_t pids[HTAD_MAX_TRACES];
    size_t npids;
    int64_t limit;
    const char *config;      /* dyno: the config as given, with ACTIVITIES_LOG_FILE in trace_dir */
    hta_capture_opts copts;  /* htaCapture: the config is built per capture (log_file set here) */
} htad_request;
hta_status htad_trigger(const htad_request *r, hta_sbuf *reply, hta_error *err);
/* The sender of a datagram as the kernel and /proc say (peer.c): its pid in htad's namespace and its start
 * time (together unique on the host), and its own pid and ancestors' in its namespace (libkineto's list,
 * leaf first) with the same processes' pids in htad's namespace. */
typedef struct htad_peer {
    int32_t pid;
    uint32_t uid;
    int64_t start;                  /* /proc/PID/stat starttime (clock ticks after boot) */
    int32_t npids;
    int32_t pids[HTA_IPC_MAX_PIDS];  /* in the process's namespace */
    int32_t kpids[HTA_IPC_MAX_PIDS]; /* the same processes in htad's */
} htad_peer;
int htad_peer_lookup(int32_t pid, htad_peer *p); /* 0, or -1 when the process is gone */
int64_t htad_proc_start(int32_t pid);           /* its start time, or -1 when it is gone */
/* A registered process's verified identity (no /proc read per poll); 0 when it is not registered. */
int htad_known_peer(int32_t kpid, uint32_t uid, htad_peer *p);
/* A `req` or `ctxt` from a verified sender: the reply payload (config text or int32) into out. */
void htad_on_req(const hta_ipc_req *r, const htad_peer *peer, hta_sbuf *out);
int32_t htad_on_ctxt(int64_t job_id, int32_t gpu, const htad_peer *peer);
/* Called every ~200 ms by the main loop: garbage collection, finished traces handed to the store. */
void htad_tick(void);
size_t htad_nprocs(void);
htad_capture *htad_capture_find(const char *id);
/* The capture's state as JSON (htaStatus). */
void htad_capture_json(const htad_capture *c, hta_sbuf *b);
void htad_registry_free(void);

/* ---- the store (store.c: a folder, or s3.c) ---- */
hta_status htad_store_open(const char *spec, hta_error *err);
/* Copies the local file into the store as key (id/name), completely or not at all. */
hta_status htad_store_put_file(const char *key, const char *path, uint32_t uid, int64_t *size, hta_error *err);
hta_status htad_store_put_mem(const char *key, const char *data, size_t n, hta_error *err);
/* Opens key for reading (*fd, *size): a folder's file, or an S3 object fetched into an unnamed
 * temporary file first (blocking: a worker thread's job).  Never through a link. */
hta_status htad_store_open_read(const char *key, int *fd, uint64_t *size, hta_error *err);
int htad_store_is_s3(void);
/* A file of capture id was fetched: a folder store marks the capture fetched (retention may remove it). */
void htad_store_fetched(const char *key);
/* Retention of a folder store (retention.c): a capture folder this htad makes carries its marker (made=1),
 * one it finds must carry it already (made=0) or nothing is written into it; a fetched one is marked; the
 * oldest fetched finished captures beyond --keep-captures / --keep-mb go, and only what htad wrote there. */
hta_status htad_folder_claim(const char *folder, int made, hta_error *err);
void htad_folder_fetched(const char *folder);
void htad_retention(const char *store);
void htad_store_close(void);
/* The store thread: put requests queued by htad_tick. */
hta_status htad_store_start(hta_error *err);
void htad_store_stop(void);
/* Its queue (queue.c): htad_tick puts, the store thread takes. */
typedef struct htad_job {
    char id[64];
    size_t idx; /* a trace of the capture, or (size_t)-1: its metrics file */
} htad_job;
void htad_store_enqueue(const char *capture_id, size_t trace_index);
int htad_queue_take(htad_job *j); /* waits for a job: 1, or 0 once stopping with the queue empty */
void htad_queue_done(void);       /* the job taken is finished */
void htad_store_drain(void);      /* waits until the queue is empty and the thread idle */
void htad_queue_stop(void);

/* S3 (s3.c): s3://bucket/prefix at endpoint, credentials from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY. */
typedef struct htad_s3 htad_s3;
hta_status htad_s3_open(const char *url, const char *endpoint, const char *region, htad_s3 **out, hta_error *err);
/* Puts the n bytes of fd (from its start), or of data when fd < 0. */
hta_status htad_s3_put(htad_s3 *s, const char *key, int fd, const char *data, size_t n, hta_error *err);
/* Gets key into the open file fd (truncated first), at most max bytes. */
hta_status htad_s3_get_fd(htad_s3 *s, const char *key, int fd, uint64_t max, hta_error *err);
void htad_s3_close(htad_s3 *s);

/* SigV4 pieces (sigv4.c), exposed for the unit test. */
typedef struct htad_sha {
    uint32_t h[8];
    unsigned char buf[64];
    size_t n;
    uint64_t total;
} htad_sha;
void htad_sha256_init(htad_sha *s);
void htad_sha256_add(htad_sha *s, const void *data, size_t n);
void htad_sha256_end(htad_sha *s, unsigned char out[32]);
void htad_sha256(const void *data, size_t n, unsigned char out[32]);
void htad_hmac_sha256(const void *key, size_t kn, const void *data, size_t n, unsigned char out[32]);
void htad_hex(const unsigned char *d, size_t n, char *out);
/* The Authorization header value of a request (payload hash in hex given). */
void htad_sigv4(const char *method, const char *host, const char *path_enc, const char *query,
                const char *payload_hash, const char *amz_date, const char *region, const char *access_key,
                const char *secret, char *auth, size_t cap);

/* ---- metrics (metrics.c) ---- */
void htad_metrics_init(void);
void htad_metrics_sample(void);           /* one sample into the window (main thread) */
void htad_metrics_prometheus(hta_sbuf *b);
/* The samples with since <= t_ms <= until as JSON lines. */
void htad_metrics_jsonl(int64_t since, int64_t until, hta_sbuf *b);
void htad_metrics_close(void);

/* ---- connections (conn.c: one thread, every socket non-blocking; rpc.c, http.c: the replies) ---- */
typedef struct htad_reply {
    hta_sbuf out;            /* the bytes to send */
    int file_fd;             /* then file_size bytes of this file (a fetch), or -1 */
    uint64_t file_size;
    char key[600];           /* set: a fetch from S3, for a worker (htad_rpc_fetch_open) */
    int refused;
} htad_reply;
/* One complete RPC request (JSON text) -> its reply. */
void htad_rpc_handle(const char *txt, size_t len, htad_reply *r);
void htad_rpc_refuse(htad_reply *r, const char *why);
void htad_rpc_fetch_open(htad_reply *r); /* r->key -> the header and the file, or an error */
/* The reply to an HTTP head: 200 (the metrics) or the refusal's status with why. */
void htad_http_reply(int status, const char *why, htad_reply *r);
/* Starts the connection thread on the listening sockets (hfd may be -1); lo_*: they listen on
 * loopback only. */
hta_status htad_conn_start(int rfd, int hfd, hta_error *err);
/* No new connections; the open ones finish until htad_stop_by_ms(), then are closed. */
void htad_conn_stop(void);
/* Shared with s3.c and metrics.c (base.c): the connections open, and 0 while running; after SIGTERM,
 * the monotonic ms by which everything must have ended. */
size_t htad_conn_count(void);
void htad_set_conn_count(size_t n);
int64_t htad_stop_by_ms(void);
void htad_set_stop_by(int64_t mono_ms);

#endif
