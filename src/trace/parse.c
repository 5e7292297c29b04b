/* The trace parser: a streaming JSON reader specialised for Chrome/Kineto
 * traces.  Bytes arrive in blocks; the parser works one "unit" at a time
 * (one event, or one top-level key with its value).  When a unit runs into
 * the end of the block, the unit is moved to the front of the buffer, more
 * bytes are read, and the unit is parsed again: units are small, so this
 * costs one re-parse per block and keeps memory bounded. */
#include "trace/parse.h"

#include <stdlib.h>
#include <string.h>

#include "hta/rawtrace.h"
#include "hta/vocab.h"
#include "trace/input.h"
#include "core/bigbuf.h"
#include "trace/json_lex.h"
#include "trace/json_field.h"
#include "trace/merged.h"

/* Bytes read per refill.  A unit larger than the buffer doubles it, up to MAX_UNIT: no real event comes
 * near 1 GiB, so a unit that does is a broken file, not a reason to take all memory. */
#define BLOCK (1u << 20)
#define MAX_UNIT (1u << 30)

/* Where the parser is: before the first byte, between top-level keys, inside the events array, after the
 * closing '}' (or ']' of Chrome's array form). */
enum { ST_OPEN, ST_KEY, ST_EVENTS, ST_END, ST_DONE };

typedef struct parser {
    rank_build *b;
    hta_input *in;
    const char *path;
    char *buf;
    size_t cap, len; /* buffer bytes (without padding), valid bytes */
    uint64_t base;   /* offset of buf[0] in the JSON text */
    int eof;
    int state, first, seen_events;
    /* Chrome's JSON Array Format: the file is the events array itself, no traceEvents object (torch's
     * legacy export_chrome_trace writes it) */
    int array_form;
    lex L;
    const hta_raw_callbacks *raw; /* raw scan: hand out spans, build nothing */
    uint32_t raw_index;
    uint64_t dur_sum; /* |dur| of the rows so far: at most HTA_TIME_MAX_NS (trace.h) */
    char *scratch; /* unescaped strings */
    size_t scratch_cap;
    hta_error *err;
    /* A chunk of a split load (parse.h, split.c): it starts at an event's '{' (start > 0) and stops at
     * the first of the later chunks' starts that it reaches as an event's '{' (stops, ascending) */
    uint64_t start;
    const uint64_t *stops;
    size_t nstops, stop_i;
    int landed;
    uint32_t flow_nocat; /* a flow's cat when it has none: 0, or UINT32_MAX in a later chunk (split.c) */
} parser;

/* step(): the parse reached a later chunk's start (not a lexer result: parse.c only) */
#define LEX_STOP ((lex_rc)3)

/* ---------- helpers ---------- */

/* The one place a lexer failure (lex_rc LEX_ERR with its code, message and
 * position in the lex) becomes an hta_status + hta_error. */
static hta_status perr(parser *P, const lex *L) {
    return hta_fail(P->err, L->code, "%s: byte %llu: %s", P->path,
                    (unsigned long long)(P->base + (uint64_t)(L->err_at - P->buf)), L->err);
}

#define LEX_NOMEM(L, at) LEX_FAIL(L, at, HTA_ENOMEM, "out of memory")
/* A rank builder's status (no message) as a lexer failure: out of memory, or
 * the limit `what` passed. */
#define LEX_BUILD(L, at, st, what) LEX_FAIL(L, at, st, (st) == HTA_ENOMEM ? "out of memory" : (what))

#define NUL_MSG "string holds \\u0000 (NUL), which hta cannot keep"

/* Most strings are used where they lie in the buffer; only a string with escapes is unescaped, into this
 * reused scratch.  s: the body after the opening quote.  A \u0000 would cut the string short wherever
 * the model hands it out as C text (names, categories, args), so such a string is refused, never kept
 * truncated. */
static lex_rc scratch_str(parser *P, const char *s, const char *q, const char **out, size_t *n) {
    size_t need = (size_t)(q - s) + 1;
    if (need > P->scratch_cap) {
        char *d = realloc(P->scratch, need * 2);
        if (!d) return LEX_NOMEM(&P->L, s);
        P->scratch = d;
        P->scratch_cap = need * 2;
    }
    *n = lex_unescape(s, q, P->scratch);
    if (memchr(P->scratch, 0, *n)) return LEX_ERROR(&P->L, s - 1, NUL_MSG);
    *out = P->scratch;
    return LEX_OK;
}

static int key_is(const char *k, size_t n, const char *lit, size_t ln) {
    return n == ln && memcmp(k, lit, ln) == 0;
}
#define KEY_IS(k, n, lit) key_is(k, n, lit, sizeof(lit) - 1)

/* ---------- args ---------- */

/* Args that are columns of their own (stream, correlation, External id) rather than arg slots, and the
 * name that a ph "M" metadata event gives a thread or process. */
enum { A_STREAM = -2, A_CORR = -3, A_EXTID = -4, A_NAME = -5, A_NONE = -1 };

/* The raw keys of the arg slots (trace.h): HTA's default arg set (TF§5.1) and the few more the analyses
 * here read (process groups, Seq, queued, device, kernel_backend). */
static const char *const KNOWN_ARGS[HTA_ARG_KNOWN_COUNT] = {
    [HTA_ARG_BYTES] = "bytes",
    [HTA_ARG_MEMORY_BW] = "memory bandwidth (GB/s)",
    [HTA_ARG_WAIT_ON_STREAM] = "wait_on_stream",
    [HTA_ARG_WAIT_ON_EVENT_CORR] = "wait_on_cuda_event_record_corr_id",
    [HTA_ARG_WAIT_ON_EVENT_ID] = "wait_on_cuda_event_id",
    [HTA_ARG_INPUT_DIMS] = "Input Dims",
    [HTA_ARG_INPUT_TYPE] = "Input type",
    [HTA_ARG_INPUT_STRIDES] = "Input Strides",
    [HTA_ARG_PYTHON_ID] = "Python id",
    [HTA_ARG_PYTHON_PARENT_ID] = "Python parent id",
    [HTA_ARG_COLLECTIVE_NAME] = "Collective name",
    [HTA_ARG_IN_MSG_NELEMS] = "In msg nelems",
    [HTA_ARG_OUT_MSG_NELEMS] = "Out msg nelems",
    [HTA_ARG_DTYPE] = "dtype",
    [HTA_ARG_GROUP_SIZE] = "Group size",
    [HTA_ARG_PROCESS_RANK] = "Rank",
    [HTA_ARG_IN_SPLIT_SIZE] = "In split size",
    [HTA_ARG_OUT_SPLIT_SIZE] = "Out split size",
    [HTA_ARG_PG_NAME] = "Process Group Name",
    [HTA_ARG_PG_DESC] = "Process Group Description",
    [HTA_ARG_PG_RANKS] = "Process Group Ranks",
    [HTA_ARG_SEQ] = "Seq",
    [HTA_ARG_QUEUED] = "queued",
    [HTA_ARG_DEVICE] = "device",
    [HTA_ARG_KERNEL_BACKEND] = "kernel_backend",
    [HTA_ARG_COMMS_ID] = "Comms Id",
    [HTA_ARG_EXTERNAL_ID_LEGACY] = "external id",
    [HTA_ARG_CONCRETE_INPUTS] = "Concrete Inputs",
    [HTA_ARG_SRC_RANK] = "Src Rank",
    [HTA_ARG_DST_RANK] = "Dst Rank",
};

