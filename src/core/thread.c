/* The thread registry and per-thread lifecycle. See thread.h for the
 * invariants: records are mmap'd, written by their own thread, pushed once
 * onto a lock-free list and never freed while the process runs. The upper
 * layers' parts are set up and torn down by their hooks (core/hooks.h),
 * which this file runs in rank order. */
#include "core/thread.h"

#include <errno.h>
#include <sched.h>
#include <pthread.h>
#include <unistd.h>

#include "core/hooks.h"
#include "core/phase.h"
#include "core/thread_tables.h"
#include "core/undirected.h"
#include "util/clock.h"
#include "util/pages.h"
#include "util/proc_numbers.h"
#include "util/run_delay.h"
#include "util/stack_bounds.h"

LB_TLS lb_thread_t *lb_self;
LB_TLS bool lb_thread_attaching;

/* Both written by each thread that attaches: one cache line. */
static struct {
    lb_thread_t *head; /* newest first, linked through next */
    uint32_t next_id;
} registry LB_FORK_WRITTEN;

static void registry_push(lb_thread_t *t)
{
    lb_thread_t *head = __atomic_load_n(&registry.head, __ATOMIC_ACQUIRE);
    do {
        t->next = head;
    } while (!__atomic_compare_exchange_n(&registry.head, &head, t, true, __ATOMIC_RELEASE,
                                          __ATOMIC_ACQUIRE));
}

/* A thread's tables block (core/thread_tables.h), its hot page written
 * first; NULL: each part maps its own. */
static void *tables_take(void)
{
    void *tables = lb_pages_alloc_recycled(LB_TT_BYTES);
    lb_thread_tables_write_first(tables);
    return tables;
}

lb_thread_t *lb_thread_attach(uintptr_t start_routine, uint32_t creator_id, uint32_t creator_node)
{
    int saved_errno = errno;
    lb_thread_attaching = true;
    pid_t tid = gettid();
    /* the sampler and sampler/foreign.h read them */
    lb_stack_bounds_init(tid == lb_runtime_pid());
    lb_thread_t *t = lb_arena_alloc_lines(sizeof *t);
    if (t)
        t->tables = tables_take();
    if (!t || lb_hooks_thread(LB_THREAD_INIT, t) != 0) {
        lb_thread_attaching = false;
        errno = saved_errno;
        return NULL; /* a record from the arena is simply not used */
    }
    t->id = __atomic_fetch_add(&registry.next_id, 1, __ATOMIC_RELAXED);
    t->tid = tid;
    t->os_tid = t->tid;
    t->handle = (uintptr_t)pthread_self();
    t->start_routine = start_routine;
    t->creator_id = creator_id;
    t->creator_node = creator_node;
    t->start_ns = lb_now_ns();
    registry_push(t);
    lb_undirected_thread_live(1);
    lb_self = t;
    lb_thread_attaching = false;
    lb_hooks_thread(LB_THREAD_START, t);
    errno = saved_errno;
    return t;
}

lb_thread_t *lb_thread_attach_foreign(const lb_thread_t *creator, pid_t os_tid,
                                      uintptr_t start_routine, uintptr_t stack_lo,
                                      uintptr_t stack_hi)
{
    int saved_errno = errno;
    lb_thread_t *t = lb_arena_alloc_lines(sizeof *t);
    if (t)
        t->tables = tables_take();
    if (!t || lb_hooks_thread(LB_THREAD_INIT, t) != 0) {
        errno = saved_errno;
        return NULL;
    }
    t->id = __atomic_fetch_add(&registry.next_id, 1, __ATOMIC_RELAXED);
    t->tid = creator->tid;
    t->os_tid = os_tid;
    t->foreign = true;
    t->stack_lo = stack_lo;
    t->stack_hi = stack_hi;
    t->start_routine = start_routine;
    t->creator_id = creator->id;
    t->start_ns = lb_now_ns();
    registry_push(t);
    lb_hooks_thread(LB_THREAD_START_FOREIGN, t);
    errno = saved_errno;
    return t;
}

/* Set once the final write starts; compaction then stops (see freeze). */
static uint32_t frozen LB_FORK_WRITTEN;

