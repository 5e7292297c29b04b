/* How the report writes figures and names into its findings and its page: a name cut to a finding's
 * length, a piece appended only when it fits whole, a duration as a person reads it, a list of ranks.
 * A leaf that every file of the report may call. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/internal.h"

const char *rp_name(const char *s, char *buf) {
    size_t l = strlen(s);
    if (l <= RP_NAME_MAX) return s;
    /* the end names the kernel's variant (tile sizes, architecture) as often as the start names it */
    size_t tl = 16, hl = RP_NAME_MAX - 3 - tl, t = l - tl;
    while (hl > 0 && ((unsigned char)s[hl] & 0xC0) == 0x80) hl--; /* whole UTF-8 characters */
    while (s[t] && ((unsigned char)s[t] & 0xC0) == 0x80) t++;
    snprintf(buf, RP_NAME_MAX + 1, "%.*s...%s", (int)hl, s, s + t);
    return buf;
}

int rp_append(char *out, size_t cap, size_t *len, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out + *len, cap - *len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= cap - *len) {
        out[*len] = 0; /* drop the piece that did not fit whole */
        return 0;
    }
    *len += (size_t)n;
    return 1;
}

const char *rp_dur(int64_t ns, char *buf, size_t cap) {
    double a = fabs((double)ns);
    if (a < 10e6) snprintf(buf, cap, "%.0f us", (double)ns / 1e3);
    else if (a < 1e9) snprintf(buf, cap, "%.1f ms", (double)ns / 1e6);
    else snprintf(buf, cap, "%.2f s", (double)ns / 1e9);
    return buf;
}

char *rp_rank_list(const rp_rank *pr, size_t n, const unsigned char *on) {
    size_t cap = 16 * n + 8, len = 0;
    char *s = malloc(cap);
    if (!s) return NULL;
    s[0] = 0;
    for (size_t k = 0; k < n;) {
        if (!on[k]) {
            k++;
            continue;
        }
        size_t j = k;
        /* a run of consecutive rank numbers is written a-b */
        while (j + 1 < n && on[j + 1] && pr[j + 1].rank == pr[j].rank + 1) j++;
        len += (size_t)snprintf(s + len, cap - len, "%s%d", len ? "," : "", pr[k].rank);
        if (j > k) len += (size_t)snprintf(s + len, cap - len, "%s%d", j == k + 1 ? "," : "-", pr[j].rank);
        k = j + 1;
    }
    return s;
}