const char *hta_arg_key_name(hta_arg_key k) {
    return (unsigned)k < HTA_ARG_KNOWN_COUNT ? KNOWN_ARGS[k] : "";
}

#define IS(lit) (memcmp(k, lit, sizeof(lit) - 1) == 0)
/* Keys by length first: most args of a Kineto event are not ours, and this
 * rejects them with one or two compares. */
static int arg_lookup(const char *k, size_t n) {
    switch (n) {
    case 3: if (IS("Seq")) return HTA_ARG_SEQ; break;
    case 4: if (IS("Rank")) return HTA_ARG_PROCESS_RANK;
            if (IS("name")) return A_NAME;
            break;
    case 5: if (IS("bytes")) return HTA_ARG_BYTES;
            if (IS("dtype")) return HTA_ARG_DTYPE;
            break;
    case 8: if (IS("Comms Id")) return HTA_ARG_COMMS_ID;
            if (IS("Src Rank")) return HTA_ARG_SRC_RANK;
            if (IS("Dst Rank")) return HTA_ARG_DST_RANK;
            break;
    case 6: if (IS("stream")) return A_STREAM;
            if (IS("queued")) return HTA_ARG_QUEUED;
            if (IS("device")) return HTA_ARG_DEVICE;
            break;
    case 9: if (IS("Python id")) return HTA_ARG_PYTHON_ID; break;
    case 10: if (IS("Input Dims")) return HTA_ARG_INPUT_DIMS;
             if (IS("Input type")) return HTA_ARG_INPUT_TYPE;
             if (IS("Group size")) return HTA_ARG_GROUP_SIZE;
             break;
    case 11: if (IS("correlation")) return A_CORR;
             if (IS("External id")) return A_EXTID;
             if (IS("external id")) return HTA_ARG_EXTERNAL_ID_LEGACY;
             break;
    case 13: if (IS("Input Strides")) return HTA_ARG_INPUT_STRIDES;
             if (IS("In msg nelems")) return HTA_ARG_IN_MSG_NELEMS;
             if (IS("In split size")) return HTA_ARG_IN_SPLIT_SIZE;
             break;
    case 14: if (IS("wait_on_stream")) return HTA_ARG_WAIT_ON_STREAM;
             if (IS("Out msg nelems")) return HTA_ARG_OUT_MSG_NELEMS;
             if (IS("Out split size")) return HTA_ARG_OUT_SPLIT_SIZE;
             if (IS("kernel_backend")) return HTA_ARG_KERNEL_BACKEND;
             break;
    case 15: if (IS("Collective name")) return HTA_ARG_COLLECTIVE_NAME;
             if (IS("Concrete Inputs")) return HTA_ARG_CONCRETE_INPUTS;
             break;
    case 16: if (IS("Python parent id")) return HTA_ARG_PYTHON_PARENT_ID; break;
    case 18: if (IS("Process Group Name")) return HTA_ARG_PG_NAME; break;
    case 19: if (IS("Process Group Ranks")) return HTA_ARG_PG_RANKS; break;
    case 21: if (IS("wait_on_cuda_event_id")) return HTA_ARG_WAIT_ON_EVENT_ID; break;
    case 23: if (IS("memory bandwidth (GB/s)")) return HTA_ARG_MEMORY_BW; break;
    case 25: if (IS("Process Group Description")) return HTA_ARG_PG_DESC; break;
    case 33: if (IS("wait_on_cuda_event_record_corr_id")) return HTA_ARG_WAIT_ON_EVENT_CORR; break;
    default: break;
    }
    return A_NONE;
}
#undef IS

/* One event as it is scanned.  Strings stay spans of the buffer until the event is known to be kept, so a
 * dropped event (a flow, an instant, metadata) costs no interning. */
typedef struct event {
    char ph;
    int have_cat, have_dur, have_ts, have_name, have_pid, have_tid, have_id, bp_e;
    int cat_key; /* a "cat" key was written (null included): no category is inferred then */
    int ts_frac, dur_frac;
    const char *cat_s, *name_s; /* raw string bodies in the buffer */
    const char *cat_q, *name_q; /* closing quotes */
    int cat_esc, name_esc;
    int64_t ts, dur, pid, tid, id;
    int64_t pid_sym, tid_sym;
    int64_t stream, corr, extid;
    int have_stream;
    const char *args_p; /* deferred args object */
    int args_done;
    int64_t meta_name; /* local sym of args.name (ph M), -1 */
    size_t args_mark;  /* r->nargs before this event's args */
} event;

/* The usual number of a Kineto event (ts, dur, ids): non-negative, at most 15 digits before a point and
 * at most `scale` after it, taken in one go as the integer value x 10^scale: exactly what lex_number and
 * lex_num_scaled give for it.  0 for anything else (a sign, an exponent, more digits, a number that may
 * go on past the bytes read), which takes the general way. */
static inline int fast_decimal(const lex *L, const char *p, int scale, int64_t *v, int *frac, const char **out) {
    static const uint64_t P10[4] = {1, 10, 100, 1000};
    if (!is_digit(*p) || (*p == '0' && is_digit(p[1]))) return 0;
    const char *s = p;
    uint64_t m = 0;
    int nf = 0;
    if (take_digits(&s, &m) > 15) return 0;
    if (*s == '.') {
        s++;
        nf = take_digits(&s, &m);
        if (nf == 0 || nf > scale) return 0;
    }
    if (*s == 'e' || *s == 'E' || s >= L->end) return 0;
    *v = (int64_t)(m * P10[scale - nf]);
    *frac = s[-1 - nf] == '.';
    *out = s;
    return 1;
}

/* Integer-valued arg (ids): int64 or an error; a non-numeric string is -1
 * (HTA's stream normalisation). */
