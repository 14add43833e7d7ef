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
#include <unistd.h>

#include "sampler/backend.h"
#include "sampler/cct.h"
#include "sampler/sampler.h"
#include "sampler/unwind.h"
#include "util/clock.h"
#include "util/log.h"

lb_sampler_config_t lb_sampler_cfg = { .event = "none", .requested = "default" };
uint32_t lb_sampler_stopping;

static uint64_t lb_start_failures;
static int lb_start_failure_once;

#define LB_QUIESCE_WAIT_NS 100000000u   /* per thread */

int lb_sampler_setup(void)
{
    static int result = 1;   /* 1: not run yet */
    if (result != 1)
        return result;
    result = -1;

    lb_unwind_setup();
    lb_sampler_request_t req;
    lb_sampler_read_env(&req);
    snprintf(lb_sampler_cfg.requested, sizeof lb_sampler_cfg.requested, "%s", req.raw);
    if (strcmp(req.event, "none") == 0 || strcmp(req.event, "off") == 0)
        return result;   /* asked for no sampling */

    int signo = lb_sampler_install_handler(req.signo);
    if (signo < 0)
        return result;
    lb_sampler_cfg.signo = signo;
    if (lb_sampler_choose(&req, &lb_sampler_cfg) < 0) {
        lb_sampler_uninstall_handler();
        lb_sampler_cfg.signo = 0;
        return result;
    }
    result = 0;
    return result;
}

void lb_sampler_thread_start(lb_thread_t *self)
{
    if (!lb_sampler_cfg.ops || __atomic_load_n(&lb_sampler_stopping, __ATOMIC_ACQUIRE))
        return;
    /* libunwind's per-thread trace cache (~256 KB) is created by the
     * thread's first walk, not here: a thread that mostly blocks may never
     * be sampled, and 1,000 such threads would otherwise cost 256 MB. The
     * first walk may then run in the handler; libunwind allocates it with
     * mmap and takes its pool lock with all signals blocked, so the
     * handler cannot interrupt itself there (see unwind.c). */
    int err = lb_sampler_cfg.ops->thread_start(self);
    if (err) {
        __atomic_add_fetch(&lb_start_failures, 1, __ATOMIC_RELAXED);
        lb_warn_once(&lb_start_failure_once,
                     "cannot start sampling thread %u (%s); it and any like it run unsampled",
                     self->id, strerror(-err));
    }
}

void lb_sampler_thread_stop(lb_thread_t *self)
{
    if (lb_sampler_cfg.ops)
        lb_sampler_cfg.ops->thread_stop(self);
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

/* Stops sampling for good. Every handler that starts after the store below
 * drops its sample without re-arming; the loop waits out the ones already
 * running, then frees each thread's event. A handler stuck past the bounded
 * wait keeps its event (it can then only drop samples). */
void lb_sampler_quiesce(void)
{
    __atomic_store_n(&lb_sampler_stopping, 1, __ATOMIC_SEQ_CST);
    if (!lb_sampler_cfg.ops)
        return;
    for (lb_thread_t *t = lb_thread_registry(); t; t = t->next) {
        if (lb_wait_handler_out(t))
            lb_sampler_cfg.ops->thread_stop(t);
    }
}

/* In the child only the calling thread exists. Inherited perf fds still
 * drive the parent's events (shared open file description), so they are
 * only closed here, never disabled or re-routed. POSIX timers are not
 * inherited: their records are simply forgotten. */
static void lb_forget_inherited(lb_thread_t *t)
{
    if (__atomic_exchange_n(&t->sampler->has_perf, false, __ATOMIC_ACQ_REL)) {
        if (t->sampler->perf_ring)
            munmap(t->sampler->perf_ring, LB_PERF_RING_BYTES); /* the fork copied the mapping */
        close(t->sampler->perf_fd);
    }
    t->sampler->perf_ring = NULL;
    t->sampler->perf_fd = -1;
    t->sampler->has_timer = false;
    t->sampler->in_handler = 0;
}

void lb_sampler_after_fork_child(lb_thread_t *self)
{
    for (lb_thread_t *t = lb_thread_registry(); t; t = t->next)
        if (t != self)
            lb_forget_inherited(t);
    if (self) {
        lb_forget_inherited(self);
        lb_sampler_thread_start(self);
    }
}

const char *lb_sampler_event_name(void) { return lb_sampler_cfg.event; }
const char *lb_sampler_event_requested(void) { return lb_sampler_cfg.requested; }
uint64_t lb_sampler_period(void) { return lb_sampler_cfg.period; }
uint64_t lb_sampler_freq(void) { return lb_sampler_cfg.freq; }
bool lb_sampler_period_is_time(void) { return lb_sampler_cfg.is_time; }
int lb_sampler_signal(void) { return lb_sampler_cfg.signo; }

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
