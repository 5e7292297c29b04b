/* The rank plan (hta/trace.h): lists a path as the loader does, probes each file's head for its rank,
 * and says whether the files can be loaded one at a time (the per-rank iteration of the run context). */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hta/trace.h"
#include "hta/util.h"
#include "trace/listing.h"

/* warnings of the listing are kept, not given: the caller gives them only if it uses the plan (the
 * whole load lists the folder again and gives its own) */
static void keep_warning(void *ctx, const char *msg) {
    hta_rank_plan *p = ctx;
    (void)hta_strlist_add(&p->warnings, &p->nwarnings, "%s", msg); /* lost to a full memory: so is the plan */
}

static int by_rank(const void *a, const void *b) {
    const hta_rank_file *x = a, *y = b;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

static int wanted(const int32_t *only, size_t nonly, int32_t rank) {
    if (!only) return 1;
    for (size_t i = 0; i < nonly; i++)
        if (only[i] == rank) return 1;
    return 0;
}

hta_status hta_rank_plan_make(const char *path, const int32_t *only, size_t nonly, hta_rank_plan *p,
                              hta_error *err) {
    memset(p, 0, sizeof *p);
    hta_load_opts lo = {0};
    lo.warn = keep_warning;
    lo.warn_ctx = p;
    char **files = NULL;
    size_t nf = 0;
    hta_status st = hta_list_rank_files(path, &lo, &files, &nf, err);
    if (st) goto out;
    struct stat sb;
    p->per_rank = 1;
    /* a single file is parsed whole anyway, and may be a merged trace whose head says nothing */
    if (stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode)) p->per_rank = 0, p->why = "a single file";
    if (!(p->files = calloc(nf ? nf : 1, sizeof *p->files))) {
        st = hta_oom(err);
        goto out;
    }
    size_t nsel = 0;
    for (size_t i = 0; i < nf && p->per_rank; i++) {
        int merged = 0;
        int64_t r = hta_probe_rank(files[i], &merged);
        if (r < 0) p->per_rank = 0, p->why = "a file whose head does not name its rank";
        else if (merged) p->per_rank = 0, p->why = "a merged trace";
        else if (wanted(only, nonly, (int32_t)r)) {
            struct stat fs;
            hta_rank_file *f = &p->files[nsel++];
            f->rank = (int32_t)r;
            f->bytes = stat(files[i], &fs) == 0 ? (uint64_t)fs.st_size : 0;
            f->path = files[i];
            files[i] = NULL;
        }
    }
    p->n = nsel;
    qsort(p->files, p->n, sizeof *p->files, by_rank);
    for (size_t i = 1; i < p->n && p->per_rank; i++)
        if (p->files[i].rank == p->files[i - 1].rank) p->per_rank = 0, p->why = "two files claim one rank";
    if (p->per_rank && p->n == 0)
        st = hta_fail(err, HTA_ENODATA, "%s: none of the requested ranks is in the trace", path);
out:
    for (size_t i = 0; i < nf; i++) free(files[i]);
    free(files);
    return st;
}

int hta_file_claims_rank(const char *path) {
    int merged = 0;
    return hta_probe_rank(path, &merged) >= 0 || merged;
}

void hta_rank_plan_free(hta_rank_plan *p) {
    for (size_t i = 0; i < p->n; i++) free(p->files[i].path);
    free(p->files);
    for (size_t i = 0; i < p->nwarnings; i++) free(p->warnings[i]);
    free(p->warnings);
    memset(p, 0, sizeof *p);
}