static lex_rc value_int(parser *P, const char *p, const char **out, int64_t *v) {
    lex *L = &P->L;
    lex_rc rc;
    if (*p == '"') {
        const char *q;
        int esc;
        if ((rc = lex_string(L, p + 1, &q, &esc))) return rc;
        /* numeric text ("7") counts; anything else ("0x0") is no stream */
        const char *s = p + 1;
        int neg = 0;
        if (s < q && *s == '-') neg = 1, s++;
        int64_t acc = 0;
        int ok = s < q && !esc;
        for (; ok && s < q; s++) {
            /* too many digits for int64 is no stream number either: stop before the next digit could
             * overflow */
            if (*s < '0' || *s > '9' || acc > (INT64_MAX - 9) / 10) ok = 0;
            else acc = acc * 10 + (*s - '0');
        }
        *v = ok ? (neg ? -acc : acc) : -1;
        *out = q + 1;
        return LEX_OK;
    }
    /* null is HTA's "absent": the default -1 */
    if (*p == 'n') {
        const char *q = p;
        if ((rc = lex_skip_value(L, p, &q))) return rc;
        *v = -1;
        *out = q;
        return LEX_OK;
    }
    int fr;
    if (fast_decimal(L, p, 0, v, &fr, out)) return LEX_OK;
    lex_num n;
    const char *start = p;
    if ((rc = lex_number(L, p, out, &n))) return rc;
    if (lex_num_scaled(&n, 0, v)) return LEX_ERROR(L, start, "integer out of int64 range");
    return LEX_OK;
}

/* Stores one arg value of a kept slot. */
/* Values are kept as written, as HTA copies them (TF§5.1): an integer stays an integer, a number with a
 * fraction or exponent a double, a string its interned text, anything else its JSON text. */
static lex_rc value_store(parser *P, const char *p, const char **out, uint32_t key_sym) {
    lex *L = &P->L;
    rank_build *b = P->b;
    /* the key is a 28-bit field of the 12-byte arg */
    if (key_sym >= HTA_ARG_MAX_KEY) return LEX_ERROR(L, p, "too many distinct strings");
    hta_arg *a = rank_build_arg(b);
    if (!a) return LEX_NOMEM(L, p);
    a->key = key_sym & (HTA_ARG_MAX_KEY - 1);
    lex_rc rc;
    if (*p == '"') {
        const char *q;
        int esc;
        if ((rc = lex_string(L, p + 1, &q, &esc))) return rc;
        size_t n = (size_t)(q - p - 1);
        const char *s = p + 1;
        if (esc && (rc = scratch_str(P, p + 1, q, &s, &n))) return rc;
        a->type = HTA_V_STR;
        a->v.sym = hta_symtab_intern(b->sym, s, n);
        *out = q + 1;
    } else if (*p == '-' || (*p >= '0' && *p <= '9')) {
        lex_num n;
        const char *q;
        int64_t fv;
        int fr;
        if (fast_decimal(L, p, 0, &fv, &fr, out)) {
            a->type = HTA_V_INT;
            a->v.i = fv;
            return LEX_OK;
        }
        if ((rc = lex_number(L, p, &q, &n))) return rc;
        int64_t iv;
        /* an integer beyond int64 is kept as a double rather than refused: one odd value should not stop
         * the load */
        if (!n.frac && lex_num_scaled(&n, 0, &iv) == 0) {
            a->type = HTA_V_INT;
            a->v.i = iv;
        } else {
            a->type = HTA_V_FLOAT;
            a->v.f = lex_num_double(p, q);
        }
        *out = q;
    } else {
        const char *q;
        if ((rc = lex_skip_value(L, p, &q))) return rc;
        a->type = HTA_V_JSON;
        a->v.sym = hta_symtab_intern(b->sym, p, (size_t)(q - p));
        *out = q;
    }
    if (a->type != HTA_V_INT && a->type != HTA_V_FLOAT && a->v.sym == UINT32_MAX)
        return LEX_NOMEM(L, p);
    return LEX_OK;
}

/* capture_all: every key is kept, for a cuda_profiler_range event whose args are CUPTI counters that
 * become columns of their own (TF§5.2). */
static lex_rc parse_args(parser *P, const char *p, const char **out, event *e, int capture_all) {
    lex *L = &P->L;
    rank_build *b = P->b;
    lex_rc rc;
    if (*p != '{') { /* args that is not an object: nothing HTA reads */
        return lex_skip_value(L, p, out);
    }
    p = lex_ws(p + 1);
    if (*p == '}') {
        *out = p + 1;
        return LEX_OK;
    }
    for (;;) {
        const char *k, *q, *kraw;
        size_t kn;
        int esc;
        char kb[LEX_KEYBUF];
        if ((rc = lex_key(L, p, &k, &kn, &esc, &p))) return rc;
        kraw = k;
        q = k + kn;
        int knul = lex_key_decode(&k, &kn, &esc, kb);
        int slot = esc || knul ? A_NONE : arg_lookup(k, kn);
        if (slot == A_STREAM) {
            if ((rc = value_int(P, p, &p, &e->stream))) return rc;
            e->have_stream = 1;
        } else if (slot == A_CORR) {
            if ((rc = value_int(P, p, &p, &e->corr))) return rc;
        } else if (slot == A_EXTID) {
            if ((rc = value_int(P, p, &p, &e->extid))) return rc;
        } else if (slot == A_NAME && e->ph == 'M' && *p == '"') {
            if ((rc = lex_string(L, p + 1, &q, &esc))) return rc;
            size_t n = (size_t)(q - p - 1);
            const char *s = p + 1;
            if (esc && (rc = scratch_str(P, p + 1, q, &s, &n))) return rc;
            uint32_t id = hta_symtab_intern(b->sym, s, n);
            if (id == UINT32_MAX) return LEX_NOMEM(L, p);
            e->meta_name = id;
            p = q + 1;
        } else if (slot >= 0 || capture_all) {
            int64_t ks;
            /* the known keys' local symbols are cached: each is interned once per file */
            if (slot >= 0 && b->known_local[slot] >= 0) {
                ks = b->known_local[slot];
            } else {
                size_t n = kn;
                const char *s = k;
                if (knul) return LEX_ERROR(L, kraw - 1, NUL_MSG);
                if (esc && (rc = scratch_str(P, k, q, &s, &n))) return rc;
                uint32_t id = hta_symtab_intern(b->sym, s, n);
                if (id == UINT32_MAX) return LEX_NOMEM(L, p);
                ks = id;
                if (slot >= 0) b->known_local[slot] = id;
            }
            if ((rc = value_store(P, p, &p, (uint32_t)ks))) return rc;
        } else {
            if ((rc = lex_skip_value(L, p, &p))) return rc;
        }
        p = lex_ws(p);
        if (*p == ',') {
            p = lex_ws(p + 1);
            continue;
        }
        if (*p == '}') {
            *out = p + 1;
            return LEX_OK;
        }
        return LEX_END_OR(L, p, "expected ',' or '}' in args");
    }
}

/* ---------- events ---------- */

