/* The program and the sampling signal (docs/DESIGN.md "The program's signals").
 *
 * When the program sets a disposition of its own for the signal lockblame
 * samples on (sigaction, signal, sigset...), sampling moves to a free
 * real-time signal and the old one is handed back untouched, so the
 * program's handler sees exactly the signals the program sends:
 *   1. our handler goes onto the new signal, and lb_sampler_cfg.signo
 *      changes (threads started from now on use it);
 *   2. every live thread's event is re-targeted (perf: F_SETSIG; timer:
 *      recreated on the thread's CPU clock), taking ownership of it through
 *      the has_perf/has_timer exchange, so no fd is closed under us;
 *   3. the old signal is set to SIG_IGN, which discards any instance still
 *      pending in any thread (POSIX), then to the disposition the program
 *      had before lockblame started; the program's own call then acts
 *      natively on it.
 * With no free signal left, every event is stopped instead and the
 * threads' remaining CPU time is credited as unsampled.
 * Blocking the signal is handled per thread in sampler.c
 * (lb_sampler_mask_changed).
 *
 * Invariants: moves are serialised by lb_move_lock; the signal number only
 * changes inside a move. Unlike lb_spin's other uses, the section makes
 * system calls: it runs at most once per signal the program takes from
 * us, on the program's thread (a thread that calls sigaction from a
 * handler interrupting its own move would deadlock; a program does not
 * take the same signal twice at once). */
#include <errno.h>
#include <string.h>

#include "sampler/backend.h"
#include "sampler/unsampled.h"
#include "util/log.h"
#include "util/meta_lock.h"

static lb_meta_lock_t lb_move_lock;

void lb_sampler_program_view(int signo, struct sigaction *old)
{
    (void)signo;
    *old = *lb_sampler_program_action();
}

bool lb_sampler_default_kept(sighandler_t handler, int flags)
{
    const struct sigaction *view = lb_sampler_program_action();
    return handler == SIG_DFL && !(flags & SA_SIGINFO) && !(view->sa_flags & SA_SIGINFO) &&
           view->sa_handler == SIG_DFL;
}

/* Re-targets every live thread's event to signo. */
static void lb_retarget_all(int signo)
{
    for (lb_thread_t *t = lb_thread_registry(); t; t = t->next) {
        if (__atomic_load_n(&t->exited, __ATOMIC_ACQUIRE))
            continue;
        lb_sampler_perf_ops.retarget(t, signo);
        lb_sampler_timer_ops.retarget(t, signo);
    }
}

static void lb_stop_all(void)
{
    for (lb_thread_t *t = lb_thread_registry(); t; t = t->next) {
        lb_sampler_perf_ops.thread_stop(t);
        lb_sampler_timer_ops.thread_stop(t);
    }
}

void lb_sampler_release_signal(int signo)
{
    int saved_errno = errno;
    lb_thread_t *self = lb_self;
    if (self)
        lb_enter(self);
    lb_meta_lock(&lb_move_lock);
    if (__atomic_load_n(&lb_sampler_cfg.signo, __ATOMIC_ACQUIRE) != signo || !lb_sampler_cfg.ops) {
        lb_meta_unlock(&lb_move_lock);
        goto out; /* moved already by another thread */
    }
    struct sigaction program = *lb_sampler_program_action();
    int other = lb_sampler_find_free_signal(signo);
    if (other && lb_sampler_handler_on(other) == 0) {
        __atomic_store_n(&lb_sampler_cfg.signo, other, __ATOMIC_RELEASE);
        lb_retarget_all(other);
        lb_sampler_handler_moved(other);
        lb_warn("the program sets a handler for signal %d, on which lockblame sampled; "
                "sampling moved to signal %d",
                signo, other);
    } else {
        /* Nowhere to go: sampling ends for every thread; from here on
         * their CPU time counts as unsampled. */
        __atomic_store_n(&lb_sampler_stopping, 1, __ATOMIC_SEQ_CST);
        lb_stop_all();
        lb_warn("the program sets a handler for signal %d, on which lockblame sampled, and no "
                "real-time signal is free; CPU sampling stopped",
                signo);
    }
    struct sigaction ignore;
    memset(&ignore, 0, sizeof ignore);
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    lb_real_sigaction(signo, &ignore, NULL); /* discards what is pending */
    lb_real_sigaction(signo, &program, NULL);
    lb_meta_unlock(&lb_move_lock);
out:
    if (self)
        lb_leave(self);
    errno = saved_errno;
}
