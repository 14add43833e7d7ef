/* The calling thread's own signal mask and the sampling signal (docs/DESIGN.md
 * "The program's signals"): the exported sigprocmask/pthread_sigmask/
 * sigset (src/interpose/signals.c) report each change of the program's
 * mask here; when the sampling signal becomes blocked the thread's event
 * stops and an unsampled interval begins (unsampled.c), when it is
 * unblocked again sampling resumes.
 *
 * Invariants: runs only on the thread whose mask changed, never while it
 * is inside lockblame (busy: sqlite and libdw may change masks for their
 * own reasons) nor once sampling stops. A change that does not flip the
 * sampling signal's state costs no system call. */
#include <errno.h>
#include <stdint.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sampler/backend.h"
#include "sampler/unsampled.h"
#include "util/kernel_sigmask.h"
#include "util/raw_syscall.h"

/* The kernel's mask read directly (util/kernel_sigmask.h): every
 * thread's start asks, a fork child's too, where libc's pthread_sigmask
 * and sigismember would be pages of its code to fault in. */
bool lb_sampler_signal_blocked_here(int signo)
{
    uint64_t cur, bit = lb_sig_bit(signo);
    if (!bit)
        return false;
    int saved_errno = errno;
    long rc =
        lb_raw_syscall(SYS_rt_sigprocmask, SIG_BLOCK, 0, (long)&cur, LB_KERNEL_SIGMASK_BYTES, 0, 0);
    errno = saved_errno;
    return rc == 0 && (cur & bit);
}

/* Discards the sampling signals already pending for the calling thread,
 * which blocks signo now: a later sigwait of the program must not see
 * them. rt_sigtimedwait directly: glibc's sigtimedwait is a cancellation
 * point. Returns the periods they stood for. */
static uint64_t lb_drain_own(int signo)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, signo);
    struct timespec zero = { 0, 0 };
    siginfo_t info;
    uint64_t periods = 0;
    for (int i = 0; i < 64; i++) {
        if (lb_raw_syscall(SYS_rt_sigtimedwait, (long)&set, (long)&info, (long)&zero, _NSIG / 8, 0,
                           0) != signo)
            break;
        periods += info.si_code == SI_TIMER ? lb_sampler_timer_ops.weight(&info) : 1;
    }
    return periods;
}

static void lb_blocked_now(lb_thread_t *self, int signo, bool blocked);

void lb_sampler_mask_changed(lb_thread_t *self, int how, const sigset_t *set, const sigset_t *old)
{
    int signo = __atomic_load_n(&lb_sampler_cfg.signo, __ATOMIC_ACQUIRE);
    if (!self || !signo || !lb_sampler_cfg.ops || self->busy || !set ||
        __atomic_load_n(&lb_sampler_stopping, __ATOMIC_ACQUIRE))
        return;
    bool in_set = sigismember(set, signo) == 1, was = sigismember(old, signo) == 1;
    bool blocked = how == SIG_BLOCK ? was || in_set : how == SIG_UNBLOCK ? was && !in_set : in_set;
    lb_blocked_now(self, signo, blocked);
}

void lb_sampler_mask_reread(lb_thread_t *self)
{
    int signo = __atomic_load_n(&lb_sampler_cfg.signo, __ATOMIC_ACQUIRE);
    if (!self || !signo || !lb_sampler_cfg.ops || self->busy ||
        __atomic_load_n(&lb_sampler_stopping, __ATOMIC_ACQUIRE))
        return;
    lb_blocked_now(self, signo, lb_sampler_signal_blocked_here(signo));
}

/* Pauses or resumes sampling of self (its own thread) as its mask now
 * blocks signo or not. */
static void lb_blocked_now(lb_thread_t *self, int signo, bool blocked)
{
    bool paused = self->sampler->unsampled && self->sampler->unsampled_why == LB_UNSAMPLED_BLOCKED;
    if (blocked == paused || (self->sampler->unsampled && !paused))
        return; /* no change, or unsampled for want of an event anyway */
    int saved_errno = errno;
    if (blocked) {
        lb_sampler_event_stop(self);
        lb_unsampled_begin(self, LB_UNSAMPLED_BLOCKED);
        uint64_t periods = lb_drain_own(signo);
        if (periods)
            lb_unsampled_add(self, (uint64_t)((double)periods * lb_sampler_ns_per_sample()));
    } else {
        lb_unsampled_end(self);
        if (lb_sampler_event_start(self) != 0)
            lb_unsampled_begin(self, LB_UNSAMPLED_NO_EVENT);
    }
    errno = saved_errno;
}
