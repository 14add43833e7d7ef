/* The sampler's lifecycle: setup, per-thread start/stop, quiesce, fork, and
 * the getters for the run table. Backend specifics live in backend_*.c,
 * the handler in handler.c, event choice in event.c.
 *
 * Invariants:
 *  - lb_sampler_cfg is written here (and in event.c) only inside the first
 *    lb_sampler_setup call, before any thread is started; read-only after.
 *  - lb_sampler_stopping is set once, by lb_sampler_quiesce; afterwards no
 *    thread starts sampling and no handler records or re-arms.
 *  - Per-thread events are owned through has_perf/has_timer (backend.h);
 *    quiesce takes and frees them only after that thread's handler has
 *    left (or after a bounded wait), so a handler never re-arms a closed fd. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sampler/backend.h"
#include "sampler/foreign.h"
#include "sampler/unsampled.h"
#include "sampler/unwind.h"
#include "util/clock.h"
#include "util/fork_pages.h"
#include "util/log.h"
#include "util/proc_numbers.h"
#include "util/raw_mmap.h"
#include "util/run_delay.h"

lb_sampler_config_t lb_sampler_cfg = { .event = "none", .requested = "default" };
uint32_t lb_sampler_stopping LB_FORK_WRITTEN;

static uint64_t lb_start_failures;
static int lb_start_failure_once;
static bool lb_timer_fallback_ready; /* perf chosen and the timer prepared */
static uint32_t lb_timer_fallbacks;
static int lb_fallback_once;
static lb_sampler_summary_t lb_summary LB_FORK_WRITTEN; /* filled by quiesce */

#define LB_QUIESCE_WAIT_NS 100000000u /* per thread */

int lb_sampler_setup(void)
{
    static int result = 1; /* 1: not run yet */
    if (result != 1)
        return result;
    result = -1;

    lb_unwind_setup();
    lb_sampler_request_t req;
    lb_sampler_read_env(&req);
    snprintf(lb_sampler_cfg.requested, sizeof lb_sampler_cfg.requested, "%s", req.raw);
    if (strcmp(req.event, "none") == 0 || strcmp(req.event, "off") == 0)
        return result; /* asked for no sampling */

    int signo = lb_sampler_install_handler(req.signo);
    if (signo < 0)
        return result;
    lb_sampler_cfg.signo = signo;
    if (lb_sampler_choose(&req, &lb_sampler_cfg) < 0) {
        lb_sampler_uninstall_handler();
        lb_sampler_cfg.signo = 0;
        return result;
    }
    if (lb_sampler_cfg.ops == &lb_sampler_perf_ops) {
        /* For threads that find no file descriptor: the same CPU time per
         * sample, so samples of both kinds weigh alike. */
        double per = lb_sampler_ns_per_sample();
        char why[128];
        lb_timer_fallback_ready =
            lb_timer_prepare(per >= 1000 ? (uint64_t)per : 1000000u, why, sizeof why) == 0;
    }
    result = 0;
    return result;
}

int lb_sampler_event_start(lb_thread_t *self)
{
    int err = lb_sampler_cfg.ops->thread_start(self);
    if ((err == -EMFILE || err == -ENFILE) && lb_sampler_cfg.ops == &lb_sampler_perf_ops &&
        lb_timer_fallback_ready) {
        err = lb_sampler_timer_ops.thread_start(self);
        if (err == 0) {
            __atomic_add_fetch(&lb_timer_fallbacks, 1, __ATOMIC_RELAXED);
            lb_warn_once(&lb_fallback_once,
                         "file descriptor limit reached: thread %u and any like it are "
                         "sampled with a CPU-time timer instead of %s",
                         self->id, lb_sampler_cfg.event);
        }
    }
    return err;
}

void lb_sampler_event_stop(lb_thread_t *t)
{
    lb_sampler_perf_ops.thread_stop(t);
    lb_sampler_timer_ops.thread_stop(t);
}

void lb_sampler_thread_start(lb_thread_t *self)
{
    if (!lb_sampler_cfg.ops || __atomic_load_n(&lb_sampler_stopping, __ATOMIC_ACQUIRE))
        return;
    /* Call paths need nothing per thread here: the unwinder keeps no
     * per-thread state (unwind.c), and a thread's context cache is mapped
     * at its first contended release or wait (blame/context.c). */
    int signo = __atomic_load_n(&lb_sampler_cfg.signo, __ATOMIC_ACQUIRE);
    if (lb_sampler_signal_blocked_here(signo)) {
        /* Born with the signal blocked (a creator that blocks all signals
         * around pthread_create, as liblzma does): nothing to arm. */
        lb_unsampled_begin(self, LB_UNSAMPLED_BLOCKED);
        return;
    }
    int err = lb_sampler_event_start(self);
    if (err) {
        __atomic_add_fetch(&lb_start_failures, 1, __ATOMIC_RELAXED);
        lb_unsampled_begin(self, LB_UNSAMPLED_NO_EVENT);
        lb_warn_once(&lb_start_failure_once,
                     "cannot start sampling thread %u (%s); it and any like it run unsampled, "
                     "their CPU time credited to their start routines",
                     self->id, strerror(-err));
    }
}

