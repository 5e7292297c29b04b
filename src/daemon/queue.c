/* The store thread's queue: htad_tick (registry.c) puts a finished trace or capture on it under `mu`, the
 * store thread (store.c) takes them one at a time.  A queue of its own, so that the registry hands work to
 * the store without calling the store, which reads the registry. */
#include <pthread.h>
#include <stdio.h>

#include "daemon/htad.h"

#define QMAX 1024
static htad_job g_q[QMAX];
static size_t g_qh, g_qn;
static int g_stop, g_busy;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t g_qmu = PTHREAD_MUTEX_INITIALIZER;

void htad_store_enqueue(const char *capture_id, size_t idx) {
    pthread_mutex_lock(&g_qmu);
    if (g_qn < QMAX) {
        htad_job *j = &g_q[(g_qh + g_qn++) % QMAX];
        snprintf(j->id, sizeof j->id, "%s", capture_id);
        j->idx = idx;
        pthread_cond_broadcast(&g_cv);
    }
    pthread_mutex_unlock(&g_qmu);
}

int htad_queue_take(htad_job *j) {
    pthread_mutex_lock(&g_qmu);
    while (!g_qn && !g_stop) pthread_cond_wait(&g_cv, &g_qmu);
    if (!g_qn) { /* stopping, and nothing left */
        pthread_mutex_unlock(&g_qmu);
        return 0;
    }
    *j = g_q[g_qh];
    g_qh = (g_qh + 1) % QMAX;
    g_qn--;
    g_busy = 1;
    pthread_mutex_unlock(&g_qmu);
    return 1;
}

void htad_queue_done(void) {
    pthread_mutex_lock(&g_qmu);
    g_busy = 0;
    pthread_cond_broadcast(&g_cv);
    pthread_mutex_unlock(&g_qmu);
}

void htad_store_drain(void) {
    pthread_mutex_lock(&g_qmu);
    while (g_qn || g_busy) pthread_cond_wait(&g_cv, &g_qmu);
    pthread_mutex_unlock(&g_qmu);
}

void htad_queue_stop(void) {
    pthread_mutex_lock(&g_qmu);
    g_stop = 1;
    pthread_cond_signal(&g_cv);
    pthread_mutex_unlock(&g_qmu);
}