static lex_rc ev_string(parser *P, const char *p, const char **s, const char **q, int *esc,
                        const char **out) {
    if (*p != '"') {
        if (*p == 'n') { /* null: as if absent */
            *s = NULL;
            return lex_skip_value(&P->L, p, out);
        }
        return LEX_END_OR(&P->L, p, "expected a string");
    }
    lex_rc rc = lex_string(&P->L, p + 1, q, esc);
    if (rc) return rc;
    *s = p + 1;
    *out = *q + 1;
    return LEX_OK;
}

#define TS_RANGE_MSG "ts out of range (hta holds |ts| < 2^62 ns, about 146 years)"
#define DUR_RANGE_MSG "dur out of range (hta holds |dur| < 2^62 ns, about 146 years)"
#define END_RANGE_MSG "ts + dur out of range (hta holds |ts + dur| < 2^62 ns, about 146 years)"

/* ts/dur: microseconds as decimal text -> exact ns, digit by digit, never through a double (a double has
 * quarter-microsecond steps at today's epoch times).  A fraction is remembered: it decides whether HTA
 * rounds the file (TF§6). */
static lex_rc ev_time(parser *P, const char *p, const char **out, int64_t *ns, int *have, int *frac,
                       const char *range_msg) {
    lex *L = &P->L;
    if (*p == 'n') {
        *have = 0;
        return lex_skip_value(L, p, out);
    }
    if (*p == '"') return LEX_ERROR(L, p, "timestamp is a string, expected a number");
    int fr;
    if (fast_decimal(L, p, 3, ns, &fr, out)) {
        *have = 1;
        if (frac && fr) *frac = 1;
        return LEX_OK;
    }
    lex_num n;
    lex_rc rc = lex_number(L, p, out, &n);
    if (rc) return rc;
    /* scale 3: the text is microseconds, the value ns (x 10^3), rounded half to even only past the ns.
     * Beyond the model's range (trace.h: HTA_TIME_MAX_NS) the value is refused, not clamped: every later
     * difference of two times is then exact in int64. */
    if (lex_num_scaled(&n, 3, ns) || *ns > HTA_TIME_MAX_NS || *ns < -HTA_TIME_MAX_NS)
        return LEX_ERROR(L, p, range_msg);
    *have = 1;
    if (frac && n.frac) *frac = 1;
    return LEX_OK;
}

/* pid/tid: number, or a string (numeric text becomes the number).  Other text (Kineto's "Spans", "Traces")
 * keeps its symbol and the id -1 (trace.h). */
static lex_rc ev_id(parser *P, const char *p, const char **out, int64_t *v, int64_t *sym, int *have) {
    lex *L = &P->L;
    lex_rc rc;
    *sym = -1;
    if (*p == '"') {
        const char *q;
        int esc;
        if ((rc = lex_string(L, p + 1, &q, &esc))) return rc;
        size_t n = (size_t)(q - p - 1);
        const char *s = p + 1;
        if (esc && (rc = scratch_str(P, p + 1, q, &s, &n))) return rc;
        char *end;
        char tmp[32];
        if (n > 0 && n < sizeof tmp) {
            /* strtoll needs a terminated string, and the buffer's string is not; the first-character test
             * keeps out what strtoll would also take (leading blanks, '+') */
            memcpy(tmp, s, n);
            tmp[n] = 0;
            long long x = strtoll(tmp, &end, 10);
            if (*end == 0 && (tmp[0] == '-' || (tmp[0] >= '0' && tmp[0] <= '9'))) {
                *v = x;
                *have = 1;
                *out = q + 1;
                return LEX_OK;
            }
        }
        uint32_t id = hta_symtab_intern(P->b->sym, s, n);
        if (id == UINT32_MAX) return LEX_NOMEM(L, p);
        *sym = id;
        *v = -1;
        *have = 1;
        *out = q + 1;
        return LEX_OK;
    }
    if (*p == 'n') {
        *have = 0;
        return lex_skip_value(L, p, out);
    }
    int fr;
    if (fast_decimal(L, p, 0, v, &fr, out)) {
        *have = 1;
        return LEX_OK;
    }
    lex_num n;
    if ((rc = lex_number(L, p, out, &n))) return rc;
    if (n.frac || lex_num_scaled(&n, 0, v)) return LEX_ERROR(L, p, "pid/tid is not an int64 integer");
    *have = 1;
    return LEX_OK;
}

/* TF§4.1: cat "Trace" (the "PyTorch Profiler" span) is dropped. */
static int cat_is_trace(const event *e) {
    return e->cat_q - e->cat_s == 5 && memcmp(e->cat_s, "Trace", 5) == 0;
}

/* The category of a complete event written without cat (hta_infer_category).  Out of line and cold: no
 * Kineto event comes here, and the event loop stays as small as it was. */
static __attribute__((noinline, cold)) lex_rc infer_cat(parser *P, const event *e, const char **cat) {
    const char *nm = e->name_s, *pid = NULL;
    size_t nn = e->have_name ? (size_t)(e->name_q - e->name_s) : 0, pn = 0;
    lex_rc rc;
    if (e->have_name && e->name_esc && (rc = scratch_str(P, e->name_s, e->name_q, &nm, &nn))) return rc;
    if (e->pid_sym >= 0) {
        pid = hta_sym(P->b->sym, (uint32_t)e->pid_sym);
        pn = hta_sym_len(P->b->sym, (uint32_t)e->pid_sym);
    }
    *cat = hta_infer_category(e->have_name ? nm : "", nn, pid, pn);
    return LEX_OK;
}

