/* htad's two front ends read byte by byte (hta/capture.h, "front ends"): a request is judged from its
 * first bytes, not after it has all arrived, so that a peer without the token, a length over the
 * limit or a method other than GET is refused at once and never holds a connection while it sends
 * slowly.  Pure functions over the bytes received so far, resumable (a slow sender costs each byte
 * once), fuzzed by tests/fuzz/fuzz_front.c. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "hta/capture.h"

int hta_token_eq(const char *given, size_t n, const char *token) {
    /* constant time in the token's length: the token is not guessed byte by byte from timing */
    size_t b = strlen(token);
    unsigned char d = (unsigned char)(n != b);
    for (size_t k = 0; k < b; k++) d |= (unsigned char)(token[k] ^ (k < n ? given[k] : 0));
    return b > 0 && d == 0;
}

int hta_token_ok(const char *token) {
    size_t n = strlen(token);
    if (n < 16 || n > HTA_TOKEN_MAX) return 0;
    for (const char *c = token; *c; c++)
        if (*c <= 0x20 || *c >= 0x7f || *c == '"' || *c == '\\') return 0;
    return 1;
}

/* The token member at the start of a body b (have bytes of n): {"token":"TOKEN", JSON whitespace
 * allowed around the punctuation.  1: there and right; 0: more bytes needed; -1: missing or wrong. */
static int token_first(const char *b, size_t have, size_t n, const char *token) {
    static const char *const parts[] = {"{", "\"token\"", ":", "\""};
    size_t i = 0;
    for (int k = 0; k < 4; k++) {
        while (i < have && i < 64 && strchr(" \t\r\n", b[i])) i++;
        if (i >= 64) return -1;
        size_t pl = strlen(parts[k]), m = have - i < pl ? have - i : pl;
        if (memcmp(b + i, parts[k], m)) return -1;
        if (m < pl) return have == n ? -1 : 0;
        i += pl;
    }
    const char *q = memchr(b + i, '"', have - i);
    if (!q) return have - i > HTA_TOKEN_MAX || have == n ? -1 : 0;
    /* compared once whole, in constant time: how far a wrong token matched is never told */
    return hta_token_eq(b + i, (size_t)(q - b - i), token) ? 1 : -1;
}

int hta_rpc_head(const unsigned char *buf, size_t len, size_t max, const char *token, size_t *total, int *authed,
                 char *why, size_t cap) {
    if (len < 4) return 0;
    int32_t n;
    memcpy(&n, buf, 4);
    if (n < 0 || (size_t)n > max) {
        snprintf(why, cap, "message of %d bytes: the limit is %zu", (int)n, max);
        return -1;
    }
    *total = 4 + (size_t)n;
    if (token) {
        /* a peer that needs the token sends it first: {"token":"TOKEN",... as hta capture writes it */
        size_t have = len - 4 < (size_t)n ? len - 4 : (size_t)n;
        int t = token_first((const char *)buf + 4, have, (size_t)n, token);
        if (t < 0) {
            snprintf(why, cap, "a request from another host needs the daemon's token, as its first member: "
                               "{\"token\":\"...\",...}");
            return -1;
        }
        if (t == 0) return 0;
        *authed = 1;
    }
    return len >= *total ? 1 : 0;
}

/* the end of the line starting at p (its '\n'), or NULL */
static const char *line_end(const char *p, const char *end) { return memchr(p, '\n', (size_t)(end - p)); }

/* A head line may hold no control character but the tab (RFC 9112 §5: NUL, a bare CR or another
 * control in a field is invalid): a NUL would end the line for every C string function after this
 * one, so that what was judged and what is later read could differ. */
static int line_clean(const char *p, size_t ll) {
    for (size_t k = 0; k < ll; k++) {
        unsigned char c = (unsigned char)p[k];
        if ((c < 0x20 && c != '\t') || c == 0x7f) return 0;
    }
    return 1;
}

int hta_http_head(hta_http_in *h, const char *buf, size_t len, const char *token, int *status, char *why,
                  size_t cap) {
    const char *end = buf + len;
    for (;;) {
        const char *p = buf + h->pos, *nl = line_end(p, end);
        if (!nl) break;
        size_t ll = (size_t)(nl - p);
        if (ll && p[ll - 1] == '\r') ll--;
        h->pos = (size_t)(nl + 1 - buf);
        /* a folded line (obs-fold: it starts with white space) is refused too, as RFC 9112 §5.2 allows:
         * it would join a field that was already judged */
        if (!line_clean(p, ll) || (h->first && ll && (p[0] == ' ' || p[0] == '\t'))) {
            *status = 400;
            snprintf(why, cap, "bad request: a control character or a folded line in the head");
            return -1;
        }
        if (!h->first) {
            h->first = 1;
            /* the first line says everything but the token: judged before the headers arrive */
            if (ll < 4 || memcmp(p, "GET ", 4)) {
                *status = 405;
                snprintf(why, cap, "only GET");
                return -1;
            }
            if (!(ll >= 13 && (!memcmp(p + 4, "/metrics ", 9) || !memcmp(p + 4, "/metrics?", 9)))) {
                *status = 404;
                snprintf(why, cap, "only /metrics");
                return -1;
            }
            continue;
        }
        if (ll == 0) { /* the blank line: the head is complete */
            if (token && !h->authed) {
                *status = 401;
                snprintf(why, cap, "token required");
                return -1;
            }
            *status = 200;
            return 1;
        }
        static const char auth[] = "authorization:";
        if (token && ll > sizeof auth - 1 && !strncasecmp(p, auth, sizeof auth - 1)) {
            const char *v = p + sizeof auth - 1, *ve = p + ll;
            while (v < ve && (*v == ' ' || *v == '\t')) v++;
            int ok = ve - v > 7 && !strncasecmp(v, "Bearer ", 7);
            if (ok) {
                v += 7;
                while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t')) ve--;
                ok = hta_token_eq(v, (size_t)(ve - v), token);
            }
            if (!ok) { /* a wrong token is refused as soon as its line is complete */
                *status = 401;
                snprintf(why, cap, "token required");
                return -1;
            }
            h->authed = 1;
        }
    }
    if (len - h->pos > HTA_HTTP_MAX_HEAD || len > HTA_HTTP_MAX_HEAD) {
        *status = 431;
        snprintf(why, cap, "too large");
        return -1;
    }
    return 0;
}

size_t hta_escape_text(const char *s, size_t n, char *out, size_t cap) {
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    if (!cap) return 0;
    for (size_t k = 0; k < n && s[k]; k++) {
        unsigned char c = (unsigned char)s[k];
        /* C0 controls, DEL and the C1 controls as UTF-8 (U+0080..U+009F: 0xC2 0x80..0x9F) */
        int c1 = c == 0xc2 && k + 1 < n && (unsigned char)s[k + 1] >= 0x80 && (unsigned char)s[k + 1] <= 0x9f;
        if (c < 0x20 || c == 0x7f || c1) {
            unsigned v = c1 ? (unsigned char)s[++k] : c;
            if (o + 4 >= cap) break;
            out[o++] = '\\', out[o++] = 'x', out[o++] = hex[v >> 4], out[o++] = hex[v & 15];
        } else if (c == '\\') {
            if (o + 2 >= cap) break;
            out[o++] = '\\', out[o++] = '\\';
        } else {
            if (o + 1 >= cap) break;
            out[o++] = (char)c;
        }
    }
    out[o] = 0;
    return o;
}
