/* lockblame's process lifecycle: start in the constructor (or at first
 * use), finish once (destructor, fatal signal (interpose/fatal_signals.c),
 * exec), fork handling. Each
 * step runs the layers' process hooks (core/hooks.h); this file only
 * orders them around core's own state (phase, registry).
 *
 * Invariants: lb_runtime_phase only moves OFF -> STARTING -> RUNNING ->
 * FINISHED (a fork child goes back to RUNNING). Finishing is claimed with
 * one CAS, so exactly one thread writes the profile. */
#include "core/runtime.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/hooks.h"
#include "core/real.h"
#include "core/thread.h"
#include "core/undirected.h"
#include "util/own_stack.h"
#include "util/pages.h"
#include "util/stack_bounds.h"

typedef struct {
    const char *reason;
    lb_thread_t *self;
} finish_args_t;

static void run_finish_hooks(void *p)
{
    finish_args_t *a = p;
    lb_hooks_process(LB_PROCESS_FINISH, a->reason, a->self);
}

static pid_t own_pid; /* getpid() at start or fork; a vfork child differs */

bool lb_runtime_is_own_process(void)
{
    return getpid() == __atomic_load_n(&own_pid, __ATOMIC_RELAXED);
}

void lb_runtime_finish(const char *reason)
{
    int expected = LB_PHASE_RUNNING;
    if (!__atomic_compare_exchange_n(&lb_runtime_phase, &expected, LB_PHASE_FINISHED, false,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return;
    int saved_errno = errno;
    lb_thread_t *self = lb_self;
    if (self)
        lb_enter(self); /* our own sqlite/malloc locking goes straight to glibc */
    lb_hooks_process(LB_PROCESS_QUIESCE, reason, self);
    lb_thread_freeze();
    /* The writer (libdw, SQLite) needs far more stack than the thread that
     * ends the process may have (a 16 KiB stack of the program's). */
    finish_args_t args = { reason, self };
    if (lb_call_on_own_stack(run_finish_hooks, &args, LB_OWN_STACK_SIZE) != 0)
        run_finish_hooks(&args);
    if (self)
        lb_leave(self);
    errno = saved_errno;
}

static void before_fork(void)
{
    lb_hooks_process(LB_PROCESS_FORK_PREPARE, NULL, NULL);
    lb_arena_fork_prepare();
}

static void after_fork_parent(void)
{
    lb_arena_fork_done();
    lb_hooks_process(LB_PROCESS_FORK_PARENT, NULL, NULL);
}

static void after_fork_child(void)
{
    lb_arena_fork_done();
    lb_thread_t *self = lb_self;
    if (__atomic_load_n(&lb_runtime_phase, __ATOMIC_ACQUIRE) != LB_PHASE_RUNNING)
        self = NULL;
    /* The hooks first: the sampler closes the events inherited from the
     * other threads, which it finds through the registry about to be
     * pruned. */
    lb_hooks_process(LB_PROCESS_FORK_CHILD, NULL, self);
    if (!self)
        return;
    lb_thread_after_fork_child(self);
    lb_undirected_after_fork();
    __atomic_store_n(&own_pid, getpid(), __ATOMIC_RELAXED);
}

void lb_runtime_start(void)
{
    int expected = LB_PHASE_OFF;
    if (!__atomic_compare_exchange_n(&lb_runtime_phase, &expected, LB_PHASE_STARTING, false,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return;
    int saved_errno = errno;
    lb_real_resolve();
    lb_runtime_stamp_start();
    own_pid = getpid();
    lb_hooks_process(LB_PROCESS_SETUP, NULL, NULL);
    /* The main thread; later threads attach in the create trampoline. */
    lb_stack_bounds_init();
    lb_thread_attach(0, 0, 0);
    pthread_atfork(before_fork, after_fork_parent, after_fork_child);
    __atomic_store_n(&lb_runtime_phase, LB_PHASE_RUNNING, __ATOMIC_RELEASE);
    errno = saved_errno;
}

__attribute__((constructor)) static void lb_constructor(void)
{
    if (getenv("LOCKBLAME_DISABLE"))
        return;
    lb_runtime_start();
}

__attribute__((destructor)) static void lb_destructor(void)
{
    lb_runtime_finish("exit");
}
