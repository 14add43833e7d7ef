/* The thread registry and per-thread lifecycle. See thread.h for the
 * invariants: records are mmap'd, written by their own thread, pushed once
 * onto a lock-free list and never freed while the process runs. */
#include "interpose/thread.h"

#include <errno.h>
#include <pthread.h>
#include <unistd.h>

#include "blame/object_stats.h"
#include "locks/monitored.h"
#include "util/clock.h"
#include "util/pages.h"

LB_TLS lb_thread_t *lb_self;

static lb_thread_t *registry;
static uint32_t next_id;

static void registry_push(lb_thread_t *t)
{
    lb_thread_t *head = __atomic_load_n(&registry, __ATOMIC_ACQUIRE);
    do {
        t->next = head;
    } while (!__atomic_compare_exchange_n(&registry, &head, t, true, __ATOMIC_RELEASE,
                                          __ATOMIC_ACQUIRE));
}

lb_thread_t *lb_thread_attach(uintptr_t start_routine, uint32_t creator_id,
                              uint32_t creator_node)
{
    int saved_errno = errno;
    lb_thread_t *t = lb_pages_alloc(sizeof *t);
    if (!t) {
        errno = saved_errno;
        return NULL;
    }
    t->cct = lb_pages_alloc(sizeof *t->cct);
    if (t->cct && lb_cct_init(t->cct) != 0) {
        lb_pages_free(t->cct, sizeof *t->cct);
        t->cct = NULL;
    }
    t->id = __atomic_fetch_add(&next_id, 1, __ATOMIC_RELAXED);
    t->tid = gettid();
    t->handle = (uintptr_t)pthread_self();
    t->start_routine = start_routine;
    t->creator_id = creator_id;
    t->creator_node = creator_node;
    t->start_ns = lb_now_ns();
    t->sampler.perf_fd = -1;
    registry_push(t);
    lb_self = t;
    lb_mon_cache_enable();
    lb_object_totals_bind(t->retired_acquisitions);
    lb_sampler_thread_start(t);
    errno = saved_errno;
    return t;
}

void lb_thread_detach(lb_thread_t *self)
{
    int saved_errno = errno;
    lb_sampler_thread_stop(self);
    lb_mon_cache_flush();
    self->cpu_ns = lb_thread_cpu_ns();
    self->end_ns = lb_now_ns();
    __atomic_store_n(&self->exited, true, __ATOMIC_RELEASE);
    errno = saved_errno;
}

lb_thread_t *lb_thread_registry(void)
{
    return __atomic_load_n(&registry, __ATOMIC_ACQUIRE);
}

uint32_t lb_thread_count(void)
{
    return __atomic_load_n(&next_id, __ATOMIC_RELAXED);
}

void lb_thread_after_fork_child(lb_thread_t *self)
{
    /* Only the forking thread exists in the child. Its old records stay
     * readable for nobody; start a fresh registry holding just self. */
    self->next = NULL;
    self->tid = gettid();
    __atomic_store_n(&registry, self, __ATOMIC_RELEASE);
}

lb_thread_t *lb_thread_find_exited(uintptr_t handle)
{
    for (lb_thread_t *t = lb_thread_registry(); t; t = t->next) {
        /* Newest first; a handle reused by a live thread is skipped. */
        if (t->handle == handle && __atomic_load_n(&t->exited, __ATOMIC_ACQUIRE))
            return t;
    }
    return NULL;
}
