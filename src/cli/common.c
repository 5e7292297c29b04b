/* What every `hta` command shares (cli.h): its --help (options and the tables it prints), option
 * parsing, opening the run context with warnings and progress on stderr, printing a result in the
 * chosen format, and the exit codes (0 ok, 1 bad input, 2 usage).  Layer 5: with the cmd_*.c files,
 * the only code that prints. */
#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "hta/outfile.h"
#include "hta/trace.h"

/* Help fits this many columns: a terminal's width, and what tests check. */
#define HELP_WIDTH 100

/* Prints text starting at column col, its words wrapped at HELP_WIDTH onto
 * lines starting at column indent, and ends the line. */
static void wrapped(FILE *f, const char *text, size_t col, size_t indent) {
    int first = 1; /* the line's first word takes no space before it */
    for (const char *p = text; *p;) {
        /* newlines count as spaces: the text is re-flowed, so a help string may be broken anywhere in the
         * source */
        if (*p == ' ' || *p == '\n') {
            p++;
            continue;
        }
        size_t w = strcspn(p, " \n");
        if (!first && col + 1 + w > HELP_WIDTH) {
            fprintf(f, "\n%*s", (int)indent, "");
            col = indent;
            first = 1;
        }
        fprintf(f, "%s%.*s", first ? "" : " ", (int)w, p);
        col += w + !first;
        first = 0;
        p += w;
    }
    fputc('\n', f);
}

/* Options as "--name META" after two spaces, padded to 28 columns, and the help wrapped from column 31
 * (2 + 28 + 1), so that every help text starts in the same column. */
static void usage_opts(FILE *f, const cli_opt *opts) {
    for (const cli_opt *o = opts; o && o->name; o++) {
        char left[64];
        snprintf(left, sizeof left, "--%s%s%s", o->name, o->meta ? " " : "", o->meta ? o->meta : "");
        int n = fprintf(f, "  %-28s ", left);
        wrapped(f, o->help, n > 0 ? (size_t)n : 0, 31);
    }
}

/* One column of a table in --help: name, unit and meaning in aligned columns
 * (names up to nw, units up to uw wide); a longer name gets a line of its own. */
static void help_col(FILE *f, const hta_col_def *cd, size_t nw, size_t uw) {
    if (strlen(cd->name) > nw) fprintf(f, "    %s\n    %*s  ", cd->name, (int)nw, "");
    else fprintf(f, "    %-*s  ", (int)nw, cd->name);
    if (uw) fprintf(f, "%-*s  ", (int)uw, cd->unit);
    size_t mcol = 4 + nw + 2 + (uw ? uw + 2 : 0);
    wrapped(f, cd->meaning, mcol, mcol);
}

void cli_print_tables(FILE *f, const hta_table_def *const *tables) {
    for (size_t i = 0; tables[i]; i++) {
        const hta_table_def *d = tables[i];
        int n = fprintf(f, "  %s: ", d->name);
        wrapped(f, d->meaning, n > 0 ? (size_t)n : 0, 6);
        size_t nc = hta_table_def_ncols(d), nw = 0, uw = 0;
        for (size_t c = 0; c < nc; c++) {
            size_t l = strlen(hta_table_def_col(d, c)->name), u = strlen(hta_table_def_col(d, c)->unit);
            if (l <= 24 && l > nw) nw = l; /* a longer name would squeeze every meaning */
            if (u > uw) uw = u;
        }
        for (size_t c = 0; c < nc; c++) help_col(f, hta_table_def_col(d, c), nw, uw);
    }
}

