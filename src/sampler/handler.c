/* The sampling signal handler and its installation.
 *
 * The handler runs on the thread whose event overflowed. It unwinds the
 * interrupted context into that thread's CCT and re-arms the event.
 *
 * Invariants (see also sampler.h):
 *  - Async-signal-safe: no malloc, no stdio, no lock; errno is preserved.
 *    Memory for new CCT nodes comes from mmap.
 *  - It touches only the interrupted thread's own record: lb_self, or on
 *    a thread started by a raw clone, which shares its creator's lb_self,
 *    the thread's foreign record (foreign.h; none yet: the sample is
 *    counted there and dropped), and the OpenMP share it runs
 *    (omp_share.h, in its own stack), except
 *    through lb_sampler_spin_hook (a sampled spin wait) and
 *    lb_sampler_holder_hook (the owner of a hot mutex): atomic adds to the
 *    lock's record and one flag store in its lb_mon, no lock.
 *  - It never unwinds while this thread's normal code is inside lockblame:
 *    busy != 0 records the sample as lockblame's own overhead without a
 *    path (busy_samples), and the handler itself holds busy while it
 *    unwinds and inserts.
 *  - in_handler is published (seq_cst) before lb_sampler_stopping is read,
 *    and quiesce publishes stopping before it reads in_handler, so either
 *    the handler sees the stop or quiesce waits for it. After seeing the
 *    stop it neither records nor re-arms.
 *  - The handler's own signal is blocked while it runs (no SA_NODEFER). */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "core/undirected.h"
#include "core/whatif.h"
#include "sampler/cct.h"
#include "sampler/foreign.h"
#include "sampler/omp_share.h"
#include "sampler/sampler.h"
#include "sampler/tick_alias.h"
#include "sampler/backend.h"
#include "sampler/unsampled.h"
#include "sampler/unwind.h"
#include "util/stack_bounds.h"
#include "util/log.h"

void (*lb_sampler_spin_hook)(lb_thread_t *t, lb_cct_node_t *node, uint64_t ns);
void (*lb_sampler_holder_hook)(lb_thread_t *t, uint64_t ns, bool at_tick);

static struct sigaction lb_old_action; /* the program's, for uninstall */
static int lb_installed_signo;

/* How many periods the sample in info stands for: a CPU-time timer's
 * signal (SI_TIMER) counts its overruns; a perf overflow is one period. */
static uint32_t lb_sample_weight(const siginfo_t *info)
{
    if (info->si_code == SI_TIMER)
        return lb_sampler_timer_ops.weight(info);
    return 1;
}

/* The CPU time that w periods stand for, for the hooks. */
static inline uint64_t sample_ns(uint32_t w)
{
    return (uint64_t)(w * lb_sampler_ns_per_sample());
}

static void lb_sampler_on_signal(int signo, siginfo_t *info, void *ucontext)
{
    int saved_errno = errno;
    lb_thread_t *t = lb_self;
    if (lb_likely(t != NULL))
        t = lb_thread_here_in_handler(t);
    if (lb_unlikely(!t)) {
        errno = saved_errno;
        return;
    }
    __atomic_store_n(&t->sampler->in_handler, 1, __ATOMIC_SEQ_CST);
    uint32_t w = lb_sample_weight(info);
    bool recorded = true;
    if (__atomic_load_n(&lb_sampler_stopping, __ATOMIC_SEQ_CST)) {
        t->sampler->dropped += w;
        goto out; /* no re-arm: sampling is over */
    }
    if (t->busy) {
        /* Inside lockblame: the CPU time is lockblame's own cost. It is
         * recorded (as overhead, at the root: the thread's CCT or its
         * context cache may be mid-update, so no path), not dropped. */
        t->sampler->samples += w;
        t->sampler->busy_samples += w;
    } else if (!t->cct ||
               !(t->foreign ? lb_stack_room_in(t->stack_lo, t->stack_hi, LB_STACK_BUDGET_HANDLER)
                            : lb_stack_room(LB_STACK_BUDGET_HANDLER))) {
        t->sampler->dropped += w; /* no CCT yet, or too little stack left to unwind */
        recorded = false;
    } else {
        lb_enter(t);
        uintptr_t pcs[LB_MAX_DEPTH];
        bool in_sync = false;
        int n = lb_unwind_signal(ucontext, pcs, LB_MAX_DEPTH, &in_sync);
        lb_cct_node_t *node = lb_cct_insert(t->cct, pcs, n);
        if (t->waiting || in_sync) {
            node->m.overhead_samples += w;
            if (t->spin_sampled && lb_sampler_spin_hook)
                lb_sampler_spin_hook(t, node, sample_ns(w));
        } else {
            node->m.work_samples += w;
            node->m.undirected_samples += w * lb_undirected_ratio();
            if (t->omp_share)
                lb_omp_share_sample(t->omp_share, node, w);
        }
        t->sampler->samples += w;
        if (lb_unlikely(!t->sampler->unsampled_node))
            lb_unsampled_prepare(t); /* once: somewhere to credit a residue later */
        lb_leave(t);
    }
    if (lb_unlikely(t->foreign))
        lb_foreign_sampled(t); /* its end is never seen: when and how far it ran */
    /* every recorded sample, the thread's own code, a wait or lockblame's */
    if (recorded && lb_sampler_holder_hook)
        lb_sampler_holder_hook(t, sample_ns(w), info->si_code == SI_TIMER);
    if (t->sampler->has_perf)
        lb_sampler_perf_ops.rearm(t, info);
    lb_tick_alias_after_sample(t);
    if (lb_unlikely(lb_whatif_on) && !t->busy)
        lb_whatif_tick(); /* a thread that never locks pays its what-if delay here */
out:
    __atomic_store_n(&t->sampler->in_handler, 0, __ATOMIC_RELEASE);
    errno = saved_errno;
}

