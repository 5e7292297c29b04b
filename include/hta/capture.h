/* On-demand capture (docs/capture.md): the pieces that htad (src/daemon/) and `hta capture`
 * (src/cli/cmd_capture.c) share, in src/capture/.  A small JSON reader and writer for the requests,
 * dynolog's IPC datagrams (the protocol libkineto speaks), the request framing of dynolog's TCP JSON
 * RPC (a native int32 length, then that many bytes), the client side of it, the Kineto config text a
 * capture sends, the path rules a trace file must follow, and the metrics file format (JSON lines)
 * that htad writes and the report reads.  Nothing here prints or exits. */
#ifndef HTA_CAPTURE_H
#define HTA_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#include "hta/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- JSON values (requests and replies are small: a tree of malloc'd nodes) ---- */
typedef enum hta_jtype { HTA_JNULL, HTA_JBOOL, HTA_JNUM, HTA_JSTR, HTA_JARR, HTA_JOBJ } hta_jtype;
typedef struct hta_jval {
    hta_jtype type;
    int b;          /* JBOOL */
    int is_int;     /* JNUM: an integer that fits int64 (i is exact) */
    int64_t i;      /* JNUM */
    double d;       /* JNUM */
    char *s;        /* JSTR: NUL-terminated (a \u0000 inside is refused) */
    size_t n;       /* JARR, JOBJ: elements */
    struct hta_jval *v; /* JARR, JOBJ: the elements */
    char **k;       /* JOBJ: the keys */
} hta_jval;

/* Parses len bytes of JSON text (one value, nesting at most 32 deep).  err says the byte offset. */
hta_status hta_json_parse(const char *text, size_t len, hta_jval **out, hta_error *err);
void hta_json_free(hta_jval *v);
/* The member key of an object (the last one when repeated), or NULL. */
const hta_jval *hta_json_get(const hta_jval *obj, const char *key);
/* The member as an int64 (is_int numbers only), a string, an array; def/NULL when absent or of
 * another type. */
int64_t hta_json_int(const hta_jval *obj, const char *key, int64_t def);
const char *hta_json_str(const hta_jval *obj, const char *key);