/* p at '{'.  Parses one event and records it. */
static lex_rc parse_event(parser *P, const char *p, const char **out) {
    lex *L = &P->L;
    rank_build *b = P->b;
    hta_rank *r = b->r;
    lex_rc rc;
    event e;
    memset(&e, 0, sizeof e);
    e.stream = e.corr = e.extid = -1;
    e.meta_name = -1;
    e.pid_sym = e.tid_sym = -1;
    e.args_mark = r->nargs;
    const char *ev_start = p;

    p = lex_ws(p + 1);
    if (*p != '}') {
        for (;;) {
            const char *k;
            size_t kn;
            int esc;
            char kb[LEX_KEYBUF];
            if (lex_key_short(p, &k, &kn, &p)) {
                esc = 0;
            } else {
                if ((rc = lex_key(L, p, &k, &kn, &esc, &p))) return rc;
                if (esc) lex_key_decode(&k, &kn, &esc, kb);
            }
            /* Keys by length, then by bytes: a handful of compares per key.  A key written twice counts
             * with its last value, as the rewriters read it (hta_raw_obj_get). */
            switch (kn) {
            case 2:
                if (k[0] == 'p' && k[1] == 'h') {
                    const char *s, *sq;
                    int es;
                    if ((rc = ev_string(P, p, &s, &sq, &es, &p))) return rc;
                    e.ph = s && sq > s ? *s : 0;
                    goto next;
                }
                if (k[0] == 't' && k[1] == 's') {
                    int have;
                    if ((rc = ev_time(P, p, &p, &e.ts, &have, &e.ts_frac, TS_RANGE_MSG))) return rc;
                    e.have_ts = have;
                    goto next;
                }
                if (k[0] == 'i' && k[1] == 'd') {
                    int have = 0;
                    int64_t sym;
                    if ((rc = ev_id(P, p, &p, &e.id, &sym, &have))) return rc;
                    e.have_id = have;
                    goto next;
                }
                /* only "bp": "e" matters (a flow that binds to its enclosing slice); the value is then
                 * skipped as any other */
                if (k[0] == 'b' && k[1] == 'p') {
                    e.bp_e = *p == '"' && p[1] == 'e';
                    break;
                }
                break;
            case 3:
                if (!memcmp(k, "cat", 3)) {
                    if ((rc = ev_string(P, p, &e.cat_s, &e.cat_q, &e.cat_esc, &p))) return rc;
                    e.have_cat = e.cat_s != NULL;
                    e.cat_key = 1;
                    goto next;
                }
                if (!memcmp(k, "dur", 3)) {
                    if ((rc = ev_time(P, p, &p, &e.dur, &e.have_dur, &e.dur_frac, DUR_RANGE_MSG))) return rc;
                    goto next;
                }
                if (!memcmp(k, "pid", 3)) {
                    if ((rc = ev_id(P, p, &p, &e.pid, &e.pid_sym, &e.have_pid))) return rc;
                    goto next;
                }
                if (!memcmp(k, "tid", 3)) {
                    if ((rc = ev_id(P, p, &p, &e.tid, &e.tid_sym, &e.have_tid))) return rc;
                    goto next;
                }
                break;
            case 4:
                if (!memcmp(k, "name", 4)) {
                    if ((rc = ev_string(P, p, &e.name_s, &e.name_q, &e.name_esc, &p))) return rc;
                    e.have_name = e.name_s != NULL;
                    goto next;
                }
                if (!memcmp(k, "args", 4)) {
                    /* A second args replaces the first: what the first one set is forgotten. */
                    if (e.args_done || e.args_p) {
                        r->nargs = e.args_mark;
                        e.stream = e.corr = e.extid = -1;
                        e.have_stream = 0;
                        e.meta_name = -1;
                        e.args_done = 0;
                        e.args_p = NULL;
                    }
                    /* Kineto writes ph and cat before args, so whether the args matter is known here and
                     * they are parsed in place, in one pass.  Otherwise the args are skipped and parsed at
                     * the end of the event, once it is known to be kept. */
                    if (e.ph && (e.have_cat || e.ph == 'M')) {
                        int all = 0;
                        if (e.have_cat && b->profiler_range_cat >= 0) {
                            size_t cn = (size_t)(e.cat_q - e.cat_s);
                            all = cn == 19 && !memcmp(e.cat_s, "cuda_profiler_range", 19);
                        } else if (e.have_cat) {
                            size_t cn = (size_t)(e.cat_q - e.cat_s);
                            all = cn == 19 && !memcmp(e.cat_s, "cuda_profiler_range", 19);
                        }
                        if ((rc = parse_args(P, p, &p, &e, all))) return rc;
                        e.args_done = 1;
                    } else {
                        e.args_p = p;
                        if ((rc = lex_skip_value(L, p, &p))) return rc;
                    }
                    goto next;
                }
                break;
            default:
                break;
            }
            /* a key the model does not keep: its value is still checked, so a broken file fails here and
             * not in a later rewrite */
            if ((rc = lex_skip_value(L, p, &p))) return rc;
        next:
            p = lex_ws(p);
            if (*p == ',') {
                p = lex_ws(p + 1);
                continue;
            }
            if (*p == '}') break;
            return LEX_END_OR(L, p, "expected ',' or '}' in event");
        }
    }
    *out = p + 1;
    /* both in range (ev_time), so the sum cannot overflow; the end is a time too */
    if (e.have_ts) {
        int64_t end = e.ts + (e.have_dur ? e.dur : 0);
        if (end > HTA_TIME_MAX_NS || end < -HTA_TIME_MAX_NS) return LEX_ERROR(L, ev_start, END_RANGE_MSG);
        int64_t lo = end < e.ts ? end : e.ts, hi = end < e.ts ? e.ts : end;
        if (lo < r->t_min) r->t_min = lo;
        if (hi > r->t_max) r->t_max = hi;
    }

    uint32_t index = (uint32_t)r->n_events;
    /* HTA's rule (TF§4.1): an event is a row iff it has dur and cat and cat is not "Trace". index counts
     * every event, kept or not: HTA's index (TF§4.2). */
    int keep = e.have_dur && e.have_cat && !cat_is_trace(&e);
    /* A complete event written with no "cat" key at all (torch's legacy Chrome export writes none) gets the
     * category its name implies (hta_infer_category, docs/loading.md), where HTA would drop it: such a
     * file would otherwise load with no rows.  An explicit "cat": null stays HTA's "no category". */
    const char *icat = NULL;
    if (!keep && e.have_dur && !e.cat_key && e.ph == 'X') {
        if ((rc = infer_cat(P, &e, &icat))) return rc;
        keep = 1;
    }
    if (!e.args_done && e.args_p && (keep || e.ph == 'M')) {
        int all = e.have_cat && e.cat_q - e.cat_s == 19 && !memcmp(e.cat_s, "cuda_profiler_range", 19);
        const char *dummy;
        if ((rc = parse_args(P, e.args_p, &dummy, &e, all))) return rc;
    }
    if (!keep) r->nargs = e.args_mark; /* drop args collected for a dropped event */

    if (!e.have_ts) P->b->r->ts_fractional = 1; /* HTA rounds when any event lacks ts */
    if (e.ts_frac) r->ts_fractional = 1;
    /* what decides the dtypes of HTA's table (TF§4.2, §11): every event's dur an integer, text pids */
    if (!e.have_dur || e.dur_frac) r->dur_not_int = 1;
    if (e.pid_sym >= 0) r->pid_text = 1;
    if (e.tid_sym >= 0) r->tid_text = 1;

    if (keep) {
        /* A row without a start has no place on any timeline (HTA's table would hold NaN there).  The file
         * is refused with the event's offset. */
        if (!e.have_ts) return LEX_ERROR(L, ev_start, "event has dur and cat but no ts");
        /* every sum of the rows' durations an analysis makes must fit int64: their total is bounded
         * (trace.h); each |dur| < 2^62, so the running sum cannot wrap before the test */
        P->dur_sum += e.dur < 0 ? (uint64_t)0 - (uint64_t)e.dur : (uint64_t)e.dur;
        if (P->dur_sum > (uint64_t)HTA_TIME_MAX_NS)
            return LEX_ERROR(L, ev_start, "the durations of the rows add up to 2^62 ns or more (about 146 years)");
        size_t row;
        hta_status bs;
        if ((bs = rank_build_row(b, &row))) return LEX_BUILD(L, ev_start, bs, "");
        size_t n;
        const char *s = e.cat_s;
        n = (size_t)(e.cat_q - e.cat_s);
        if (icat) s = icat, n = strlen(icat);
        else if (e.cat_esc && (rc = scratch_str(P, e.cat_s, e.cat_q, &s, &n))) return rc;
        if ((bs = rank_build_cat(b, s, n, &r->cat[row]))) return LEX_BUILD(L, ev_start, bs, "too many categories");
        if (e.have_name) {
            s = e.name_s;
            n = (size_t)(e.name_q - e.name_s);
            if (e.name_esc && (rc = scratch_str(P, e.name_s, e.name_q, &s, &n))) return rc;
        } else {
            s = "";
            n = 0;
        }
        uint32_t nm = hta_symtab_intern(b->sym, s, n);
        if (nm == UINT32_MAX) return LEX_NOMEM(L, ev_start);
        r->name[row] = nm;
        r->ts[row] = e.ts;
        r->dur[row] = e.dur;
        r->correlation[row] = e.corr;
        r->external_id[row] = e.extid;
        r->index[row] = index;
        r->args_off[row] = (uint32_t)e.args_mark;
        if ((bs = rank_build_stream(b, e.have_stream ? e.stream : -1, &r->stream[row])))
            return LEX_BUILD(L, ev_start, bs, "too many streams");
        if ((bs = rank_build_thread(b, e.have_pid ? e.pid : -1, e.have_tid ? e.tid : -1, e.pid_sym,
                                    e.tid_sym, &r->thread[row])))
            return LEX_BUILD(L, ev_start, bs, "too many threads");
        if (r->nargs > UINT32_MAX) return LEX_ERROR(L, ev_start, "too many args");
    } else if ((e.ph == 's' || e.ph == 'f' || e.ph == 't') && e.have_id) {
        /* Flows are kept apart with their ids (HTA drops them, Q2), so the links they carry are not lost;
         * hta info counts them. */
        hta_flow *f = rank_build_flow(b);
        if (!f) return LEX_NOMEM(L, ev_start);
        uint32_t th;
        hta_status bs = rank_build_thread(b, e.have_pid ? e.pid : -1, e.have_tid ? e.tid : -1, e.pid_sym, e.tid_sym, &th);
        if (bs) return LEX_BUILD(L, ev_start, bs, "too many threads");
        uint32_t cs = P->flow_nocat;
        if (e.have_cat) {
            size_t n = (size_t)(e.cat_q - e.cat_s);
            const char *s = e.cat_s;
            if (e.cat_esc && (rc = scratch_str(P, e.cat_s, e.cat_q, &s, &n))) return rc;
            cs = hta_symtab_intern(b->sym, s, n);
            if (cs == UINT32_MAX) return LEX_NOMEM(L, ev_start);
        }
        *f = (hta_flow){e.id, index, th, cs, e.ph, (char)e.bp_e};
    } else if (e.ph == 'M' && e.meta_name >= 0 && e.have_name) {
        /* thread_name / process_name metadata: the names of the threads and processes (hta_thread) */
        size_t n = (size_t)(e.name_q - e.name_s);
        int is_thread = n == 11 && !memcmp(e.name_s, "thread_name", 11);
        int is_proc = n == 12 && !memcmp(e.name_s, "process_name", 12);
        if ((is_thread || is_proc) &&
            rank_build_name(b, e.have_pid ? e.pid : -1, e.have_tid ? e.tid : -1, is_thread,
                            (uint32_t)e.meta_name))
            return LEX_NOMEM(L, ev_start);
    }
    r->n_events++;
    /* the index column is uint32 */
    if (r->n_events > UINT32_MAX) return LEX_ERROR(L, ev_start, "more than 2^32 events in one file");
    return LEX_OK;
}

