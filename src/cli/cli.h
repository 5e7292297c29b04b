/* Shared pieces of the `hta` command line: command registry, option parsing,
 * loading with progress, printing results.  Each command is one file that
 * registers itself with HTA_CLI_COMMAND. */
#ifndef HTA_CLI_H
#define HTA_CLI_H

#include "hta/analysis.h"
#include "hta/context.h"
#include "hta/sim.h"
#include "hta/table.h"
#include "hta/trace.h"

#define EXIT_USAGE 2

typedef int (*cli_run_fn)(int argc, char **argv);

typedef struct cli_command {
    int order; /* position in `hta --help` */
    const char *name;
    const char *summary;
    cli_run_fn run;
    const hta_table_def *const *tables; /* the tables it prints, NULL-terminated */
    int per_rank; /* it runs rank by rank (cli_run_ranks): hta-mpi shares its ranks among processes */
} cli_command;

void cli_register(const cli_command *c);
/* The registered commands in `hta --help` order (n of them), and one by name (NULL if none). */
const cli_command *const *cli_commands(size_t *n);
const cli_command *cli_command_named(const char *name);

/* Registers command fn as `hta nm`; the arguments after fn are the
 * declarations of the tables it prints (NULL for none), which its --help,
 * `hta tables` and docs/tables.md list.  HTA_CLI_RANK_COMMAND registers a command that runs rank by rank
 * (cli_run_ranks; each was checked to print, rank by rank, the tables and notes of the whole run: tests/scale):
 * the registration is the one list of them, which hta-mpi reads (cli_is_per_rank). */
#define HTA_CLI_COMMAND_(ord, nm, summ, rk, fn, ...)                                  \
    static const hta_table_def *const cli_tables_##fn[] = {__VA_ARGS__, NULL};        \
    static const cli_command cli_cmd_##fn = {ord, nm, summ, fn, cli_tables_##fn, rk}; \
    __attribute__((constructor)) static void cli_reg_##fn(void) { cli_register(&cli_cmd_##fn); }
#define HTA_CLI_COMMAND(ord, nm, summ, fn, ...) HTA_CLI_COMMAND_(ord, nm, summ, 0, fn, __VA_ARGS__)
#define HTA_CLI_RANK_COMMAND(ord, nm, summ, fn, ...) HTA_CLI_COMMAND_(ord, nm, summ, 1, fn, __VA_ARGS__)

/* A command without options of its own, registered and run by this line alone: `hta nm PATH` parses
 * the common options, then runs analysis fn rank by rank with no options of the command (user NULL: an
 * analysis's defaults), the ranks' results reduced by reduce (NULL: appended); desc is its --help text.
 * The arguments after reduce are the tables it prints, as for HTA_CLI_RANK_COMMAND. */
