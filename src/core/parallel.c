/* Worker threads for work split into items (hta/util.h, hta_parallel): the one place that decides how many
 * threads a run takes and starts and joins them.  The workers share the items through a counter of their
 * own, so a thread that cannot be started only leaves its share to the others. */
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "hta/util.h"

#define HTA_MAX_THREADS 64

size_t hta_threads(int threads) {
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    return threads > 0 ? (size_t)threads : (size_t)(ncpu > 0 ? ncpu : 1);
}

size_t hta_parallel(int threads, size_t items, void *(*worker)(void *), void *arg) {
    size_t nth = hta_threads(threads);
    if (nth > items) nth = items;
    if (nth > HTA_MAX_THREADS) nth = HTA_MAX_THREADS;
    if (!nth) return 0;
    pthread_t th[HTA_MAX_THREADS];
    size_t started = 0;
    for (size_t i = 1; i < nth; i++)
        if (pthread_create(&th[started], NULL, worker, arg) == 0) started++;
    worker(arg);
    for (size_t i = 0; i < started; i++) pthread_join(th[i], NULL);
    return started + 1;
}

typedef struct items {
    atomic_size_t next;
    size_t n;
    void (*item)(void *arg, size_t k);
    void *arg;
} items;

static void *take_items(void *arg) {
    items *it = arg;
    for (size_t k; (k = atomic_fetch_add(&it->next, 1)) < it->n;) it->item(it->arg, k);
    return NULL;
}

size_t hta_parallel_items(int threads, size_t n, void (*item)(void *arg, size_t k), void *arg) {
    items it = {.n = n, .item = item, .arg = arg};
    atomic_init(&it.next, 0);
    return hta_parallel(threads, n, take_items, &it);
}
