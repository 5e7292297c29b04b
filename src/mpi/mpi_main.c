/* hta-mpi: the `hta` program under `mpirun -np P`, same commands and options.  A command that runs rank
 * by rank (cli_is_per_rank) shares the rank files among the processes by size; each process analyses its
 * share with the per-rank iteration (at most --threads rank models alive), and the parts (each rank's
 * result tables, warnings, and the first failure) are gathered on process 0, which prints the output
 * exactly as `hta` would.  critical-path --all-ranks runs in every process: the job engine visits each
 * process's share of the ranks in every pass and exchanges what the pass produced (hta_job_dist,
 * allgather), so every process holds the whole job; process 0 prints.  Every other command, and a run the
 * rank plan cannot share, is process 0's alone.  The exit status is process 0's, given to every process.  docs/scaling.md. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hta/util.h"

#include "cli/cli.h"

int hta_cli_main(int argc, char **argv); /* src/cli/main.c, compiled for hta-mpi under this name */

static int g_rank, g_size;

/* Largest file first, each to the process with the fewest bytes so far (the lowest on a tie): every
 * process computes the same shares from the same plan, without a message. */
static hta_status share(const hta_rank_plan *p, size_t **which, size_t *n, hta_error *err) {
    size_t *ord = malloc((p->n ? p->n : 1) * sizeof *ord);
    uint64_t *load = calloc((size_t)g_size, sizeof *load);
    *which = malloc((p->n ? p->n : 1) * sizeof **which);
    *n = 0;
    if (!ord || !load || !*which) {
        free(ord), free(load), free(*which), *which = NULL;
        return hta_oom(err);
    }
    for (size_t i = 0; i < p->n; i++) ord[i] = i;
    size_t *who = malloc((p->n ? p->n : 1) * sizeof *who);
    if (!who) {
        free(ord), free(load), free(*which), *which = NULL;
        return hta_oom(err);
    }
    /* ord by bytes descending, index ascending on a tie: a stable merge sort (bottom-up, who[] as the
     * buffer), the same order in every process */
    for (size_t w = 1; w < p->n; w *= 2) {
        /* bottom-up merge sort through who[] as the buffer */
        for (size_t lo = 0; lo < p->n; lo += 2 * w) {
            size_t mid = lo + w < p->n ? lo + w : p->n, hi = lo + 2 * w < p->n ? lo + 2 * w : p->n;
            size_t a = lo, b = mid, k = lo;
            while (a < mid || b < hi) {
                int takea = b >= hi || (a < mid && p->files[ord[a]].bytes >= p->files[ord[b]].bytes);
                who[k++] = takea ? ord[a++] : ord[b++];
            }
        }
        memcpy(ord, who, p->n * sizeof *ord);
    }
    for (size_t k = 0; k < p->n; k++) {
        int best = 0;
        for (int q = 1; q < g_size; q++)
            if (load[q] < load[best]) best = q;
        load[best] += p->files[ord[k]].bytes + 1; /* +1: empty files still spread */
        who[ord[k]] = (size_t)best;
    }
    for (size_t i = 0; i < p->n; i++)
        if (who[i] == (size_t)g_rank) (*which)[(*n)++] = i;
    free(who), free(ord), free(load);
    return HTA_OK;
}

/* ---- the parts as bytes: per part its index, done flag, packed result and warnings; then the failure */
typedef hta_bytes out;

static void put(out *b, const void *x, size_t n) { hta_bytes_put(b, x, n); }
static void put_u64(out *b, uint64_t v) { hta_bytes_put_u64(b, v); }
static void put_str(out *b, const char *s) {
    put_u64(b, strlen(s));
    put(b, s, strlen(s));
}

typedef struct in {
    const char *p;
    size_t n, at;
    int bad;
} in;

static uint64_t get_u64(in *r) {
    uint64_t v = 0;
    if (r->bad || r->n - r->at < sizeof v) return r->bad = 1, 0;
    memcpy(&v, r->p + r->at, sizeof v);
    r->at += sizeof v;
    return v;
}
static const char *get_bytes(in *r, size_t n) {
    if (r->bad || r->n - r->at < n) return r->bad = 1, NULL;
    const char *x = r->p + r->at;
    r->at += n;
    return x;
}