/* ---- a growable text buffer, for replies and files ---- */
typedef struct hta_sbuf {
    char *p;
    size_t len, cap;
    int oom; /* sticky: an allocation failed, the text is incomplete */
} hta_sbuf;
void hta_sb_add(hta_sbuf *b, const char *s, size_t n);
#define HTA_SB_LIT(b, lit) hta_sb_add((b), lit, sizeof(lit) - 1) /* a string literal */
void hta_sb_printf(hta_sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void hta_sb_quote(hta_sbuf *b, const char *s); /* a JSON string literal */
void hta_sb_free(hta_sbuf *b);

/* ---- dynolog's IPC datagrams (shared/design/dynolog-ipc.md §2) ---- */
#define HTA_IPC_HEADER 40       /* size_t size, char type[32] */
#define HTA_IPC_MAX_PIDS 64     /* libkineto sends at most 11 */
#define HTA_IPC_DAEMON_NAME "dynolog"
typedef struct hta_ipc_msg {
    char type[33];              /* "req", "ctxt", ... */
    const unsigned char *payload;
    size_t size;
} hta_ipc_msg;
/* Splits a received datagram; HTA_EFORMAT when shorter than the header or when 40 + size is not its
 * length. */
hta_status hta_ipc_parse(const void *buf, size_t len, hta_ipc_msg *m, hta_error *err);
/* Writes header + payload into buf (cap bytes); returns the length, 0 when it does not fit. */
size_t hta_ipc_build(void *buf, size_t cap, const char *type, const void *payload, size_t size);
/* A client's `req`: type bits (2 = activities), job id, its pid and its ancestors'. */
typedef struct hta_ipc_req {
    int32_t type;
    int64_t job_id;
    int32_t npids;
    int32_t pids[HTA_IPC_MAX_PIDS];
} hta_ipc_req;
hta_status hta_ipc_parse_req(const hta_ipc_msg *m, hta_ipc_req *r, hta_error *err);
/* The socket address of name: abstract "\0name\0" (length returned in *len), or dir/name when dir is
 * neither NULL nor empty (KINETO_IPC_SOCKET_DIR).  HTA_EINVAL when it does not fit. */
struct sockaddr_un;
hta_status hta_ipc_addr(const char *dir, const char *name, struct sockaddr_un *a, unsigned *len, hta_error *err);

/* ---- the TCP requests (dynolog's framing: native int32 length, then JSON) ---- */
#define HTA_RPC_PORT 1778
#define HTA_RPC_MAX_REQUEST (64 * 1024) /* a longer request is refused unread */
/* Reads one message (at most max bytes) from fd, waiting at most timeout_ms for each part.
 * *out is malloc'd and NUL-terminated. */
hta_status hta_rpc_read(int fd, size_t max, int timeout_ms, char **out, size_t *len, hta_error *err);
hta_status hta_rpc_write(int fd, const char *msg, size_t len, int timeout_ms, hta_error *err);
/* Reads exactly n bytes (a payload after a reply) into a callback, in pieces. */
typedef hta_status (*hta_sink_fn)(void *ctx, const void *data, size_t n, hta_error *err);
hta_status hta_rpc_read_raw(int fd, uint64_t n, int timeout_ms, hta_sink_fn sink, void *ctx, hta_error *err);
/* Connects to host:port (a name, IPv4 or IPv6), waiting at most timeout_ms. */
hta_status hta_rpc_connect(const char *host, int port, int timeout_ms, int *fd, hta_error *err);
/* One request: connect, send, read the JSON reply (parsed); *fd_out (when not NULL) keeps the connection
 * open for a payload that follows the reply, otherwise it is closed. */
hta_status hta_rpc_call(const char *host, int port, const char *req, int timeout_ms, hta_jval **reply,
                        int *fd_out, hta_error *err);

/* ---- htad's front ends, judged from the first bytes (front.c; fuzzed by tests/fuzz/fuzz_front.c) ---- */
#define HTA_TOKEN_MAX 255
#define HTA_HTTP_MAX_HEAD 8192
/* A token htad accepts: 16 to 255 printable ASCII characters, no space, quote or backslash (it is
 * matched as written in the request's first bytes). */
int hta_token_ok(const char *token);
/* given (n bytes) equals token, in time that depends on the token's length only. */
int hta_token_eq(const char *given, size_t n, const char *token);
/* The head of an RPC message in the len bytes received so far: its int32 length within max and, when
 * token is not NULL, a body that starts {"token":"TOKEN".  1: the message is complete (*total bytes
 * with the length); 0: more bytes needed; -1: refused (why), decided as early as the bytes allow.
 * *authed becomes 1 once the token matched. */
int hta_rpc_head(const unsigned char *buf, size_t len, size_t max, const char *token, size_t *total, int *authed,
                 char *why, size_t cap);
/* An HTTP request head read so far (GET /metrics only), resumable: pos is where the next line starts. */
typedef struct hta_http_in {
    size_t pos;
    int first, authed;
} hta_http_in;
/* 1: a complete, accepted head; 0: more bytes needed; -1: refused with HTTP *status and why, as soon
 * as the line that decides it is complete (the method and path on the first line, a wrong
 * "Authorization: Bearer" on its own line, none at the blank line when token is not NULL, a line with
 * a control character other than tab or a folded line: 400). */
int hta_http_head(hta_http_in *h, const char *buf, size_t len, const char *token, int *status, char *why,
                  size_t cap);
/* Text from elsewhere made safe to print or log: control characters (C0, DEL, C1) as \xNN and
 * backslashes doubled; stops at a NUL or n bytes.  Returns the length written (cap includes the NUL). */
size_t hta_escape_text(const char *s, size_t n, char *out, size_t cap);

/* ---- the Kineto config a capture sends (dynolog-ipc.md §4) ---- */
typedef struct hta_capture_opts {
    const char *log_file;  /* ACTIVITIES_LOG_FILE */
    int64_t start_time_ms; /* PROFILE_START_TIME (Unix ms); 0: kineto's own start */
    int64_t duration_ms;   /* ACTIVITIES_DURATION_MSECS, when iterations <= 0 */
    int64_t iterations;    /* > 0: ACTIVITIES_ITERATIONS from the next iteration (roundup 1) */
    int64_t warmup_s;      /* ACTIVITIES_WARMUP_PERIOD_SECS; < 0: kineto's default */
    const char *trace_id;  /* REQUEST_TRACE_ID, may be NULL */
} hta_capture_opts;
hta_status hta_capture_config(const hta_capture_opts *o, hta_sbuf *out, hta_error *err);
/* A dyno config text as libkineto will parse it: every line KEY=VALUE (comments and blank lines
 * aside), no carriage return, integers, booleans, activity types and PROFILE_START_TIME (at most 10 s
 * in the past at now_ms) as libkineto accepts them; unknown keys pass (libkineto warns).  HTA_EINVAL
 * with the line and the reason otherwise.  info: what the capture will do, for its deadline. */
typedef struct hta_config_info {
    int64_t duration_ms, warmup_s, start_time_ms, iterations, start_iteration; /* -1: no start iteration */
} hta_config_info;
hta_status hta_config_check(const char *cfg, size_t len, int64_t now_ms, hta_config_info *info, hta_error *err);
/* The ACTIVITIES_LOG_FILE of a config text (the last one), copied into buf; 0 when there is none. */
int hta_config_log_file(const char *cfg, size_t len, char *buf, size_t cap);
/* Where libkineto writes a trace for pid (X.pt.trace.json -> X_PID.pt.trace.json, else the first .json
 * -> _PID.json, else unchanged).  0, or -1 when it does not fit. */
int hta_kineto_trace_path(const char *log_file, int32_t pid, char *buf, size_t cap);
/* A trace path must lie in dir (absolute, no "..", no control characters): libkineto's own rule for
 * on-demand paths.  HTA_EINVAL with the reason otherwise. */
hta_status hta_path_confined(const char *path, const char *dir, hta_error *err);
/* A name safe as one path component (letters, digits, "._-", not starting with '.'). */
int hta_safe_name(const char *name);

/* ---- metrics files (docs/capture.md, "Metrics file"): JSON lines, one sample per line ----
 * {"t_ms":1732420000123,"host":"h","cpu_busy":0.42,"cpu_iowait":0.01,"mem_used_bytes":N,
 *  "mem_total_bytes":N,"gpus":[{"gpu":0,"util":0.97,"mem_used_bytes":N,"mem_total_bytes":N,
 *  "power_w":250.5,"sm_clock_mhz":1410,"mem_clock_mhz":1593,"sm_active":0.09,"tensor_active":0.0}]}
 * A GPU value that could not be read is left out (sm_active and tensor_active need DCGM). */
#define HTA_METRICS_MAX_GPUS 16
typedef struct hta_gpu_sample {
    int32_t gpu;
    double util, power_w, sm_active, tensor_active; /* fractions 0..1 and watts; NaN: not read */
    int64_t mem_used, mem_total, sm_clock_mhz, mem_clock_mhz; /* -1: not read */
} hta_gpu_sample;
typedef struct hta_metrics_sample {
    int64_t t_ms;
    double cpu_busy, cpu_iowait; /* fractions of all cores since the previous sample; NaN: not read */
    int64_t mem_used, mem_total; /* bytes; -1: not read */
    int ngpus;
    hta_gpu_sample gpus[HTA_METRICS_MAX_GPUS];
} hta_metrics_sample;
/* Appends one line (with its newline) for sample s of host. */
void hta_metrics_line(hta_sbuf *b, const char *host, const hta_metrics_sample *s);
/* Reads a metrics file: every line that parses (host copied into host, cap bytes, from the first
 * line).  *out is malloc'd. */
hta_status hta_metrics_read(const char *path, hta_metrics_sample **out, size_t *n, char *host, size_t cap,
                            hta_error *err);

#ifdef __cplusplus
}
#endif
#endif