/* ---------- top level ---------- */

/* A top-level key other than traceEvents: kept verbatim as metadata (TF§3).  The rank comes from the
 * parsed distributedInfo, minified or not, where HTA matches a text regex (Q3).  In a raw scan it goes to
 * the caller, with the key as written (kraw); the model keeps it decoded (k). */
static lex_rc top_value(parser *P, const char *kraw, size_t krn, const char *k, size_t kn, const char *p,
                        const char **out) {
    lex *L = &P->L;
    const char *q;
    lex_rc rc = lex_skip_value(L, p, &q);
    if (rc) return rc;
    if (P->raw) {
        if (P->raw->meta && P->raw->meta(P->raw->ctx, kraw, krn, p, (size_t)(q - p)))
            return LEX_FAIL(L, p, HTA_ESTOPPED, "stopped by caller");
        *out = q;
        return LEX_OK;
    }
    if (rank_build_meta(P->b, k, kn, p, (size_t)(q - p))) return LEX_NOMEM(L, p);
    hta_rank *r = P->b->r;
    if (KEY_IS(k, kn, "distributedInfo") && *p == '{') {
        /* rank 1.5 is no rank 1: a value that is no integer is refused with its offset */
        const char *at;
        int64_t v;
        int st = json_int_member(L, p, "rank", &v, &at);
        if (st == -2) return LEX_ERROR(L, at, "distributedInfo.rank is not an integer");
        /* a rank that no rank can be (-1, 2^31, 99999999999) is refused, not read as "no rank" */
        if (!st && (v < 0 || v > INT32_MAX)) return LEX_ERROR(L, at, "distributedInfo.rank is not in 0..2147483647");
        P->b->dist_rank = st ? -1 : v;
        st = json_int_member(L, p, "world_size", &v, &at);
        if (st == -2) return LEX_ERROR(L, at, "distributedInfo.world_size is not an integer");
        r->world_size = st ? -1 : v;
    } else if (KEY_IS(k, kn, "baseTimeNanoseconds") && (*p == '-' || is_digit(*p))) {
        /* an exact integer within the model's times (trace.h), else refused: never clamped */
        lex_num n;
        int64_t v;
        if ((rc = lex_number(L, p, &q, &n))) return rc;
        if (lex_num_int(&n, &v) || v > HTA_TIME_MAX_NS || v < -HTA_TIME_MAX_NS)
            return LEX_ERROR(L, p, "baseTimeNanoseconds is no integer in range "
                                   "(hta holds |t| < 2^62 ns)");
        r->base_time_ns = v;
    } else if (KEY_IS(k, kn, "htaMerge") && *p == '{') {
        /* a merged trace: load.c gives it back as its ranks (merged.c) */
        if (merged_read(L, p, &P->b->merge)) return LEX_NOMEM(L, p);
    }
    if (KEY_IS(k, kn, "distributedInfo")) P->b->top_keys |= TOP_DIST;
    else if (KEY_IS(k, kn, "baseTimeNanoseconds")) P->b->top_keys |= TOP_BASE;
    else if (KEY_IS(k, kn, "htaMerge")) P->b->top_keys |= TOP_MERGE;
    *out = q;
    return LEX_OK;
}