static hta_status gather(cli_part *parts, size_t n, const cli_command *cmd, hta_status *st, size_t *failed,
                         int *in_load, hta_error *err) {
    out b = {0};
    hta_error perr = {0};
    hta_status ps = HTA_OK;
    if (g_rank != 0) {
        uint64_t cnt = 0;
        for (size_t i = 0; i < n; i++) cnt += parts[i].done || parts[i].nwarn;
        put_u64(&b, cnt);
        for (size_t i = 0; i < n && !ps; i++) {
            if (!parts[i].done && !parts[i].nwarn) continue;
            char *pk = NULL;
            size_t pl = 0;
            if ((ps = hta_result_pack(&parts[i].res, &pk, &pl, &perr))) break;
            put_u64(&b, i);
            put_u64(&b, (uint64_t)parts[i].done);
            put_u64(&b, pl);
            put(&b, pk, pl);
            free(pk);
            put_u64(&b, parts[i].nwarn);
            for (size_t w = 0; w < parts[i].nwarn; w++) put_str(&b, parts[i].warn[w]);
        }
        /* this process's failure: its own, or packing's */
        hta_status fs = *st ? *st : ps;
        put_u64(&b, (uint64_t)fs);
        put_u64(&b, *st ? (uint64_t)*failed : UINT64_MAX);
        put_u64(&b, (uint64_t)(*st ? *in_load : 0));
        put_str(&b, *st ? err->msg : perr.msg);
        if (b.oom) {
            /* nothing to send but the failure itself */
            b.n = 0, b.oom = 0;
            put_u64(&b, 0);
            put_u64(&b, HTA_ENOMEM);
            put_u64(&b, UINT64_MAX);
            put_u64(&b, 0);
            put_str(&b, "hta-mpi: out of memory packing the results");
        }
    }
    if (b.n > (size_t)INT32_MAX) {
        /* MPI counts are int: one process's parts must stay under 2 GiB */
        free(b.p);
        b.p = NULL, b.n = 0;
        put_u64(&b, 0);
        put_u64(&b, HTA_ENOMEM);
        put_u64(&b, UINT64_MAX);
        put_u64(&b, 0);
        put_str(&b, "hta-mpi: one process's results exceed 2 GiB: use more processes");
    }
    int len = (int)b.n;
    int *lens = NULL, *displs = NULL;
    char *all = NULL;
    if (g_rank == 0) {
        lens = calloc((size_t)g_size, sizeof *lens);
        displs = calloc((size_t)g_size, sizeof *displs);
    }
    MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
    size_t total = 0;
    if (g_rank == 0) {
        for (int q = 0; q < g_size; q++) displs[q] = (int)total, total += (size_t)lens[q];
        all = malloc(total ? total : 1);
    }
    MPI_Gatherv(b.p, len, MPI_BYTE, all, lens, displs, MPI_BYTE, 0, MPI_COMM_WORLD);
    free(b.p);
    if (g_rank != 0) return HTA_OK;
    hta_status rs = HTA_OK;
    for (int q = 1; q < g_size && !rs; q++) {
        in r = {all + displs[q], (size_t)lens[q], 0, 0};
        uint64_t cnt = get_u64(&r);
        for (uint64_t k = 0; k < cnt && !r.bad && !rs; k++) {
            uint64_t i = get_u64(&r), done = get_u64(&r), pl = get_u64(&r);
            const char *pk = get_bytes(&r, pl);
            if (r.bad || i >= n) break;
            cli_part *pt = &parts[i];
            pt->done = (int)done;
            rs = hta_result_unpack(pk, pl, cmd ? cmd->tables : NULL, &pt->res, err);
            uint64_t nw = get_u64(&r);
            for (uint64_t w = 0; w < nw && !r.bad && !rs; w++) {
                uint64_t l = get_u64(&r);
                const char *s = get_bytes(&r, l);
                char **q2 = s ? realloc(pt->warn, (pt->nwarn + 1) * sizeof *q2) : NULL;
                if (!q2) break;
                pt->warn = q2;
                if ((q2[pt->nwarn] = strndup(s, l))) pt->nwarn++;
            }
        }
        hta_status fs = (hta_status)get_u64(&r);
        uint64_t fi = get_u64(&r), fl = get_u64(&r), ml = get_u64(&r);
        const char *msg = get_bytes(&r, ml);
        if (r.bad && !rs) rs = hta_fail(err, HTA_EFORMAT, "hta-mpi: process %d sent damaged results", q);
        /* the run's failure is the one first in rank order, as one process would have met it */
        if (!rs && fs && (!*st || fi < *failed)) {
            *st = fs;
            *failed = fi;
            *in_load = (int)fl;
            snprintf(err->msg, sizeof err->msg, "%.*s", (int)ml, msg);
        }
    }
    free(all), free(lens), free(displs);
    return rs;
}

