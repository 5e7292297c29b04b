/* The option text of the Python C API: "key=value" lines, read once per call into pairs, with typed
 * getters that name the key and the text when a value is malformed. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pyapi/internal.h"

hta_status py_opts_parse(const char *text, py_opts *o, hta_error *err) {
    memset(o, 0, sizeof *o);
    if (!text || !*text) return HTA_OK;
    if (!(o->buf = strdup(text))) return hta_oom(err);
    size_t cap = 1;
    for (const char *p = text; *p; p++) cap += *p == '\n';
    o->key = calloc(cap, sizeof *o->key);
    o->val = calloc(cap, sizeof *o->val);
    if (!o->key || !o->val) {
        py_opts_free(o);
        return hta_oom(err);
    }
    char *save = NULL;
    for (char *line = strtok_r(o->buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *eq = strchr(line, '=');
        if (!eq) {
            hta_status st = hta_fail(err, HTA_EINVAL, "option '%s': expected key=value", line);
            py_opts_free(o);
            return st;
        }
        *eq = 0;
        o->key[o->n] = line;
        o->val[o->n++] = eq + 1;
    }
    return HTA_OK;
}

void py_opts_free(py_opts *o) {
    free(o->buf);
    free(o->key);
    free(o->val);
    memset(o, 0, sizeof *o);
}

const char *py_opt(const py_opts *o, const char *key) {
    const char *v = NULL;
    for (size_t i = 0; i < o->n; i++)
        if (!strcmp(o->key[i], key)) v = o->val[i];
    return v;
}

hta_status py_opt_list(const py_opts *o, const char *key, const char ***out, size_t *n, hta_error *err) {
    *out = NULL;
    *n = 0;
    size_t m = 0;
    for (size_t i = 0; i < o->n; i++) m += !strcmp(o->key[i], key);
    if (!m) return HTA_OK;
    const char **v = malloc(m * sizeof *v);
    if (!v) return hta_oom(err);
    for (size_t i = 0; i < o->n; i++)
        if (!strcmp(o->key[i], key)) v[(*n)++] = o->val[i];
    *out = v;
    return HTA_OK;
}

hta_status py_opts_check(const py_opts *o, const char *what, const char *const *keys, hta_error *err) {
    for (size_t i = 0; i < o->n; i++) {
        const char *const *k = keys;
        while (*k && strcmp(*k, o->key[i])) k++;
        if (!*k) return hta_fail(err, HTA_EINVAL, "%s: unknown option '%s'", what, o->key[i]);
    }
    return HTA_OK;
}

hta_status py_opt_int(const py_opts *o, const char *key, long long *v, hta_error *err) {
    const char *s = py_opt(o, key);
    if (!s) return HTA_OK;
    char *e;
    errno = 0;
    long long x = strtoll(s, &e, 10);
    if (e == s || *e || errno) return hta_fail(err, HTA_EINVAL, "option %s: bad integer '%s'", key, s);
    *v = x;
    return HTA_OK;
}

hta_status py_opt_int_in(const py_opts *o, const char *key, const char *name, long long lo, long long hi,
                         int *v, hta_error *err) {
    long long x = *v;
    HTA_TRY(py_opt_int(o, key, &x, err));
    if (x < lo || x > hi) return hta_fail(err, HTA_EINVAL, "%s: %lld (>= %lld)", name, x, lo);
    *v = (int)x;
    return HTA_OK;
}

hta_status py_opt_double(const py_opts *o, const char *key, double *v, hta_error *err) {
    const char *s = py_opt(o, key);
    if (!s) return HTA_OK;
    char *e;
    errno = 0;
    double x = strtod(s, &e);
    if (e == s || *e || errno) return hta_fail(err, HTA_EINVAL, "option %s: bad number '%s'", key, s);
    *v = x;
    return HTA_OK;
}

hta_status py_opt_flag(const py_opts *o, const char *key, int *v, hta_error *err) {
    long long x = *v;
    HTA_TRY(py_opt_int(o, key, &x, err));
    *v = x != 0;
    return HTA_OK;
}

hta_status py_parse_int_list(const char *key, const char *s, int64_t **out, size_t *n, hta_error *err) {
    *out = NULL;
    *n = 0;
    size_t cap = 0;
    int64_t *v = NULL;
    const char *p = s;
    while (*p) {
        char *e;
        errno = 0;
        long long a = strtoll(p, &e, 10), b = a;
        if (e == p || errno) goto bad;
        p = e;
        if (*p == '-' ) {
            b = strtoll(p + 1, &e, 10);
            if (e == p + 1 || b < a || b - a > 1000000) goto bad;
            p = e;
        }
        for (long long x = a; x <= b; x++) {
            if (*n == cap) {
                cap = cap ? 2 * cap : 16;
                int64_t *nv = realloc(v, cap * sizeof *v);
                if (!nv) {
                    free(v);
                    return hta_oom(err);
                }
                v = nv;
            }
            v[(*n)++] = x;
        }
        if (*p == ',') p++;
        else if (*p) goto bad;
    }
    *out = v;
    return HTA_OK;
bad:
    free(v);
    *n = 0;
    return hta_fail(err, HTA_EINVAL, "option %s: bad list '%s' (e.g. 0,2,5-7)", key, s);
}
