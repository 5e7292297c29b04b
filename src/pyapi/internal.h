/* What the files of the Python C API (hta/pyapi.h) share: the session, result and graph structures and
 * the reader of option text ("key=value" lines, a list as the key repeated). */
#ifndef HTA_PYAPI_INTERNAL_H
#define HTA_PYAPI_INTERNAL_H

#include "hta/context.h"
#include "hta/cpath.h"
#include "hta/pyapi.h"
#include "hta/table.h"

struct hta_py_ctx {
    hta_ctx *ctx;
    char *window_spec;   /* the window's text (hta_window points into it) */
    char **warn;         /* loader warnings, in order */
    size_t nwarn;
    char *syms;          /* hta_py_symbols' buffer, made on first use */
    size_t nsyms, syms_len;
};

/* A text column as handed to Python (hta_py_col_strs), made on first use. */
typedef struct py_strcol {
    int done;
    int32_t *codes;  /* per row: index into the distinct texts, -1 for null */
    char *texts;     /* the distinct texts, NUL-terminated, in code order */
    size_t ntexts, len;
} py_strcol;

struct hta_py_result {
    hta_result res;
    py_strcol **cols;    /* per table: per column (NULL until a text column of the table is read) */
};

/* A critical path (cpath.c): HTA's graph (hta_compat, or loaded from a file), or the simulation graph
 * (hta/sim.h) whose one path through the span [lo, hi] is the default answer; HTA's graph of the
 * default mode is built only to be saved, from the options kept here. */
struct hta_py_graph {
    hta_cp_graph *g;         /* HTA's graph, or NULL */
    struct hta_sim *sim;     /* the simulation graph (default mode), or NULL */
    int32_t rank;
    int64_t lo, hi;          /* the span of the answer */
    hta_cpath_opts o;        /* how HTA's graph is built (its strings below) */
    char *annotation;
    char **data_load;
    size_t ndata_load;
};

/* Parsed option text: pairs in the order given.  The text is copied. */
typedef struct py_opts {
    char *buf;
    const char **key, **val;
    size_t n;
} py_opts;

hta_status py_opts_parse(const char *text, py_opts *o, hta_error *err);
void py_opts_free(py_opts *o);
/* The last value given for key, or NULL. */
const char *py_opt(const py_opts *o, const char *key);
/* Every value of key, in order (malloc'd array the caller frees; *n of them; NULL when none). */
hta_status py_opt_list(const py_opts *o, const char *key, const char ***out, size_t *n, hta_error *err);
/* A key the call does not know is an error naming it: keys is NULL-terminated. */
hta_status py_opts_check(const py_opts *o, const char *what, const char *const *keys, hta_error *err);
/* Typed values: a missing key leaves *v as it is; a malformed one is HTA_EINVAL naming key and text. */
hta_status py_opt_int(const py_opts *o, const char *key, long long *v, hta_error *err);
hta_status py_opt_double(const py_opts *o, const char *key, double *v, hta_error *err);
hta_status py_opt_flag(const py_opts *o, const char *key, int *v, hta_error *err);
/* An int option held in an int (*v its default): HTA_EINVAL "NAME: N (>= LO)" outside [lo, hi], NAME
 * being HTA's name of the option. */
hta_status py_opt_int_in(const py_opts *o, const char *key, const char *name, long long lo, long long hi,
                         int *v, hta_error *err);
/* "0,2,5-7" -> ints (malloc'd), as the command line's --ranks. */
hta_status py_parse_int_list(const char *key, const char *s, int64_t **out, size_t *n, hta_error *err);

/* A NULL session (a closed one) refused: every call that takes a session and can fail begins with it. */
hta_status py_need(const hta_py_ctx *c, hta_error *err);

/* A call's end: st failed -> res freed, st returned; else *out a new result that takes res over. */
hta_status py_result_out(hta_status st, hta_result *res, hta_py_result **out, hta_error *err);

#endif