void lb_sampler_thread_stop(lb_thread_t *self)
{
    lb_sampler_event_stop(self);
    /* the clock lb_thread_detach read just before (sampler.h) */
    lb_unsampled_credit(self, self->cpu_ns + self->cpu_base_ns, true);
}

int lb_sampler_signal_now(void)
{
    return lb_sampler_cfg.ops ? __atomic_load_n(&lb_sampler_cfg.signo, __ATOMIC_ACQUIRE) : 0;
}

bool lb_sampler_ran_sampled_work(const lb_thread_t *t)
{
    double per = lb_sampler_ns_per_sample();
    if (per <= 0)
        return false;
    /* CPU time since this image began to track t (less cpu_base_ns); 0 for
     * a live thread before quiesce (a window's write) */
    uint64_t ran =
        __atomic_load_n(&t->exited, __ATOMIC_ACQUIRE) ? t->cpu_ns : t->sampler->cpu_at_stop_ns;
    return ran >= LB_SAMPLED_WORK_MIN_NS && (double)ran >= per;
}

/* Waits (yielding) until t's handler has left, at most LB_QUIESCE_WAIT_NS.
 * Returns false on time-out; t's event is then left alone. */
static bool lb_wait_handler_out(lb_thread_t *t)
{
    uint64_t deadline = 0;
    while (__atomic_load_n(&t->sampler->in_handler, __ATOMIC_SEQ_CST)) {
        uint64_t now = lb_now_ns();
        if (!deadline)
            deadline = now + LB_QUIESCE_WAIT_NS;
        else if (now > deadline)
            return false;
        sched_yield();
    }
    return true;
}

/* Where live thread t's time in the profile ends, read once sampling
 * stopped (or at once, without sampling): its CPU clock, the time, and,
 * where it was off CPU LB_RUN_DELAY_MIN_UNSEEN_NS or more by then, its
 * run delay (the write's rule reads it only where the time it leaves
 * unseen, no more than that, is as long). Read here, not at the write,
 * so that none of the three holds the write's own time. The calling
 * thread's schedstat is read as its own (tid 0: util/run_delay.h).
 * No malloc, no locks: raw system calls. Returns the CPU clock. */
static uint64_t lb_read_at_stop(lb_thread_t *t)
{
    struct lb_sampler_thread *s = t->sampler;
    uint64_t cpu = lb_unsampled_cpu_used(t);
    s->cpu_at_stop_ns = cpu;
    s->at_stop_ns = lb_now_ns();
    s->run_delay_at_stop_ns = UINT64_MAX;
    if (s->at_stop_ns > t->start_ns &&
        s->at_stop_ns - t->start_ns >= cpu + LB_RUN_DELAY_MIN_UNSEEN_NS) {
        int saved = errno;
        lb_run_delay_ns(t == lb_self ? 0 : lb_thread_os_tid(t), &s->run_delay_at_stop_ns);
        errno = saved;
    }
    return cpu;
}

/* Stops sampling for good. Every handler that starts after the store below
 * drops its sample without re-arming; the loop waits out the ones already
 * running, then frees each thread's event. A handler stuck past the bounded
 * wait keeps its event (it can then only drop samples). */
void lb_sampler_quiesce(void)
{
    __atomic_store_n(&lb_sampler_stopping, 1, __ATOMIC_SEQ_CST);
    lb_sampler_summary_t *sum = &lb_summary;
    sum->mechanism = !lb_sampler_cfg.ops                          ? "none"
                     : lb_sampler_cfg.ops == &lb_sampler_perf_ops ? "perf_event"
                                                                  : "timer";
    sum->why = lb_sampler_cfg.why;
    sum->with_kernel = lb_sampler_cfg.with_kernel;
    if (!lb_sampler_cfg.ops) {
        for (lb_thread_t *t = lb_thread_registry(); t; t = t->next)
            if (!lb_foreign_ended(t) && !__atomic_load_n(&t->exited, __ATOMIC_ACQUIRE))
                lb_read_at_stop(t);
        return;
    }
    uint64_t cpu = 0, unsampled = 0, blocked = 0;
    uint32_t blocked_threads = 0;
    for (lb_thread_t *t = lb_thread_registry(); t; t = t->next) {
        if (lb_wait_handler_out(t))
            lb_sampler_event_stop(t);
        bool exited = lb_foreign_ended(t) || __atomic_load_n(&t->exited, __ATOMIC_ACQUIRE);
        uint64_t t_cpu = t->cpu_ns;
        if (!exited) {
            t_cpu = lb_read_at_stop(t);
            lb_unsampled_credit(t, t_cpu + t->cpu_base_ns, t == lb_self);
        }
        cpu += t_cpu;
        uint64_t u = t->sampler->unsampled_ns; /* the credit closed the last interval */
        if (u) {
            unsampled += u;
            sum->unsampled_threads++;
            if (t->sampler->unsampled_seen && u > t->sampler->residue_ns) {
                blocked += u - t->sampler->residue_ns; /* its intervals, not its residue */
                blocked_threads++;
            }
        }
        sum->samples += t->sampler->samples;
        sum->dropped += t->sampler->dropped;
    }
    sum->cpu_s = (double)cpu / 1e9;
    sum->unsampled_s = (double)unsampled / 1e9;
    sum->unsampled_blocked_s = (double)blocked / 1e9;
    sum->unsampled_blocked_threads = blocked_threads;
    sum->timer_fallbacks = __atomic_load_n(&lb_timer_fallbacks, __ATOMIC_RELAXED);
    double sampled_s = sum->cpu_s - sum->unsampled_s;
    sum->rate_hz = sampled_s > 0 ? (double)(sum->samples + sum->dropped) / sampled_s : 0;
    uint64_t all = sum->samples + sum->dropped;
    if (lb_summary_by_run() || lb_summary_by_root())
        return; /* the tree's summary and the report header say it for the tree */
    if (all >= 20 && sum->dropped * 20 > all)
        lb_warn("%.1f%% of CPU samples dropped (%llu of %llu); the profile's work is short by "
                "that much",
                100.0 * (double)sum->dropped / (double)all, (unsigned long long)sum->dropped,
                (unsigned long long)all);
    /* Said when threads went unsampled for a while (signal blocked, no
     * event), not for the residues of sampled threads (a tick's worth). */
    if (blocked >= 10000000u)
        lb_warn("%.3f s of CPU time in %u thread(s) that blocked signal %d or had no event "
                "went unsampled; credited to their start routines as lockblame_unsampled_cpu",
                (double)blocked / 1e9, blocked_threads, lb_sampler_cfg.signo);
}