static void print_help(const char *cmd, const char *usage, const char *desc, const cli_opt *opts) {
    printf("usage: hta %s %s\n\n%s\n", cmd, usage, desc);
    /* the tables come from the declarations the command registered (HTA_CLI_COMMAND), so --help lists
     * exactly what it prints */
    const cli_command *c = cli_command_named(cmd);
    if (c && c->tables[0]) {
        printf("\ntables:\n");
        cli_print_tables(stdout, c->tables);
    }
    printf("\noptions:\n");
    usage_opts(stdout, opts);
    /* The options every command takes.  They are parsed by name in cli_parse, before the command's own
     * table, so a command cannot change them; this table only documents them in --help. */
    static const cli_opt common[] = {
        {"ranks", CLI_STR, NULL, "LIST", "ranks to analyse: 0,2,5-7 (default: all)"},
        {"format", CLI_STR, NULL, "FMT", "table (default), csv or json"},
        {"include-last-step", CLI_FLAG, NULL, NULL, "keep the last ProfilerStep (HTA drops it)"},
        {"hta-compat", CLI_FLAG, NULL, NULL,
         "Python HTA 0.6.1's numbers exactly, quirks included: its whole-us rounding, its time\n"
         "                               origin and iteration filter, its CUDA-only name lists and\n"
         "                               its rules where hta differs (docs/differences-from-hta.md)"},
        {"window", CLI_STR, NULL, "WINDOW",
         "analyse only part of each rank: START:END from the rank's first event, in us or with a unit\n"
         "(ns, us, ms, s), an end left open if empty (10ms:25ms, 1500:, :2s); or annot:NAME, every\n"
         "instance of the CPU events named NAME (a glob with * ? [...] allowed), or annot:NAME#K, its\n"
         "K-th instance from 0 (annot:ProfilerStep#3 is that step). A row is in when it starts in\n"
         "the window; a GPU row when its launch does. It replaces the last-step filter. See\n"
         "docs/windows.md"},
        {"comm-kernel", CLI_STR, NULL, "GLOB",
         "kernels whose full name matches GLOB (* ? [...]) are communication too, besides NCCL, RCCL,\n"
         "MSCCL, DeepEP, NVSHMEM, custom all-reduce and what c10d's operators launch; repeatable"},
        {"table", CLI_STR, NULL, "NAME",
         "print only the table NAME (see tables: above): one plain table, e.g. for\n"
         "pandas.read_csv with --format csv"},
        {"threads", CLI_INT, NULL, "N", "ranks loaded in parallel, a large file in parts when fewer files\n"
                                          "than threads (default: all CPUs)"},
        {"quiet", CLI_FLAG, NULL, NULL, "no warnings or progress on stderr"},
        {"help", CLI_FLAG, NULL, NULL, "show this help"},
        {NULL, 0, NULL, NULL, NULL},
    };
    usage_opts(stdout, common);
}

/* "0,2,5-7" into c->rank_list: ranges are expanded because the loader takes an explicit list of ranks
 * (hta_ctx_opts.ranks), whose files are the only ones it parses.  The list's size bounds how many ranks
 * one run can name. */
static int parse_ranks(const char *s, cli_common *c) {
    size_t n = 0;
    const char *p = s;
    while (*p) {
        char *e;
        long a = strtol(p, &e, 10), b;
        if (e == p || a < 0 || a > INT_MAX) return -1;
        b = a;
        p = e;
        if (*p == '-') {
            b = strtol(p + 1, &e, 10);
            if (e == p + 1 || b < a || b > INT_MAX) return -1;
            p = e;
        }
        for (long r = a; r <= b; r++) {
            if (n >= sizeof c->rank_list / sizeof *c->rank_list) return -1;
            c->rank_list[n++] = (int32_t)r;
        }
        if (*p == ',') p++;
        else if (*p) return -1;
    }
    c->ctx.ranks = c->rank_list;
    c->ctx.nranks = n;
    return 0;
}

/* Usage errors: one line naming the command, a pointer to its --help, and exit code 2 (cli.h). */
int cli_usage(const char *cmd, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "hta %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'hta %s --help'.\n", cmd);
    return EXIT_USAGE;
}

/* --table NAME must be one of the tables the command prints (its registered declarations): a typo is a
 * usage error that lists them, before any file is read. */
