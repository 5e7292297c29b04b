/* fork(): the child must not inherit a lock another thread held (a flush in
 * progress would leave the global lock taken forever: the child hangs in its
 * exit flush), nor the parent's events (it would write them again as its
 * own, under its own pid).
 *
 * prepare takes every lock of the library, so the fork waits for a flush in
 * progress to finish (flushes starting meanwhile yield to it); the parent
 * then releases them.  The child, the only thread left, drops every thread's
 * buffer, forgets the files the parent wrote (so it never replaces them), and
 * releases the locks: it starts empty, recording under its own pid and tid.
 * CUDA cannot be used in a fork child: its GPU scopes are CPU-only.
 */
#include <sched.h>

#include "internal.h"

static _Atomic int fork_pending;

void htat_fork_wait(void)
{
    while (atomic_load_explicit(&fork_pending, memory_order_acquire))
        sched_yield();
}

static void prepare(void)
{
    atomic_fetch_add(&fork_pending, 1);
    pthread_mutex_lock(&htat_g.mu);
    pthread_mutex_lock(&htat_intern_mu);
    htat_gpu_fork_prepare();
}

static void parent(void)
{
    htat_gpu_fork_parent();
    pthread_mutex_unlock(&htat_intern_mu);
    pthread_mutex_unlock(&htat_g.mu);
    atomic_fetch_sub(&fork_pending, 1);
}

static void child(void)
{
    htat_gpu_fork_child();
    atomic_fetch_add(&htat_gen, 1); /* this thread's cached buffer is stale */
    htat_tls = NULL;
    htat_threads_free_all();        /* the other threads do not exist here */
    atomic_store(&htat_g.recorded, 0);
    htat_g.clean = 0;
    htat_owned_clear();
    pthread_mutex_unlock(&htat_intern_mu);
    pthread_mutex_unlock(&htat_g.mu);
    atomic_store(&fork_pending, 0);
}

void htat_fork_register(void)
{
    pthread_atfork(prepare, parent, child);
}