/* Parses one unit at P->buf + *pos. *pos moves only past a complete unit, so on LEX_MORE the unit starts
 * again from *pos after the refill: the invariant is that the buffer from *pos on holds whole units and at
 * most one partial one. */
static lex_rc step(parser *P, size_t *pos) {
    lex *L = &P->L;
    const char *p = lex_ws(P->buf + *pos);
    lex_rc rc;
    switch (P->state) {
    case ST_OPEN:
        /* Chrome's two JSON forms (Trace Event Format): the object {"traceEvents": [...], ...} that Kineto
         * writes, and the bare array of events [...] (torch's legacy export_chrome_trace), which has no
         * metadata; its events are read exactly as traceEvents' */
        if (*p == '[') {
            P->array_form = 1;
            P->seen_events = 1;
            P->state = ST_EVENTS;
            P->first = 1;
            p++;
            break;
        }
        if (*p != '{')
            return LEX_END_OR(L, p, p >= L->end && P->eof ? "empty file" : "trace must be a JSON object or array");
        P->state = ST_KEY;
        P->first = 1;
        p++;
        break;
    case ST_KEY: {
        if (!P->first) {
            if (*p == '}') {
                P->state = ST_END;
                p++;
                break;
            }
            if (*p != ',') return LEX_END_OR(L, p, "expected ',' or '}' after a top-level value");
            p = lex_ws(p + 1);
        } else if (*p == '}') {
            P->state = ST_END;
            p++;
            break;
        }
        const char *k, *kraw;
        size_t kn, krn;
        int esc;
        char kb[LEX_KEYBUF];
        if ((rc = lex_key(L, p, &k, &kn, &esc, &p))) return rc;
        kraw = k;
        krn = kn;
        if (lex_key_decode(&k, &kn, &esc, kb)) return LEX_ERROR(L, kraw - 1, NUL_MSG);
        /* a key too long to decode here (lex_key_decode) is no key of ours, but the model keeps it
         * decoded */
        if (esc && !P->raw && (rc = scratch_str(P, kraw, kraw + krn, &k, &kn))) return rc;
        /* Keys may come before or after traceEvents; HTA keeps metadata from both sides (TF§3), and so does
         * the model.  first: no comma before the first member or element. */
        if (KEY_IS(k, kn, "traceEvents")) {
            if (P->seen_events) return LEX_ERROR(L, kraw, "duplicate traceEvents");
            if (*p != '[') return LEX_END_OR(L, p, "traceEvents is not an array");
            P->seen_events = 1;
            P->state = ST_EVENTS;
            P->first = 1;
            p++;
        } else {
            if ((rc = top_value(P, kraw, krn, k, kn, p, &p))) return rc;
            P->first = 0;
        }
        break;
    }
    case ST_EVENTS:
        if (*p == ']') {
            P->state = P->array_form ? ST_END : ST_KEY;
            P->first = 0;
            p++;
            break;
        }
        if (!P->first) {
            if (*p != ',') return LEX_END_OR(L, p, "expected ',' or ']' in traceEvents");
            p = lex_ws(p + 1);
        }
        if (P->nstops && *p == '{') {
            /* a split load: the later chunks' starts this parse has gone past were no event's start (a
             * guess inside a string, say); reaching one as an event's '{' proves it right (split.c) */
            uint64_t at = P->base + (uint64_t)(p - P->buf);
            while (P->stop_i < P->nstops && P->stops[P->stop_i] < at) P->stop_i++;
            if (P->stop_i < P->nstops && P->stops[P->stop_i] == at) return LEX_STOP;
        }
        if (*p != '{') {
            if (p >= L->end) return LEX_MORE;
            /* an array whose first element is no object is other JSON (a list of numbers, say), not a
             * trace: the status by which a folder skips such a file, as one without traceEvents */
            if (P->array_form && P->first)
                return LEX_FAIL(L, p, HTA_ENOTTRACE, "a JSON array whose elements are not objects is not a trace");
            return LEX_ERROR(L, p, "traceEvents element is not an object");
        }
        /* A raw scan hands each event's text to the caller and builds nothing: the writers of derived
         * traces copy events this way. */
        if (P->raw) {
            const char *q;
            if ((rc = lex_skip_value(L, p, &q))) return rc;
            if (P->raw->event && P->raw->event(P->raw->ctx, P->raw_index, p, (size_t)(q - p)))
                return LEX_FAIL(L, p, HTA_ESTOPPED, "stopped by caller");
            P->raw_index++;
            p = q;
        } else {
            /* an event cut by the end of the buffer is parsed again after the refill (or dropped at a
             * truncated end): the args it had stored so far go */
            size_t nargs = P->b->r->nargs;
            if ((rc = parse_event(P, p, &p))) {
                if (rc == LEX_MORE) P->b->r->nargs = nargs;
                return rc;
            }
        }
        P->first = 0;
        break;
    case ST_END:
        if (p < L->end) return LEX_ERROR(L, p, "trailing characters after the trace");
        /* The object is closed; reading on to the end of the file tells trailing bytes from a clean end. */
        return LEX_MORE;
    }
    *pos = (size_t)(p - P->buf);
    return LEX_OK;
}

/* Moves the unfinished unit to the front and reads more.  A unit that already starts at the front of a
 * full buffer does not fit: the buffer doubles (mremap, no copy) instead. */
static hta_status refill(parser *P, size_t keep_from, hta_progress_fn progress, void *pctx) {
    size_t keep = P->len - keep_from;
    if (keep_from == 0 && P->len == P->cap) {
        if (P->cap >= MAX_UNIT)
            return hta_fail(P->err, HTA_EFORMAT, "%s: byte %llu: a single event or value exceeds 1 GiB",
                            P->path, (unsigned long long)P->base);
        size_t nc = P->cap * 2;
        char *nb = hta_big_realloc(P->buf, nc + HTA_LEX_PAD);
        if (!nb) return hta_fail(P->err, HTA_ENOMEM, "%s: out of memory", P->path);
        P->buf = nb;
        P->cap = nc;
    } else {
        memmove(P->buf, P->buf + keep_from, keep);
        P->base += keep_from;
        P->len = keep;
    }
    size_t got = 0;
    hta_status st = hta_input_read(P->in, P->buf + P->len, P->cap - P->len, &got, P->err);
    if (st) return st;
    if (got == 0) P->eof = 1;
    P->len += got;
    /* the NUL sentinel and zeroed padding after the data: the lexer's vector loads stay in bounds and
     * every scan stops at the end (json_lex.h) */
    memset(P->buf + P->len, 0, HTA_LEX_PAD);
    P->L.end = P->buf + P->len;
    lex_scan_reset(&P->L);
    /* progress counts bytes read from disk against the file size, the only total known before the end (a
     * gzip file's JSON size is not) */
    if (progress) progress(pctx, hta_input_bytes_in(P->in), hta_input_file_size(P->in));
    return HTA_OK;
}

