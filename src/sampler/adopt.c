/* Adopting threads that lockblame did not start (adopt.h). */
#include "sampler/adopt.h"

#include "core/hooks.h"
#include "core/phase.h"
#include "sampler/cct.h"
#include "sampler/unwind.h"

/* glibc's registration of a thread's exit destructor (what C++
 * thread_local destructors use): no pthread key is taken from the
 * program's PTHREAD_KEYS_MAX. */
extern int __cxa_thread_atexit_impl(void (*fn)(void *), void *arg, void *dso);
extern void *__dso_handle;
static LB_TLS bool adopting;   /* adopting now, or the thread's record is detached */
static LB_TLS bool own_thread; /* one of lockblame's own threads: never adopted */

static void adopted_thread_ends(void *t)
{
    if (t == lb_self)
        lb_thread_detach(t);
}

/* A thread's record is detached (its end): the pthread calls of its last
 * moments (other thread-key destructors, C++ thread_local destructors)
 * must not adopt it again. */
static void thread_retires(lb_thread_t *t)
{
    (void)t;
    adopting = true;
}

/* The thread's start routine: on its stack, the frame just inside libc's
 * thread start (start_thread, then clone3 or clone, are the outermost two
 * frames of a pthread's stack); a return address in it, which names the
 * function. 0 when the walk does not reach that far. */
static uintptr_t start_routine_here(void)
{
    uintptr_t pcs[LB_MAX_DEPTH];
    int n = lb_unwind_here(pcs, LB_MAX_DEPTH);
    return n >= 3 ? pcs[n - 3] : 0;
}

lb_thread_t *lb_thread_adopt(void)
{
    if (lb_self || adopting || own_thread || lb_thread_attaching || !lb_runtime_monitoring())
        return lb_self;
    adopting = true;
    uintptr_t start = start_routine_here();
    lb_thread_t *self = lb_thread_attach(start, 0, 0);
    if (self)
        __cxa_thread_atexit_impl(adopted_thread_ends, self, &__dso_handle);
    adopting = false;
    return self;
}

void lb_thread_never_adopt(void)
{
    own_thread = true;
}

LB_THREAD_HOOKS(adopt_thread_hooks) = {
    .rank = LB_RANK_SAMPLER,
    .stop = thread_retires,
};
