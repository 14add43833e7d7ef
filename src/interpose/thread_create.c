/* Threads start in lb_thread_trampoline, which attaches an lb_thread,
 * runs the start routine, and detaches on return, pthread_exit or
 * cancellation (cleanup handler).
 *
 * Invariants: the start block is malloc'd by the creator and freed by the
 * new thread (or by the creator if creation failed). The creator's context
 * is recorded once per create, outside any lock. */
#include "interpose/thread_create.h"

#include <errno.h>
#include <stdlib.h>

#include "core/hooks.h"
#include "core/real.h"
#include "core/phase.h"
#include "core/thread.h"
#include "core/whatif.h"
#include "sampler/cct.h"
#include "sampler/unwind.h"
#include "util/stack_bounds.h"

typedef struct lb_start {
    void *(*fn)(void *);
    void *arg;
    uint32_t creator_id;
    uint32_t creator_node;
    uint64_t whatif_local; /* the creator's what-if count (core/whatif.h) */
} lb_start_t;

static void detach_cleanup(void *self)
{
    lb_thread_detach(self);
}

/* The trampoline sits alone in section lb_thread_root, whose bounds the
 * linker provides: unwinding stops there, dropping libc's thread start. */
__attribute__((section("lb_thread_root"), noinline)) static void *lb_thread_trampoline(void *p)
{
    lb_start_t start = *(lb_start_t *)p;
    free(p);
    if (lb_whatif_on)
        lb_whatif_thread_begin(start.whatif_local);
    lb_stack_bounds_init(); /* the sampler skips samples where too little is left */
    lb_thread_t *self = lb_thread_attach((uintptr_t)start.fn, start.creator_id, start.creator_node);
    if (!self)
        return start.fn(start.arg);
    void *ret;
    pthread_cleanup_push(detach_cleanup, self);
    ret = start.fn(start.arg);
    pthread_cleanup_pop(1);
    return ret;
}

/* The creator's calling context, as a node id in its own CCT. */
static uint32_t creator_context(lb_thread_t *self)
{
    if (!self || !self->cct)
        return 0;
    lb_enter(self);
    uintptr_t pcs[LB_MAX_DEPTH];
    int n = lb_unwind_here(pcs, LB_MAX_DEPTH);
    uint32_t node = lb_cct_id(self->cct, lb_cct_insert(self->cct, pcs, n));
    lb_leave(self);
    return node;
}

int lb_thread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *), void *arg,
                     uintptr_t site)
{
    lb_thread_t *self = lb_self;
    if (!lb_runtime_monitoring() || (self && self->busy))
        return lb_real.create(thread, attr, fn, arg);
    int saved_errno = errno;
    lb_start_t *start = malloc(sizeof *start);
    errno = saved_errno;
    if (!start)
        return lb_real.create(thread, attr, fn, arg);
    start->fn = fn;
    start->arg = arg;
    start->creator_id = self ? self->id : 0;
    start->creator_node = creator_context(self);
    start->whatif_local = lb_whatif_on ? lb_whatif_local() : 0;
    int rc = lb_real.create(thread, attr, lb_thread_trampoline, start);
    if (rc != 0)
        free(start);
    return rc;
}

extern char __start_lb_thread_root[], __stop_lb_thread_root[];

/* At start: the unwinder stops at the trampoline, the root of every
 * thread's stack. */
static void thread_create_setup(void)
{
    lb_unwind_set_stop_range((uintptr_t)__start_lb_thread_root, (uintptr_t)__stop_lb_thread_root);
}

LB_PROCESS_HOOKS(thread_create_hooks) = {
    .rank = LB_RANK_INTERPOSE,
    .setup = thread_create_setup,
};
