/* lockblame's process lifecycle: start in the constructor (or at first
 * use), finish once (destructor, fatal signal (interpose/fatal_signals.c),
 * exec), fork handling. Each
 * step runs the layers' process hooks (core/hooks.h); this file only
 * orders them around core's own state (phase, registry). A running
 * process's first fork reserves the exit write's stack, untouched, which
 * its children inherit and its and their finish take (util/own_stack.h).
 *
 * Invariants: lb_runtime_phase only moves OFF -> STARTING -> RUNNING ->
 * FINISHED (a fork child goes back to RUNNING). Finishing is claimed with
 * one CAS, so exactly one thread writes the profile; the signals that end
 * processes are held on it meanwhile, and an _exit on another thread
 * waits for the write (lb_runtime_wait_finished). */
#include "core/runtime.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/hooks.h"
#include "core/real.h"
#include "core/thread.h"
#include "util/clock.h"
#include "util/env.h"
#include "common/go_program.h"
#include "util/kernel_sigmask.h"
#include "util/log.h"
#include "util/next_symbol.h"
#include "common/scratch.h"
#include "core/undirected.h"
#include "util/own_stack.h"
#include "util/pages.h"
#include "util/proc_numbers.h"
#include "util/raw_syscall.h"

/* The exit write's stack and, above it, its scratch memory's first chunk
 * (report/writer/writer.c), on the page table of the stack's top: the
 * writer (libdw, SQLite) needs far more stack than the thread that ends
 * the process may have (a 16 KiB stack of the program's). */
#define LB_FINISH_STACK LB_OWN_STACK_SIZE
#define LB_FINISH_AREA  LB_SCRATCH_CHUNK

typedef struct {
    const char *reason;
    lb_thread_t *self;
} finish_args_t;

static void run_finish_hooks(void *p)
{
    finish_args_t *a = p;
    lb_hooks_process(LB_PROCESS_FINISH, a->reason, a->self);
}

static lb_thread_t *initial_thread; /* written at start, and cleared in a fork child */

lb_thread_t *lb_runtime_initial_thread(void)
{
    return initial_thread;
}

bool lb_runtime_is_own_process(void)
{
    return getpid() == lb_runtime_pid();
}

/* Written together by the thread that ends the process, read together by
 * another that ends it meanwhile: one cache line. */
static struct {
    pid_t tid; /* the thread that writes the profile, once claimed */
    int done;  /* 1 once its finish hooks ran */
} finishing LB_FORK_WRITTEN;

/* The signals a program may send or handle to end a process (SIGQUIT,
 * SIGTERM, ...): held back on the finishing thread while the profile is
 * written, so that a handler that calls _exit (a server's immediate
 * shutdown) does not end the process mid-write; delivered when the write
 * is done. The synchronous faults stay deliverable (a crash in the writer
 * is handled as one), and so do glibc's own two signals (cancellation and
 * setxid, 32 and 33), which its sigfillset leaves out too. The mask is the
 * kernel's (util/kernel_sigmask.h), built without a call into libc. */
static void hold_signals(sigset_t *before)
{
    uint64_t held = ~(uint64_t)0;
    const int kept[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS, SIGABRT, 32, 33 };
    for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++)
        held &= ~lb_sig_bit(kept[i]);
    lb_raw_syscall(SYS_rt_sigprocmask, SIG_BLOCK, (long)&held, (long)before,
                   LB_KERNEL_SIGMASK_BYTES, 0, 0);
}

void lb_runtime_wait_finished(void)
{
    pid_t writer = __atomic_load_n(&finishing.tid, __ATOMIC_ACQUIRE);
    if (!writer || writer == (pid_t)lb_raw_syscall(SYS_gettid, 0, 0, 0, 0, 0, 0))
        return;
    /* Another thread writes: wait for it (at most the writer's own busy
     * timeout), then the caller ends the process. */
    struct timespec tick = { 0, 1000000 };
    for (int i = 0; i < 120000 && !__atomic_load_n(&finishing.done, __ATOMIC_ACQUIRE); i++)
        lb_raw_syscall(SYS_nanosleep, (long)&tick, 0, 0, 0, 0, 0);
}