static int check_table(const char *cmd, const char *name) {
    const cli_command *c = cli_command_named(cmd);
    if (c)
        for (size_t i = 0; c->tables[i]; i++)
            if (!strcmp(c->tables[i]->name, name)) return 0;
    fprintf(stderr, "hta %s: unknown table '%s'", cmd, name);
    for (size_t i = 0; c && c->tables[i]; i++) fprintf(stderr, "%s%s", i ? ", " : " (tables: ", c->tables[i]->name);
    fprintf(stderr, "%s\nTry 'hta %s --help'.\n", c && c->tables[0] ? ")" : " (it prints no tables)", cmd);
    return 1;
}

/* The options that name what a command writes, files (--output, --save, --what-if-trace) and folders
 * (--augment, --overlay), and --graph, an input besides the positional paths.  They are known by name
 * here so that every command's outputs are checked against its inputs in one place, before anything
 * is read: an output that is an input, or that the next load of the input folder would read as a rank,
 * is refused (hta_output_check, docs/loading.md "Output files"). */
static const char *const out_files[] = {"output", "save", "what-if-trace", "html", NULL};
static const char *const out_dirs[] = {"augment", "overlay", NULL};

/* Of them, those that write traces: each claims its input's ranks, so written beside an input rank
 * file it would make that file's folder unloadable (two files of one rank). */
static const char *const trace_outs[] = {"output", "what-if-trace", "augment", "overlay", NULL};

/* The folder a path lies in (links followed), into buf; 0 when it cannot be resolved. */
static int folder_of(const char *path, int is_dir, char *buf) {
    char tmp[PATH_MAX];
    if (is_dir) return realpath(path, buf) != NULL;
    snprintf(tmp, sizeof tmp, "%s", path);
    char *slash = strrchr(tmp, '/');
    if (slash == tmp) tmp[1] = 0;
    else if (slash) *slash = 0;
    else snprintf(tmp, sizeof tmp, ".");
    return realpath(tmp, buf) != NULL;
}

/* A derived trace written into the folder of the rank file it comes from, when that file names its
 * rank: refused, as one written into an input folder is (hta_output_check), since that folder would
 * then hold two files of one rank. */
static int beside_input_file(const char *cmd, const char *out, int dir, const char *in) {
    struct stat si;
    char fin[PATH_MAX], fout[PATH_MAX];
    if (stat(in, &si) || !S_ISREG(si.st_mode) || !folder_of(in, 0, fin) || !folder_of(out, dir, fout) ||
        strcmp(fin, fout))
        return 0;
    const char *base = strrchr(out, '/');
    if (!dir && !hta_rank_file_name(base ? base + 1 : out)) return 0;
    /* the derived trace keeps its input's distributedInfo (or htaMerge): only an input that names its
     * rank makes two claimants; one ranked by file order gets the next free rank beside it */
    if (!hta_file_claims_rank(in)) return 0;
    fprintf(stderr, "hta %s: error: %s is in the folder of its input %s, where a trace written would be a "
                    "second file of its rank and the folder would no longer load; write to another folder\n",
            cmd, out, in);
    return 1;
}

static int listed(const char *name, const char *const *l) {
    for (; *l; l++)
        if (!strcmp(*l, name)) return 1;
    return 0;
}