void lb_sampler_summarize(lb_sampler_summary_t *out)
{
    *out = lb_summary;
    if (!out->mechanism) {
        out->mechanism = "none";
        out->why = "";
    }
}

/* In the child only the calling thread exists. Inherited perf fds still
 * drive the parent's events (shared open file description), so they are
 * only closed here, never disabled or re-routed. POSIX timers are not
 * inherited: their records are simply forgotten. */
static void lb_forget_inherited(lb_thread_t *t)
{
    struct lb_sampler_thread *s = t->sampler;
    /* Only what changes is written (util/fork_pages.h): a parent that
     * ran many threads leaves many records, most of them settled. */
    if (__atomic_load_n(&s->has_perf, __ATOMIC_ACQUIRE)) {
        __atomic_store_n(&s->has_perf, false, __ATOMIC_RELEASE);
        if (s->perf_ring)
            lb_munmap(s->perf_ring, LB_PERF_RING_BYTES); /* the fork copied the mapping */
        close(s->perf_fd);
    }
    LB_STORE_CHANGED(&s->perf_ring, NULL);
    LB_STORE_CHANGED(&s->perf_fd, -1);
    LB_STORE_CHANGED(&s->has_timer, false);
    LB_STORE_CHANGED(&s->in_handler, 0u);
    /* The child's CPU clocks start from zero; the parent's unsampled
     * time is the parent's. */
    LB_STORE_CHANGED(&s->unsampled, false);
    LB_STORE_CHANGED(&s->unsampled_ns, 0u);
    LB_STORE_CHANGED(&s->residue_ns, 0u);
    LB_STORE_CHANGED(&s->credited, 0u);
}

void lb_sampler_after_fork_child(lb_thread_t *self)
{
    for (lb_thread_t *t = lb_thread_registry(); t; t = t->next)
        if (t != self)
            lb_forget_inherited(t);
    if (self) {
        lb_forget_inherited(self);
        /* The timer targets self->tid; core refreshes it only after the
         * fork hooks, so set the child's own now (same value: the only
         * thread of a fork child leads it, its tid the pid stamped first
         * of the fork hooks). */
        self->tid = lb_own_pid();
        self->os_tid = self->tid;
        lb_sampler_thread_start(self);
    }
}

const char *lb_sampler_event_name(void)
{
    return lb_sampler_cfg.event;
}
const char *lb_sampler_event_requested(void)
{
    return lb_sampler_cfg.requested;
}
uint64_t lb_sampler_period(void)
{
    return lb_sampler_cfg.period;
}
uint64_t lb_sampler_freq(void)
{
    return lb_sampler_cfg.freq;
}
bool lb_sampler_period_is_time(void)
{
    return lb_sampler_cfg.is_time;
}
int lb_sampler_signal(void)
{
    return lb_sampler_cfg.signo;
}

const char *lb_sampler_period_unit(void)
{
    return lb_sampler_cfg.is_time ? "ns" : "events";
}

double lb_sampler_ns_per_sample(void)
{
    if (!lb_sampler_cfg.ops)
        return 0;
    if (lb_sampler_cfg.freq)
        return 1e9 / (double)lb_sampler_cfg.freq;
    return lb_sampler_cfg.is_time ? (double)lb_sampler_cfg.period : 0;
}

uint64_t lb_sampler_start_failures(void)
{
    return __atomic_load_n(&lb_start_failures, __ATOMIC_RELAXED);
}