/* MPI counts are int: the bytes go in pieces of at most 1 GiB */
static hta_status bcast(char **bytes, size_t *len, hta_error *err) {
    uint64_t n = g_rank == 0 ? (uint64_t)*len : 0;
    MPI_Bcast(&n, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (g_rank != 0) {
        /* every process must take part in every piece: without memory there is no way on */
        if (!(*bytes = malloc(n ? n : 1))) MPI_Abort(MPI_COMM_WORLD, 1);
        *len = n;
    }
    for (uint64_t at = 0; at < n; at += (uint64_t)1 << 30) {
        uint64_t k = n - at < ((uint64_t)1 << 30) ? n - at : (uint64_t)1 << 30;
        MPI_Bcast(*bytes + at, (int)k, MPI_BYTE, 0, MPI_COMM_WORLD);
    }
    (void)err;
    return HTA_OK;
}

/* Every process's bytes to every process (the job engine's exchanges, hta_job_dist).  MPI counts and
 * displacements are int: the pieces go in rounds, each process giving at most INT_MAX / P bytes a round, so
 * that one round's whole stays an int. */
static hta_status allgather(const char *bytes, size_t len, char **all, size_t **lens, hta_error *err) {
    uint64_t mine = len, *n64 = malloc((size_t)g_size * sizeof *n64);
    int *cnt = malloc((size_t)g_size * sizeof *cnt), *displs = malloc((size_t)g_size * sizeof *displs);
    size_t *off = malloc((size_t)g_size * sizeof *off);
    *lens = malloc((size_t)g_size * sizeof **lens);
    /* every process must take part in every round: without memory there is no way on */
    if (!n64 || !cnt || !displs || !off || !*lens) MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Allgather(&mine, 1, MPI_UINT64_T, n64, 1, MPI_UINT64_T, MPI_COMM_WORLD);
    size_t total = 0;
    uint64_t most = 0;
    for (int q = 0; q < g_size; q++) {
        (*lens)[q] = (size_t)n64[q], off[q] = total, total += (size_t)n64[q];
        if (n64[q] > most) most = n64[q];
    }
    uint64_t chunk = (uint64_t)INT32_MAX / (uint64_t)g_size;
    if (chunk > (uint64_t)1 << 30) chunk = (uint64_t)1 << 30;
    char *buf = malloc(total ? total : 1);
    char *round = most > chunk ? malloc((size_t)(chunk * (uint64_t)g_size)) : NULL;
    if (!buf || (most > chunk && !round)) MPI_Abort(MPI_COMM_WORLD, 1);
    for (uint64_t at = 0; at < most || (at == 0 && most == 0); at += chunk) {
        int sum = 0;
        for (int q = 0; q < g_size; q++) {
            uint64_t left = n64[q] > at ? n64[q] - at : 0;
            cnt[q] = (int)(left < chunk ? left : chunk), displs[q] = sum, sum += cnt[q];
        }
        uint64_t me = len > at ? len - at : 0;
        /* one round: straight into place; several: through the round's buffer */
        if (!round) {
            for (int q = 0; q < g_size; q++) displs[q] = (int)off[q];
            MPI_Allgatherv(bytes, (int)(me < chunk ? me : chunk), MPI_BYTE, buf, cnt, displs, MPI_BYTE, MPI_COMM_WORLD);
            break;
        }
        MPI_Allgatherv(bytes + (me ? at : 0), (int)(me < chunk ? me : chunk), MPI_BYTE, round, cnt, displs, MPI_BYTE,
                       MPI_COMM_WORLD);
        for (int q = 0; q < g_size; q++) memcpy(buf + off[q] + at, round + displs[q], (size_t)cnt[q]);
    }
    free(round), free(n64), free(cnt), free(displs), free(off);
    *all = buf;
    (void)err;
    return HTA_OK;
}

/* critical-path --all-ranks: the job engine shares its passes among every process (hta_job_dist) */
static int everyone(int argc, char **argv) {
    if (argc < 2 || strcmp(argv[1], "critical-path")) return 0;
    for (int i = 2; i < argc; i++)
        if (!strcmp(argv[i], "--all-ranks")) return 1;
    return 0;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    /* process 0 writes the output; what the others would print it prints for them */
    if (g_rank != 0) {
        if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr)) MPI_Abort(MPI_COMM_WORLD, 1);
    }
    static cli_dist d;
    d.root = g_rank == 0;
    d.share = share;
    d.gather = gather;
    d.nproc = g_size;
    d.bcast = bcast;
    d.allgather = allgather;
    d.everyone = everyone(argc, argv);
    cli_distributor = &d;
    int rc = 0;
    if (g_rank == 0 || d.everyone || (argc > 1 && cli_is_per_rank(argv[1]))) rc = hta_cli_main(argc, argv);
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return rc;
}