bool lb_sampler_signal_is_free(int signo)
{
    struct sigaction old;
    if (lb_real_sigaction(signo, NULL, &old) < 0)
        return false;
    return !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL;
}

/* A real-time signal with no disposition yet: SIGRTMIN+5 upwards, then the
 * few below it. 0 if every one is taken. */
int lb_sampler_find_free_signal(int avoid)
{
    for (int s = SIGRTMIN + 5; s <= SIGRTMAX; s++)
        if (s != avoid && lb_sampler_signal_is_free(s))
            return s;
    for (int s = SIGRTMIN; s < SIGRTMIN + 5 && s <= SIGRTMAX; s++)
        if (s != avoid && lb_sampler_signal_is_free(s))
            return s;
    return 0;
}

int lb_sampler_handler_on(int signo)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = lb_sampler_on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    return lb_real_sigaction(signo, &sa, NULL);
}

const struct sigaction *lb_sampler_program_action(void)
{
    return &lb_old_action;
}

int lb_sampler_install_handler(int want)
{
    int signo = want ? want : SIGRTMIN + 5;
    if (!lb_sampler_signal_is_free(signo)) {
        int other = lb_sampler_find_free_signal(signo);
        if (!other) {
            lb_warn(
                "signal %d already has a handler and no real-time signal is free; CPU sampling off",
                signo);
            return -1;
        }
        lb_warn("signal %d already has a handler; sampling on signal %d instead", signo, other);
        signo = other;
    }
    if (lb_real_sigaction(signo, NULL, &lb_old_action) < 0 || lb_sampler_handler_on(signo) < 0) {
        lb_warn("cannot install the handler for signal %d (%s); CPU sampling off", signo,
                strerror(errno));
        return -1;
    }
    lb_installed_signo = signo;
    return signo;
}

void lb_sampler_handler_moved(int signo)
{
    memset(&lb_old_action, 0, sizeof lb_old_action);
    lb_old_action.sa_handler = SIG_DFL;
    lb_installed_signo = signo;
}

void lb_sampler_uninstall_handler(void)
{
    if (lb_installed_signo) {
        lb_real_sigaction(lb_installed_signo, &lb_old_action, NULL);
        lb_installed_signo = 0;
    }
}

/* Standard signals that are safe to borrow: asynchronous, not job control,
 * not a fault. Real-time signals are accepted from SIGRTMIN to SIGRTMAX. */
static const struct {
    const char *name;
    int signo;
} lb_borrowable[] = {
    { "USR1", SIGUSR1 },     { "USR2", SIGUSR2 }, { "PROF", SIGPROF },
    { "VTALRM", SIGVTALRM }, { "ALRM", SIGALRM }, { "IO", SIGIO },
    { "POLL", SIGPOLL },     { "URG", SIGURG },   { "WINCH", SIGWINCH },
};

static bool lb_parse_small_int(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

int lb_sampler_parse_signal(const char *s)
{
    long v;
    if (lb_parse_small_int(s, 1, 64, &v)) {
        for (size_t i = 0; i < sizeof lb_borrowable / sizeof lb_borrowable[0]; i++)
            if (lb_borrowable[i].signo == v)
                return (int)v;
        return v >= SIGRTMIN && v <= SIGRTMAX ? (int)v : 0;
    }
    if (strncasecmp(s, "SIG", 3) == 0)
        s += 3;
    for (size_t i = 0; i < sizeof lb_borrowable / sizeof lb_borrowable[0]; i++)
        if (strcasecmp(s, lb_borrowable[i].name) == 0)
            return lb_borrowable[i].signo;
    int base;
    if (strncasecmp(s, "RTMIN", 5) == 0)
        base = SIGRTMIN;
    else if (strncasecmp(s, "RTMAX", 5) == 0)
        base = SIGRTMAX;
    else
        return 0;
    s += 5;
    long off = 0;
    if (*s == '+' || *s == '-') {
        if (!lb_parse_small_int(s + 1, 0, 64, &off))
            return 0;
        if (*s == '-')
            off = -off;
    } else if (*s) {
        return 0;
    }
    long signo = base + off;
    return signo >= SIGRTMIN && signo <= SIGRTMAX ? (int)signo : 0;
}