/* Chrome's importer accepts an array-form trace whose final ']' is missing, after dropping a trailing
 * comma (catapult's TraceEventImporter: "some tracing implementations cannot guarantee that a ']' gets
 * written"), as a tracer killed mid-run leaves it.  The same here, at the end of the bytes: after the last
 * complete event only white space, or one ',' and white space, may follow.  A cut inside an event stays
 * an error (truncated JSON). */
static int unclosed_array_end(const parser *P, size_t pos) {
    if (!P->array_form || P->state != ST_EVENTS) return 0;
    const char *p = lex_ws(P->buf + pos);
    if (!P->first && *p == ',') p = lex_ws(p + 1);
    return p == P->L.end;
}

/* The parse loop: step() until the bytes run out (LEX_MORE), then refill and resume at the unfinished
 * unit; the only place a lexer failure becomes an hta_error (perr). */
static hta_status run(parser *P, const char *path, hta_progress_fn progress, void *pctx, hta_error *err) {
    P->path = path;
    P->err = err;
    P->state = ST_OPEN;
    hta_status st = hta_input_open(path, &P->in, err);
    if (st) return st;
    if (P->start) {
        /* a later chunk of a split load: its first byte is an event's '{' inside traceEvents */
        if ((st = hta_input_seek(P->in, P->start, err))) {
            hta_input_close(P->in);
            P->in = NULL;
            return st;
        }
        P->base = P->start;
        P->state = ST_EVENTS;
        P->first = 1;
        P->seen_events = 1;
    }
    P->cap = BLOCK;
    P->buf = hta_big_realloc(NULL, P->cap + HTA_LEX_PAD);
    if (!P->buf) {
        hta_input_close(P->in);
        return hta_fail(err, HTA_ENOMEM, "%s: out of memory", path);
    }
    memset(P->buf, 0, HTA_LEX_PAD);
    P->L.end = P->buf;
    size_t pos = 0;
    for (;;) {
        P->L.err = NULL;
        lex_rc rc = step(P, &pos);
        if (rc == LEX_OK) continue;
        if (rc == LEX_STOP) {
            P->landed = 1;
            break;
        }
        if (rc == LEX_ERR) {
            /* a callback that stopped the scan because it failed has said why in err */
            if (P->L.code == HTA_ESTOPPED && err && err->code != HTA_OK) st = err->code;
            else st = perr(P, &P->L);
            break;
        }
        /* LEX_MORE */
        if (P->eof) {
            uint64_t gz_cut = hta_input_cut_at(P->in);
            if ((P->state == ST_END && !gz_cut) || unclosed_array_end(P, pos)) {
                st = HTA_OK;
            } else if (!P->raw && (P->state == ST_EVENTS || P->seen_events) && P->b->r->n_events) {
                /* Cut short after the events began (a crashed job's trace): the complete events are the
                 * trace, up to pos, where the unfinished one starts; the loader warns (load.c).  A
                 * rewrite (raw scan) copies files whole and refuses it below, and so is a file cut before
                 * its first event is complete (nothing in it says it is a trace). */
                P->b->cut = gz_cut ? 2 : 1;
                P->b->cut_json = P->base + pos;
                P->b->cut_file = gz_cut ? gz_cut : P->base + P->len;
                st = HTA_OK;
            } else if (P->len == 0 && !gz_cut) {
                st = hta_fail(err, HTA_EFORMAT, "%s: empty file", path);
            } else if (gz_cut) {
                st = hta_fail(err, HTA_EFORMAT, "%s: byte %llu: truncated gzip data (JSON byte %llu)", path,
                              (unsigned long long)gz_cut, (unsigned long long)(P->base + P->len));
            } else {
                st = hta_fail(err, HTA_EFORMAT, "%s: byte %llu: unexpected end of file (truncated JSON)",
                              path, (unsigned long long)(P->base + P->len));
            }
            break;
        }
        if ((st = refill(P, pos, progress, pctx))) break;
        pos = 0;
    }
    /* A JSON object without traceEvents is valid JSON but no trace: its own status, so that a folder's
     * loader can skip such files (load.c). */
    if (st == HTA_OK && !P->seen_events)
        st = hta_fail(err, HTA_ENOTTRACE, "%s: no \"traceEvents\" array", path);
    return st;
}

static void done(parser *P) {
    hta_input_close(P->in);
    hta_big_free(P->buf);
    free(P->scratch);
}

hta_status hta_parse_file(const char *path, rank_build *b, hta_progress_fn progress, void *pctx,
                          hta_error *err) {
    parse_chunk c = {0};
    return hta_parse_chunk(path, b, &c, progress, pctx, err);
}

hta_status hta_parse_chunk(const char *path, rank_build *b, parse_chunk *c, hta_progress_fn progress,
                           void *pctx, hta_error *err) {
    parser P;
    memset(&P, 0, sizeof P);
    P.b = b;
    P.start = c->start;
    P.array_form = c->start ? c->array_form : 0;
    P.stops = c->stops;
    P.nstops = c->nstops;
    P.flow_nocat = c->start ? UINT32_MAX : 0;
    b->r->t_min = INT64_MAX;
    b->r->t_max = INT64_MIN;
    hta_status st = run(&P, path, progress, pctx, err);
    if (P.in) {
        b->r->bytes_in = hta_input_bytes_in(P.in);
        b->r->bytes_json = P.base + P.len;
    }
    c->landed = P.landed ? P.stop_i : P.nstops;
    c->dur_sum = P.dur_sum;
    done(&P);
    return st;
}

/* The same reader for the writers of derived traces: every event's text handed out, nothing built, so a
 * rewrite need not hold the model in memory. */
hta_status hta_raw_scan(const char *path, const hta_raw_callbacks *cb, hta_error *err) {
    parser P;
    memset(&P, 0, sizeof P);
    P.raw = cb;
    if (err) err->code = HTA_OK; /* a callback's own failure shows here (see run) */
    hta_status st = run(&P, path, NULL, NULL, err);
    done(&P);
    return st;
}