/* Move an exited thread's tables into right-sized arena memory. The
 * writer must not read them meanwhile: `compacting` and `frozen` form a
 * Dekker pair (both sides store, then load the other's flag, seq_cst). */
static uint32_t tables_held; /* lb_thread_hold_tables: a reader of live tables */

static void compact(lb_thread_t *t)
{
    __atomic_store_n(&t->compacting, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&tables_held, __ATOMIC_SEQ_CST)) {
        __atomic_store_n(&t->compacting, 0, __ATOMIC_SEQ_CST);
        while (__atomic_load_n(&tables_held, __ATOMIC_SEQ_CST))
            sched_yield(); /* a copy of the CCTs: milliseconds */
        __atomic_store_n(&t->compacting, 1, __ATOMIC_SEQ_CST);
    }
    if (!__atomic_load_n(&frozen, __ATOMIC_SEQ_CST))
        lb_hooks_thread(LB_THREAD_COMPACT, t);
    __atomic_store_n(&t->compacting, 0, __ATOMIC_SEQ_CST);
}

void lb_thread_detach(lb_thread_t *self)
{
    int saved_errno = errno;
    /* The thread's CPU clock read once for its end: the stop hooks take
     * it from cpu_ns (the sampler's credit of unsampled time). */
    self->cpu_ns = lb_thread_cpu_ns() - self->cpu_base_ns;
    lb_hooks_thread(LB_THREAD_STOP, self);
    self->end_ns = lb_now_ns();
    self->run_delay_ns = UINT64_MAX;
    /* The run delay tells a thread that was off CPU because the CPUs were
     * busy from one blocked where lockblame does not look (report/writer
     * tables.c). Read only when the thread was off CPU long enough for
     * it to matter: a thread that exits at once pays no /proc read. The
     * waits it was seen in do not lower the bound here: they are summed
     * only at the write, and the delay also shortens the thread's way out
     * of a parked wait (report/writer structural_write.c), which they do
     * not bound. */
    if (self->end_ns - self->start_ns > self->cpu_ns + LB_RUN_DELAY_MIN_UNSEEN_NS)
        lb_run_delay_ns(0, &self->run_delay_ns);
    /* From here this thread's remaining lock calls (TLS destructors) go
     * straight to glibc, so its tables have no writer but a joiner. */
    lb_self = NULL;
    lb_undirected_thread_live(-1);
    compact(self);
    __atomic_store_n(&self->exited, true, __ATOMIC_RELEASE);
    errno = saved_errno;
}

void lb_thread_freeze(void)
{
    __atomic_store_n(&frozen, 1, __ATOMIC_SEQ_CST);
    for (lb_thread_t *t = lb_thread_registry(); t; t = t->next) {
        while (__atomic_load_n(&t->compacting, __ATOMIC_SEQ_CST))
            sched_yield();
    }
}

void lb_thread_hold_tables(void)
{
    __atomic_store_n(&tables_held, 1, __ATOMIC_SEQ_CST);
    for (lb_thread_t *t = lb_thread_registry(); t; t = t->next) {
        while (__atomic_load_n(&t->compacting, __ATOMIC_SEQ_CST))
            sched_yield();
    }
}

void lb_thread_release_tables(void)
{
    __atomic_store_n(&tables_held, 0, __ATOMIC_SEQ_CST);
}

lb_thread_t *lb_thread_registry(void)
{
    return __atomic_load_n(&registry.head, __ATOMIC_ACQUIRE);
}

uint32_t lb_thread_count(void)
{
    return __atomic_load_n(&registry.next_id, __ATOMIC_RELAXED);
}

void lb_thread_after_fork_child(lb_thread_t *self)
{
    /* Only the forking thread exists in the child. Its old records stay
     * readable for nobody; start a fresh registry holding just self. */
    self->next = NULL;
    self->tid = lb_own_pid(); /* the child's only thread leads it: tid = pid */
    self->os_tid = self->tid;
    /* The child's thread begins here: its CPU clock and scheduler
     * statistics start from zero at the fork, so its lifetime must too
     * (report/writer tables.c: thread.start_s and unseen_s), and nothing
     * of its clock is the parent's start (cpu_base_ns). */
    self->start_ns = lb_now_ns();
    self->cpu_base_ns = 0;
    __atomic_store_n(&registry.head, self, __ATOMIC_RELEASE);
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