static int check_outputs(const char *cmd, const cli_opt *opts, cli_common *c) {
    const char *in[8];
    size_t nin = 0;
    for (size_t i = 0; i < c->npos; i++) in[nin++] = c->pos[i];
    for (const cli_opt *o = opts; o && o->name; o++)
        if (o->kind == CLI_STR && !strcmp(o->name, "graph") && *(const char **)o->out)
            in[nin++] = *(const char **)o->out;
    struct stat s1, so;
    int have1 = fstat(1, &s1) == 0;
    /* critical-path --all-ranks writes --what-if-trace as a folder of rank files (one that exists is
     * written into, as under hta-mpi, whose processes all check it while one of them creates it) */
    int all_ranks = 0;
    for (const cli_opt *o = opts; o && o->name; o++)
        if (o->kind == CLI_FLAG && !strcmp(o->name, "all-ranks")) all_ranks = *(const int *)o->out;
    for (const cli_opt *o = opts; o && o->name; o++) {
        int as_dir = all_ranks && !strcmp(o->name, "what-if-trace");
        int file = !as_dir && listed(o->name, out_files), dir = as_dir || listed(o->name, out_dirs);
        const char *out = o->kind == CLI_STR && (file || dir) ? *(const char **)o->out : NULL;
        if (!out) continue;
        for (size_t i = 0; i < nin; i++) {
            hta_error err = {0};
            if (file ? hta_output_check(out, in[i], &err) : hta_output_dir_check(out, in[i], &err)) {
                fprintf(stderr, "hta %s: error: %s\n", cmd, err.msg);
                return 1;
            }
            if (listed(o->name, trace_outs) && beside_input_file(cmd, out, dir, in[i])) return 1;
        }
        /* a trace written to stdout itself (-o /dev/stdout into a pipe or a file): the tables go to
         * stderr, so that what is read from stdout is the trace alone */
        if (file && have1 && !S_ISCHR(s1.st_mode) && stat(out, &so) == 0 && so.st_dev == s1.st_dev &&
            so.st_ino == s1.st_ino)
            c->tables_to_stderr = 1;
    }
    return -1;
}

