/* The default backend without a hardware PMU: a POSIX timer on the
 * thread's own CPU clock (CLOCK_THREAD_CPUTIME_ID: user and kernel time),
 * periodic, signalling that thread
 * (SIGEV_THREAD_ID). The kernel keeps at most one signal per timer pending
 * and counts overruns, so a thread that blocks our signal is not flooded;
 * a sample then weighs 1 + overruns periods (lb_timer_weight).
 *
 * Invariants: lb_timer_period_ns is written during setup only. A thread's
 * timer is owned as described in backend.h (has_timer exchange). POSIX
 * timers are not inherited by fork, so the child simply forgets them.
 * Kernel time: the timer's expiry runs as task work on the way back to
 * user mode (POSIX_CPU_TIMERS_TASK_WORK, x86 since 5.10), so a sample of
 * kernel time lands on the system call's user context and interrupts no
 * system call. Caveat: on a kernel without it, expiry runs in the tick and
 * the signal can interrupt a call about to block; SA_RESTART restarts most,
 * but the few the kernel never restarts (poll, epoll_wait...) may then see
 * EINTR. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/real.h"
#include "sampler/backend.h"

/* glibc names the thread-id member of struct sigevent only since 2.35. */
#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

static uint64_t lb_timer_period_ns;

/* Linux's CPU clock id of thread tid (CPUCLOCK_SCHED, per thread), the
 * clock pthread_getcpuclockid gives; usable from any thread of the process. */
static clockid_t lb_tid_cpu_clock(pid_t tid)
{
    return (clockid_t)((~(unsigned)tid << 3) | 6);
}

/* A timer on thread tid's CPU clock, signalling tid with signo; self:
 * tid is the calling thread. */
static int lb_timer_create(int signo, pid_t tid, bool self, timer_t *out)
{
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = signo;
    sev.sigev_notify_thread_id = tid;
    return timer_create(self ? CLOCK_THREAD_CPUTIME_ID : lb_tid_cpu_clock(tid), &sev, out);
}

static int lb_timer_arm(timer_t timer)
{
    struct itimerspec its;
    its.it_interval.tv_sec = (time_t)(lb_timer_period_ns / 1000000000u);
    its.it_interval.tv_nsec = (long)(lb_timer_period_ns % 1000000000u);
    its.it_value = its.it_interval;
    /* libc's, not the exported wrapper (interpose/timers.c): lockblame's
     * own sampling timers are not the program's. */
    if (lb_unlikely(lb_real.timer_settime == NULL))
        lb_real_resolve();
    if (lb_real.timer_settime == NULL) {
        errno = ENOSYS;
        return -1;
    }
    return lb_real.timer_settime(timer, 0, &its, NULL);
}

int lb_timer_prepare(uint64_t period_ns, char *why, size_t whylen)
{
    timer_t probe;
    if (lb_timer_create(lb_sampler_cfg.signo ? lb_sampler_cfg.signo : SIGRTMIN, gettid(), true,
                        &probe) < 0) {
        snprintf(why, whylen, "%s", strerror(errno));
        return -1;
    }
    timer_delete(probe);
    lb_timer_period_ns = period_ns;
    return 0;
}

/* Creates and arms the calling thread's timer. Returns 0 or -errno; on
 * failure no timer is left behind. */
static int lb_timer_thread_start(lb_thread_t *t)
{
    if (__atomic_load_n(&t->sampler->has_timer, __ATOMIC_ACQUIRE))
        return 0;
    timer_t timer;
    /* t is the calling thread; its record's tid saves a gettid call (a
     * record not made by core, as in unit tests, may not have one). */
    if (lb_timer_create(__atomic_load_n(&lb_sampler_cfg.signo, __ATOMIC_ACQUIRE),
                        t->tid ? lb_thread_os_tid(t) : gettid(), true, &timer) < 0)
        return -errno;
    t->sampler->timer = timer;
    __atomic_store_n(&t->sampler->has_timer, true, __ATOMIC_RELEASE);
    if (lb_timer_arm(timer) < 0) {
        int err = errno;
        if (__atomic_exchange_n(&t->sampler->has_timer, false, __ATOMIC_ACQ_REL))
            timer_delete(timer);
        return -err;
    }
    return 0;
}

static void lb_timer_thread_stop(lb_thread_t *t)
{
    if (__atomic_exchange_n(&t->sampler->has_timer, false, __ATOMIC_ACQ_REL))
        timer_delete(t->sampler->timer);
}

/* Replaces t's timer by one on signo (a timer's signal is fixed at
 * creation). Any thread may call it; it owns the timer meanwhile (has_timer
 * exchange), so a concurrent stop finds nothing and the record keeps the
 * new timer for quiesce to free. Returns 0 or -errno (t left unsampled). */
static int lb_timer_retarget(lb_thread_t *t, int signo)
{
    if (!__atomic_exchange_n(&t->sampler->has_timer, false, __ATOMIC_ACQ_REL))
        return 0;
    timer_delete(t->sampler->timer);
    timer_t timer;
    if (lb_timer_create(signo, lb_thread_os_tid(t), t == lb_self, &timer) < 0)
        return -errno;
    if (lb_timer_arm(timer) < 0) {
        int err = errno;
        timer_delete(timer);
        return -err;
    }
    t->sampler->timer = timer;
    __atomic_store_n(&t->sampler->has_timer, true, __ATOMIC_RELEASE);
    return 0;
}

static void lb_timer_rearm(lb_thread_t *t, const siginfo_t *info)
{
    (void)t;
    (void)info; /* periodic: nothing to do */
}

/* CPU-time timers are checked on the scheduler tick (often 4 ms), so a 1 ms
 * timer fires late and reports the periods it missed in si_overrun. */
static uint32_t lb_timer_weight(const siginfo_t *info)
{
    if (info->si_code != SI_TIMER || info->si_overrun < 0)
        return 1;
    return 1u + (info->si_overrun < 1000000 ? (uint32_t)info->si_overrun : 1000000u);
}

const lb_sampler_ops_t lb_sampler_timer_ops = {
    .name = "timer",
    .thread_start = lb_timer_thread_start,
    .thread_stop = lb_timer_thread_stop,
    .retarget = lb_timer_retarget,
    .rearm = lb_timer_rearm,
    .weight = lb_timer_weight,
};
