/* Prints everything the loader builds from PATH, in one canonical text (the symbol table in id order,
 * every rank's fields, rows with every column, args, flows, threads, streams, metadata): the split load's
 * test (tests/loader/test_split.py) compares it between one thread and several, byte for byte.
 *   dump_model PATH THREADS */
#include <stdio.h>
#include <stdlib.h>

#include "hta/trace.h"

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: dump_model PATH THREADS\n");
        return 2;
    }
    hta_load_opts o = {0};
    o.threads = atoi(argv[2]);
    hta_trace *t;
    hta_error err;
    if (hta_trace_load(argv[1], &o, &t, &err)) {
        printf("error %d: %s\n", (int)err.code, err.msg);
        return 1;
    }
    uint32_t ns = hta_symtab_count(t->sym);
    for (uint32_t i = 0; i < ns; i++) printf("sym %u %zu %s\n", i, hta_sym_len(t->sym, i), hta_sym(t->sym, i));
    for (size_t i = 0; i < t->ncats; i++) printf("cat %zu %u\n", i, t->cats[i]);
    for (size_t k = 0; k < t->nranks; k++) {
        const hta_rank *r = t->ranks[k];
        printf("rank %d %s ws=%lld base=%lld t=%lld..%lld tsf=%d dni=%d pt=%d tt=%d in=%llu json=%llu "
               "events=%llu ev=%llu..%llu merged=%d rows=%zu args=%zu\n",
               r->rank, r->rank_source, (long long)r->world_size, (long long)r->base_time_ns,
               (long long)r->t_min, (long long)r->t_max, r->ts_fractional, r->dur_not_int, r->pid_text,
               r->tid_text, (unsigned long long)r->bytes_in, (unsigned long long)r->bytes_json,
               (unsigned long long)r->n_events, (unsigned long long)r->ev_begin, (unsigned long long)r->ev_end,
               r->merged, r->n, r->nargs);
        for (size_t i = 0; i < r->n; i++) {
            printf("row %zu ts=%lld dur=%lld corr=%lld ext=%lld name=%u th=%u idx=%u cat=%u st=%u "
                   "partner=%d parent=%d depth=%d iter=%d args=",
                   i, (long long)r->ts[i], (long long)r->dur[i], (long long)r->correlation[i],
                   (long long)r->external_id[i], r->name[i], r->thread[i], r->index[i], r->cat[i], r->stream[i],
                   r->partner[i], r->parent[i], r->depth[i], r->iteration[i]);
            for (uint32_t a = r->args_off[i]; a < r->args_off[i + 1]; a++) {
                const hta_arg *g = &r->args[a];
                if (g->type == HTA_V_INT) printf(" %u:i%lld", (unsigned)g->key, (long long)g->v.i);
                else if (g->type == HTA_V_FLOAT) printf(" %u:f%.17g", (unsigned)g->key, g->v.f);
                else printf(" %u:%u/%u", (unsigned)g->key, (unsigned)g->type, g->v.sym);
            }
            printf("\n");
        }
        for (size_t i = 0; i < r->nflows; i++) {
            const hta_flow *f = &r->flows[i];
            printf("flow %lld %u %u %u %c %d\n", (long long)f->id, f->index, f->thread, f->cat, f->ph,
                   f->bp_enclosing);
        }
        for (size_t i = 0; i < r->nthreads; i++) {
            const hta_thread *h = &r->threads[i];
            printf("thread %lld %lld %lld %lld %lld %lld\n", (long long)h->pid, (long long)h->tid,
                   (long long)h->pid_sym, (long long)h->tid_sym, (long long)h->thread_name,
                   (long long)h->process_name);
        }
        for (size_t i = 0; i < r->nstreams; i++) printf("stream %lld\n", (long long)r->streams[i]);
        for (size_t i = 0; i < r->nmeta; i++) printf("meta %s = %s\n", r->meta[i].key, r->meta[i].json);
    }
    hta_trace_free(t);
    return 0;
}