int cli_parse(int argc, char **argv, const char *usage, const char *desc, const cli_opt *opts,
              size_t min_pos, size_t max_pos, cli_common *c) {
    const char *cmd = argv[0];
    /* all zeros are the library's defaults: HTA's time rounding and step filter, all ranks, every CPU */
    memset(c, 0, sizeof *c);
    c->fmt = HTA_FMT_TABLE;
    int only_pos = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        /* a lone "-" and everything after "--" are positional, so a path may start with a dash */
        if (only_pos || a[0] != '-' || !a[1]) {
            if (c->npos >= max_pos || c->npos >= 4)
                return cli_usage(cmd, "unexpected argument '%s'", a);
            c->pos[c->npos++] = a;
            continue;
        }
        if (!strcmp(a, "--")) {
            only_pos = 1;
            continue;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            print_help(cmd, usage, desc, opts);
            return 0;
        }
        if (strncmp(a, "--", 2)) return cli_usage(cmd, "unknown option '%s'", a);
        const char *name = a + 2;
        const char *val = NULL;
        char nbuf[64];
        /* --name=value as well as --name value; the name is copied out so that it can be looked up alone */
        const char *eq = strchr(name, '=');
        if (eq) {
            size_t l = (size_t)(eq - name);
            if (l >= sizeof nbuf) return cli_usage(cmd, "unknown option '%s'", a);
            memcpy(nbuf, name, l);
            nbuf[l] = 0;
            name = nbuf;
            val = eq + 1;
        }
/* the option's value: after '=' in the same argument, else the next argument */
#define NEEDVAL()                                                                        \
    do {                                                                                 \
        if (!val) {                                                                      \
            if (i + 1 >= argc) return cli_usage(cmd, "option '%s' needs a value", a);    \
            val = argv[++i];                                                             \
        }                                                                                \
    } while (0)
        /* The common options first (see print_help), then the command's own table.  Flags given a value
         * fall through and are refused as unknown. */
        if (!strcmp(name, "format")) {
            NEEDVAL();
            if (hta_format_parse(val, &c->fmt))
                return cli_usage(cmd, "unknown format '%s' (table, csv, json)", val);
            continue;
        }
        if (!strcmp(name, "ranks")) {
            NEEDVAL();
            if (parse_ranks(val, c))
                return cli_usage(cmd, "bad rank list '%s' (e.g. 0,2,5-7)", val);
            continue;
        }
        if (!strcmp(name, "window")) {
            NEEDVAL();
            /* checked now, so that a typo is a usage error before any file is read; the text stays in
             * argv, which outlives the run */
            hta_error werr = {0};
            if (hta_window_parse(val, &c->ctx.window, &werr)) return cli_usage(cmd, "%s", werr.msg);
            continue;
        }
        if (!strcmp(name, "threads")) {
            NEEDVAL();
            char *e;
            long v = strtol(val, &e, 10);
            /* 64: the loader starts at most that many threads (load.c) */
            if (*e || v < 1 || v > 64) return cli_usage(cmd, "bad thread count '%s' (1-64)", val);
            c->ctx.threads = (int)v;
            continue;
        }
        if (!strcmp(name, "comm-kernel")) {
            NEEDVAL();
            if (c->ctx.ncomm_globs >= sizeof c->comm_globs / sizeof *c->comm_globs)
                return cli_usage(cmd, "too many --comm-kernel globs (at most 64): '%s'", val);
            c->comm_globs[c->ctx.ncomm_globs++] = val;
            c->ctx.comm_globs = c->comm_globs;
            continue;
        }
        if (!strcmp(name, "table")) {
            NEEDVAL();
            if (check_table(cmd, val)) return EXIT_USAGE;
            c->table = val;
            continue;
        }
        if (!strcmp(name, "include-last-step") && !val) {
            c->ctx.view.include_last_profiler_step = 1;
            continue;
        }
        if (!strcmp(name, "hta-compat") && !val) {
            c->ctx.hta_compat = 1;
            continue;
        }
        if (!strcmp(name, "quiet") && !val) {
            c->quiet = 1;
            continue;
        }
        const cli_opt *o = opts;
        while (o && o->name && strcmp(o->name, name)) o++;
        if (!o || !o->name) return cli_usage(cmd, "unknown option '%s'", a);
        switch (o->kind) {
        case CLI_FLAG:
        case CLI_OFF:
            if (val) return cli_usage(cmd, "option '%s' takes no value", a);
            *(int *)o->out = o->kind == CLI_FLAG;
            break;
        case CLI_STR:
            NEEDVAL();
            *(const char **)o->out = val;
            break;
        case CLI_INT: {
            NEEDVAL();
            char *e;
            errno = 0;
            long long v = strtoll(val, &e, 10);
            /* read as long long and range-checked: out is an int, where a larger value would silently
             * wrap to another one */
            if (*e || e == val || errno || v < INT_MIN || v > INT_MAX)
                return cli_usage(cmd, "bad integer '%s'", val);
            *(int *)o->out = (int)v;
            break;
        }
        case CLI_DOUBLE: {
            NEEDVAL();
            char *e;
            double v = strtod(val, &e);
            if (*e || e == val) return cli_usage(cmd, "bad number '%s'", val);
            *(double *)o->out = v;
            break;
        }
        case CLI_LIST: {
            NEEDVAL();
            cli_list *l = o->out;
            /* The values point into argv: only the array is the command's to free. */
            const char **q = realloc(l->v, (l->n + 1) * sizeof *q);
            if (!q) return cli_usage(cmd, "%s", "out of memory");
            l->v = q;
            l->v[l->n++] = val;
            break;
        }
        }
#undef NEEDVAL
    }
    if (c->npos < min_pos) return cli_usage(cmd, "missing argument: %s", usage);
    c->path = c->npos ? c->pos[0] : NULL;
    /* -1: parsed, go on (cli.h); 0, 1 and 2 are exit codes */
    return check_outputs(cmd, opts, c);
}

/* Loader warnings (rank fallbacks, skipped files) matter to a person but would corrupt csv or json on
 * stdout: stderr, and none with --quiet. */
static void on_warn(void *ctx, const char *msg) {
    const cli_common *c = ctx;
    if (!c->quiet) fprintf(stderr, "hta: warning: %s\n", msg);
}