bool lb_runtime_finish(const char *reason)
{
    int expected = LB_PHASE_RUNNING;
    if (!__atomic_compare_exchange_n(&lb_runtime_phase, &expected, LB_PHASE_FINISHED, false,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return false;
    __atomic_store_n(&finishing.tid, (pid_t)lb_raw_syscall(SYS_gettid, 0, 0, 0, 0, 0, 0),
                     __ATOMIC_RELEASE);
    lb_own_pid_confirm(); /* the write names its process by lb_own_pid */
    int saved_errno = errno;
    sigset_t mask_before;
    hold_signals(&mask_before);
    lb_thread_t *self = lb_self;
    if (self)
        lb_enter(self); /* our own sqlite/malloc locking goes straight to glibc */
    lb_hooks_process(LB_PROCESS_QUIESCE, reason, self);
    lb_thread_freeze();
    finish_args_t args = { reason, self };
    if (lb_call_on_kept_stack(run_finish_hooks, &args, LB_FINISH_STACK, LB_FINISH_AREA) != 0)
        run_finish_hooks(&args);
    if (self)
        lb_leave(self);
    __atomic_store_n(&finishing.done, 1, __ATOMIC_RELEASE);
    lb_raw_syscall(SYS_rt_sigprocmask, SIG_SETMASK, (long)&mask_before, 0, _NSIG / 8, 0, 0);
    errno = saved_errno;
    return true;
}

static void before_fork(void)
{
    lb_clock_settle();        /* a calibration due is made once, here, not in every child */
    lb_next_symbols_settle(); /* so are the look-ups of libc's functions */
    /* and the exit write's stack, mapped once and untouched: each child's
     * exit write, and this process's, runs on it without mapping one */
    if (__atomic_load_n(&lb_runtime_phase, __ATOMIC_ACQUIRE) == LB_PHASE_RUNNING) {
        int saved_errno = errno; /* (a refused mapping sets it; the fork's caller reads it) */
        lb_kept_stack_reserve(LB_FINISH_STACK, LB_FINISH_AREA);
        errno = saved_errno;
    }
    lb_hooks_process(LB_PROCESS_FORK_PREPARE, NULL, NULL);
    lb_arena_fork_prepare();
    /* last, under the arena's lock: the nearer the fork, the surer its tick */
    lb_proc_start_fork_prepare();
}

static void after_fork_parent(void)
{
    lb_arena_fork_done(false);
    lb_hooks_process(LB_PROCESS_FORK_PARENT, NULL, NULL);
}

static void after_fork_child(void)
{
    /* The child's pid first: the hooks' own-memory reads and writes go
     * through it (util/own_memory.h) */
    lb_proc_numbers_fork_child();
    lb_clock_fork_child();
    lb_arena_fork_done(true);
    lb_thread_t *self = lb_self;
    /* The child's one thread is the forking one: the initial thread only
     * if it forked (another's record, pruned below, may be reused) */
    if (initial_thread != self)
        initial_thread = NULL;
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
    lb_runtime_stamp_pid();
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
    lb_own_pid_stamp();
    lb_runtime_stamp_pid();
    lb_hooks_process(LB_PROCESS_SETUP, NULL, NULL);
    /* The main thread; later threads attach in the create trampoline. */
    lb_thread_t *main_thread = lb_thread_attach(0, 0, 0);
    if (main_thread)
        main_thread->cpu_base_ns = lb_thread_cpu_ns();
    initial_thread = main_thread;
    pthread_atfork(before_fork, after_fork_parent, after_fork_child);
    __atomic_store_n(&lb_runtime_phase, LB_PHASE_RUNNING, __ATOMIC_RELEASE);
    errno = saved_errno;
}

__attribute__((constructor)) static void lb_constructor(void)
{
    if (lb_getenv("LOCKBLAME_DISABLE"))
        return;
    if (lb_program_is_go()) { /* nothing to see, and a crash to risk (common/go_program.h) */
        extern char *program_invocation_short_name;
        lb_warn("%s is a Go program: its locks and its exit bypass the C library, so there is"
                " nothing to profile; it runs without lockblame",
                program_invocation_short_name);
        return;
    }
    lb_runtime_start();
}

__attribute__((destructor)) static void lb_destructor(void)
{
    lb_runtime_finish("exit");
}
