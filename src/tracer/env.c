/* Identity from the environment: the launcher that started this process says
 * its global rank.  A malformed value must not quietly turn every process
 * into rank 0 (their files would have one name): it is ignored with one
 * warning naming the variable, and the next launcher's variable is used.
 *
 * Order: the launcher closest to the process first.  torchrun sets RANK for
 * each worker even when torchrun itself runs under srun (whose SLURM_PROCID
 * then numbers nodes); mpirun inside an sbatch script leaves the batch step's
 * SLURM_PROCID=0 in every process's environment.  So Slurm comes last.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct launcher {
    const char *rank, *size, *local;
} launcher;

static const launcher launchers[] = {
    {"RANK", "WORLD_SIZE", "LOCAL_RANK"},                                              /* torchrun */
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},   /* Open MPI */
    {"PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"},                                       /* MPICH, Intel MPI */
    {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},                                 /* Slurm srun */
};
#define NLAUNCHERS (sizeof launchers / sizeof launchers[0])

/* Variables already warned about (names are the literals above or callers'). */
static const char *warned[32];
static unsigned nwarned;

static int warn_first(const char *name)
{
    for (unsigned i = 0; i < nwarned; i++)
        if (strcmp(warned[i], name) == 0)
            return 0;
    if (nwarned < sizeof warned / sizeof warned[0])
        warned[nwarned++] = name;
    return 1;
}

/* Decimal digits only, 0..INT_MAX: "abc", "1.5", "-1", "+2", " 3" and
 * 99999999999 are all malformed.  1 ok, 0 malformed. */
static int parse_nonneg(const char *s, int *out)
{
    if (!*s)
        return 0;
    long long v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return 0;
        v = v * 10 + (*p - '0');
        if (v > INT_MAX)
            return 0;
    }
    *out = (int)v;
    return 1;
}

/* The value as it may be printed: at most 40 bytes, printable ASCII. */
static void shown(const char *v, char *buf, size_t cap)
{
    size_t n = 0;
    for (; *v && n + 4 < cap && n < 40; v++)
        buf[n++] = (*v >= 0x20 && *v < 0x7f && *v != '"') ? *v : '?';
    if (*v)
        buf[n++] = '.', buf[n++] = '.', buf[n++] = '.';
    buf[n] = 0;
}

int htat_env_int(const char *name, int dflt)
{
    const char *e = getenv(name);
    int v;
    if (!e || !*e)
        return dflt;
    if (parse_nonneg(e, &v))
        return v;
    if (warn_first(name)) {
        char b[64];
        shown(e, b, sizeof b);
        htat_warn("ignoring %s=\"%s\": not an integer 0..%d; using %d", name, b, INT_MAX, dflt);
    }
    return dflt;
}

/* Reads launcher variable name: 1 and *out when valid; 0 when unset or empty;
 * -1 when malformed (*bad keeps the shown value). */
static int read_var(const char *name, int *out, char *bad, size_t cap)
{
    const char *e = getenv(name);
    if (!e || !*e)
        return 0;
    if (parse_nonneg(e, out))
        return 1;
    shown(e, bad, cap);
    return -1;
}

void htat_env_identity(const hta_tracer_config *cfg)
{
    int chosen = -1, rank = 0;
    const char *bad_name[NLAUNCHERS];
    char bad_val[NLAUNCHERS][64];
    unsigned nbad = 0;
    for (unsigned i = 0; i < NLAUNCHERS && chosen < 0; i++) {
        int r = read_var(launchers[i].rank, &rank, bad_val[nbad], sizeof bad_val[0]);
        if (r > 0)
            chosen = (int)i;
        else if (r < 0)
            bad_name[nbad++] = launchers[i].rank;
    }
    if (cfg->rank < 0) {
        for (unsigned k = 0; k < nbad; k++) {
            if (!warn_first(bad_name[k]))
                continue;
            if (chosen >= 0)
                htat_warn("ignoring %s=\"%s\": not a rank (an integer 0..%d); rank %d from %s", bad_name[k],
                          bad_val[k], INT_MAX, rank, launchers[chosen].rank);
            else
                htat_warn("ignoring %s=\"%s\": not a rank (an integer 0..%d); no other launcher variable: "
                          "rank 0",
                          bad_name[k], bad_val[k], INT_MAX);
        }
        htat_g.rank = chosen >= 0 ? rank : 0;
        htat_g.rank_source = chosen >= 0 ? launchers[chosen].rank : "default";
    } else {
        htat_g.rank = cfg->rank;
        htat_g.rank_source = "config";
    }

    /* world size and local rank: from the launcher that gave the rank */
    int ws = 1, local = -1;
    if (chosen >= 0) {
        ws = htat_env_int(launchers[chosen].size, 1);
        if (ws < 1)
            ws = 1;
        local = htat_env_int(launchers[chosen].local, -1);
    }
    htat_g.world_size = cfg->world_size > 0 ? cfg->world_size : ws;
    htat_g.local_rank = local;
    htat_g.dp = cfg->dp >= 0 ? cfg->dp : htat_env_int("HTA_TRACE_DP", 0);
    htat_g.pp = cfg->pp >= 0 ? cfg->pp : htat_env_int("HTA_TRACE_PP", 0);
    htat_g.tp = cfg->tp >= 0 ? cfg->tp : htat_env_int("HTA_TRACE_TP", 0);
}