typedef struct progress {
    int on;
} progress;

/* Called from the loader's threads; "\r" redraws one line in place.  Only installed on a terminal (see
 * cli_open), so logs and pipes never see it. */
static void on_progress(void *ctx, uint64_t done, uint64_t total) {
    (void)ctx;
    if (total) fprintf(stderr, "\rhta: loading... %3d%%", (int)(done * 100 / total));
}

hta_ctx_opts cli_ctx_opts(cli_common *c) {
    hta_ctx_opts o = c->ctx;
    o.warn = on_warn;
    o.warn_ctx = c;
    return o;
}

int cli_open(cli_common *c, const char *path, hta_ctx **ctx) {
    hta_ctx_opts o = cli_ctx_opts(c);
    int tty = !c->quiet && isatty(2);
    if (tty) o.progress = on_progress;
    hta_error err = {0};
    hta_status st = hta_ctx_open(path, &o, ctx, &err);
    /* erase the progress line before anything else is printed on stderr */
    if (tty) fprintf(stderr, "\r\033[K");
    if (st) {
        fprintf(stderr, "hta: error: %s\n", err.msg);
        /* a load failure is bad input: exit 1 */
        return 1;
    }
    return 0;
}

int cli_emit(const cli_common *c, hta_result *res) {
    /* Notes go to stderr, the tables to stdout: a pipe into a csv or json reader gets nothing but data. */
    if (!c->quiet)
        for (size_t i = 0; i < res->nnotes; i++) fprintf(stderr, "hta: note: %s\n", res->notes[i]);
    FILE *f = c->tables_to_stderr ? stderr : stdout;
    /* --table: a result of that one table (borrowed, not freed twice), so csv is plain csv */
    hta_table *one = c->table ? hta_result_find(res, c->table) : NULL;
    hta_result sel = {&one, one ? 1 : 0, NULL, 0};
    if (c->table && !one && !c->quiet)
        fprintf(stderr, "hta: note: no %s table in this result (the options given do not make it)\n", c->table);
    errno = 0;
    int rc = hta_result_write(f, c->table ? &sel : res, c->fmt);
    int e = errno;
    hta_result_free(res);
    if (rc) {
        /* a reader that stopped reading (| head) chose to: no message, only the status */
        if (e != EPIPE)
            fprintf(stderr, "hta: error: cannot write the tables to %s: %s\n", f == stdout ? "stdout" : "stderr",
                    e ? strerror(e) : "write error");
        return 1;
    }
    return 0;
}

hta_status cli_check_derivable(const hta_ctx *ctx, const char *opt, hta_error *err) {
    for (size_t k = 0; k < hta_ctx_nranks(ctx); k++)
        if (hta_ctx_rank(ctx, k)->merged)
            return hta_fail(err, HTA_EINVAL,
                            "%s: a merged trace (hta merge): %s writes derived traces from the per-rank files; "
                            "run it on the folder the merge was made from",
                            hta_ctx_rank(ctx, k)->path, opt);
    return HTA_OK;
}

int cli_fail(const char *cmd, const hta_error *err) {
    fprintf(stderr, "hta %s: error: %s\n", cmd, err->msg);
    return 1;
}

int cli_finish(const cli_common *c, const char *cmd, hta_status st, hta_result *res, const hta_error *err) {
    if (!st) return cli_emit(c, res);
    hta_result_free(res);
    return cli_fail(cmd, err);
}

int cli_analyse(cli_common *c, const char *cmd, cli_analysis_fn fn, void *user) {
    hta_ctx *ctx;
    int rc = cli_open(c, c->path, &ctx);
    if (rc) return rc;
    hta_result res;
    hta_result_init(&res);
    hta_error err = {0};
    hta_status st = fn(ctx, c, user, &res, &err);
    /* The result owns its cells (table.h), so the loaded trace can go before printing. */
    hta_ctx_free(ctx);
    return cli_finish(c, cmd, st, &res, &err);
}