#define HTA_CLI_PLAIN_COMMAND(ord, nm, summ, desc, fn, reduce, ...)                                   \
    static int cmd_plain_##fn(int argc, char **argv) {                                              \
        static const cli_ranks r = {fn, reduce, NULL, NULL, NULL, 0};                               \
        return cli_parse_run_ranks(argc, argv, "PATH [options]", desc, NULL, &r);                   \
    }                                                                                               \
    HTA_CLI_RANK_COMMAND(ord, nm, summ, cmd_plain_##fn, __VA_ARGS__)

/* Prints the declarations of tables (NULL-terminated) for --help: per table its
 * name and meaning, per column its name, unit and meaning, within 100 columns. */
void cli_print_tables(FILE *f, const hta_table_def *const *tables);

/* CLI_OFF: a --no-X flag that turns off (sets to 0) what is on by default. */
typedef enum cli_kind { CLI_FLAG, CLI_OFF, CLI_STR, CLI_INT, CLI_DOUBLE, CLI_LIST } cli_kind;

/* A command's own option.  out: int* (FLAG, INT), const char ** (STR),
 * int* (OFF), double* (DOUBLE); LIST: a cli_list* collecting repeated values. */
typedef struct cli_opt {
    const char *name; /* without the leading -- */
    cli_kind kind;
    void *out;
    const char *meta;
    const char *help;
} cli_opt;

typedef struct cli_list {
    const char **v;
    size_t n;
} cli_list;

typedef struct cli_common {
    const char *path;       /* first positional */
    const char *pos[4];     /* all positionals */
    size_t npos;
    hta_format fmt;
    hta_ctx_opts ctx;        /* --ranks, --include-last-step, --hta-compat, --threads, --window */
    int32_t rank_list[4096]; /* storage of ctx.ranks */
    const char *comm_globs[64]; /* storage of ctx.comm_globs (--comm-kernel, repeatable) */
    const char *table;       /* --table NAME: print only that table */
    int quiet;
    int tables_to_stderr;    /* an output file is stdout itself (-o /dev/stdout): the tables go to stderr */
    /* under hta-mpi, set by the command: cli_run_ranks's done (the root's) may run the job engine over the
     * plan's files with job_dist, which cli_run_ranks sets for it, and every other process follows that job
     * (hta_job_follow) instead of leaving after the gather; else job_dist is NULL */
    int follow;
    const hta_job_dist *job_dist;
    /* set by the command before cli_run_ranks: puts a rank's result into the ranks' before it, in rank order,
     * as it comes (the root of hta-mpi and the whole load's reduced part the same way): a fold that keeps a row
     * per key where the reduce sums over the ranks; NULL: hta_result_append */
    hta_status (*fold)(hta_result *acc, hta_result *part, hta_error *err);
    /* set by cli_run_ranks for the command's done where the command asks (cli_ranks.keep) and the files are
     * no more than the threads: per file of the plan, its context kept since its part (the files the done
     * reads again: the report's savings); else NULL */
    hta_ctx **kept;
} cli_common;

/* Parses argv (argv[0] is the command name).  usage: "PATH [options]".  opts: NULL for a command
 * without options of its own.
 * Returns -1 to go on, or the exit status (0 after --help, 2 on bad usage,
 * 1 when an output would overwrite an input: hta_output_check). */
int cli_parse(int argc, char **argv, const char *usage, const char *desc, const cli_opt *opts,
              size_t min_pos, size_t max_pos, cli_common *c);

/* A usage error of command cmd: "hta CMD: MESSAGE" and a pointer to its --help on stderr.  Returns
 * EXIT_USAGE. */
int cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Opens the run context of path with c->ctx (only the selected ranks are
 * read), printing warnings and progress on stderr.  Returns 0 or an exit status. */
int cli_open(cli_common *c, const char *path, hta_ctx **ctx);
/* c->ctx with the loader's warnings printed on stderr (none with --quiet), for a library call that loads
 * files itself (the job's passes of critical-path --all-ranks). */
hta_ctx_opts cli_ctx_opts(cli_common *c);

/* Prints notes on stderr and the tables on stdout; frees res. Returns the exit status. */
int cli_emit(const cli_common *c, hta_result *res);

/* Reports a library error on stderr; returns the exit status. */
int cli_fail(const char *cmd, const hta_error *err);
/* The end of a command: cli_emit(c, res) when st is HTA_OK, else res freed and cli_fail(cmd, err). */
int cli_finish(const cli_common *c, const char *cmd, hta_status st, hta_result *res, const hta_error *err);

/* An analysis of a command: its result from a context.  user: the command's parsed options and state (never
 * file statics), only read here, since the per-rank threads call it at once. */
typedef hta_status (*cli_analysis_fn)(hta_ctx *ctx, const cli_common *c, void *user, hta_result *out,
                                      hta_error *err);
/* The analysis of a command that only hands its options on: CLI_ANALYSIS(name, fn) defines the
 * cli_analysis_fn name that returns fn(ctx, user, out, err) (an analysis, or its _part). */
#define CLI_ANALYSIS(name, fn)                                                                        \
    static hta_status name(hta_ctx *ctx, const cli_common *c, void *user, hta_result *out, hta_error *err) { \
        return fn(ctx, user, out, err);                                                               \
    }
/* The whole load: load c->path, run fn, emit. */
int cli_analyse(cli_common *c, const char *cmd, cli_analysis_fn fn, void *user);

/* ---- the per-rank iteration (per_rank.c, docs/scaling.md) ----
 * A command registered with HTA_CLI_RANK_COMMAND runs rank by rank: at most --threads rank models in memory,
 * each rank's result from a context of that rank alone, the results appended in rank order, then:
 *   - printed as the whole run would print them (reduce and done NULL: the answer for a rank depends on that
 *     rank alone);
 *   - reduced (reduce): the results are parts (the analysis's _part, kernels' sums over the ranks, notes about
 *     the whole run) that reduce turns into the result (its _reduce); the whole load reduces the part of all
 *     ranks, so both print the same;
 *   - finished (done): a command across ranks (stragglers, merge, report) whose results are summaries; done
 *     gets them with the plan of the files (to read them again), prints, frees all and returns the exit
 *     status; whole runs the command on the whole load.  Under hta-mpi the summaries are gathered on process
 *     0, which alone calls done.
 * Where the plan cannot go file by file (and under HTA_PER_RANK=0) the command runs on the whole load. */
typedef hta_status (*cli_reduce_fn)(const cli_common *c, void *user, hta_result *parts, hta_result *out,
                                    hta_error *err);
/* Likewise CLI_REDUCE(name, fn): the cli_reduce_fn name that returns fn(user, parts, out, err) (an
 * analysis's _reduce). */
#define CLI_REDUCE(name, fn)                                                                          \
    static hta_status name(const cli_common *c, void *user, hta_result *parts, hta_result *out,       \
                           hta_error *err) {                                                          \
        return fn(user, parts, out, err);                                                             \
    }
typedef int (*cli_done_fn)(cli_common *c, const char *cmd, void *user, const hta_rank_plan *plan, hta_result *all);
typedef int (*cli_whole_fn)(cli_common *c, const char *cmd, void *user);
typedef struct cli_ranks {
    cli_analysis_fn fn;
    cli_reduce_fn reduce; /* or NULL */
    cli_done_fn done;     /* or NULL; with whole */
    cli_whole_fn whole;
    void *user;           /* the command's options and state, given to each */
    int keep;             /* done reads the files again (c->kept): keep their contexts where they are few */
} cli_ranks;
int cli_run_ranks(cli_common *c, const char *cmd, const cli_ranks *r);
/* Parses argv (one PATH), then cli_run_ranks. */
int cli_parse_run_ranks(int argc, char **argv, const char *usage, const char *desc, const cli_opt *opts,
                        const cli_ranks *r);
/* 1 when c's run goes file by file: the plan of c->path's files (made into *plan, hta_rank_plan_free it
 * either way) takes the run one file at a time, and HTA_PER_RANK=0 (the whole load, for comparisons) is not
 * set.  0: the whole load. */
int cli_plan(const cli_common *c, hta_rank_plan *plan);
/* 1 when command `name` runs rank by rank (its registration, HTA_CLI_RANK_COMMAND). */
int cli_is_per_rank(const char *name);

/* What one rank gave: its result and its loader's warnings. */
typedef struct cli_part {
    hta_result res;
    char **warn;
    size_t nwarn;
    int done; /* the rank was analysed (not skipped) */
} cli_part;

/* How ranks are shared among processes (hta-mpi, src/cli/mpi_main.c); NULL in `hta`. */
typedef struct cli_dist {
    int root; /* this process writes the output */
    /* this process's share of the plan's files (indices, malloc'd into *which) */
    hta_status (*share)(const hta_rank_plan *p, size_t **which, size_t *n, hta_error *err);
    /* after the visits: every process's parts and its failure (st, failed index, in_load, err) go to the
     * root, whose parts[] and failure are then the run's; collective */
    hta_status (*gather)(cli_part *parts, size_t n, const cli_command *cmd, hta_status *st, size_t *failed,
                         int *in_load, hta_error *err);
    int nproc; /* the processes */
    /* the root's bytes (*bytes, *len) to every process (*bytes malloc'd there); collective */
    hta_status (*bcast)(char **bytes, size_t *len, hta_error *err);
    /* every process's bytes to every process: *all (malloc'd) their concatenation in process order,
     * (*lens)[q] (malloc'd) process q's length; collective (hta_job_dist's) */
    hta_status (*allgather)(const char *bytes, size_t len, char **all, size_t **lens, hta_error *err);
    /* every process runs this command (critical-path --all-ranks: the job engine's passes are shared,
     * hta_job_dist), not the root alone */
    int everyone;
} cli_dist;
extern const cli_dist *cli_distributor;

/* Derived traces (--augment, --overlay, --what-if-trace) rewrite a rank's own file; the ranks of a
 * merged trace (hta merge) share one, so the options are refused before any work is done (the writer
 * refuses too, but only after its scan).  opt names the option in the message. */
hta_status cli_check_derivable(const hta_ctx *ctx, const char *opt, hta_error *err);

#endif
