/* Growable lists of formatted strings: the notes that results, merge plans and
 * critical-path graphs carry for the caller to show (hta/util.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hta/util.h"

int hta_strlist_vadd(char ***list, size_t *n, const char *fmt, va_list ap) {
    va_list ap2;
    va_copy(ap2, ap);
    int len = vsnprintf(NULL, 0, fmt, ap2); /* notes are short, but never cut one */
    va_end(ap2);
    if (len < 0) return -1;
    char *s = malloc((size_t)len + 1);
    if (!s) return -1;
    vsnprintf(s, (size_t)len + 1, fmt, ap);
    char **q = realloc(*list, (*n + 1) * sizeof *q);
    if (!q) {
        free(s);
        return -1;
    }
    *list = q;
    q[(*n)++] = s;
    return 0;
}

int hta_strlist_add(char ***list, size_t *n, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int rc = hta_strlist_vadd(list, n, fmt, ap);
    va_end(ap);
    return rc;
}
