/* Moving sampling off the tick when the program has periodic timers
 * (contract and invariants in tick_alias.h). */
#include "sampler/tick_alias.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "sampler/backend.h"
#include "util/clock.h"
#include "util/log.h"

uint32_t lb_tick_alias_switched;

static uint32_t tried;            /* one thread prepares the switch */
static LB_TLS uint64_t rng_state; /* xorshift64*, per thread */

/* A period drawn from [P/2, 3P/2): its mean is P, the period every sample
 * is weighed with. */
static uint64_t random_period(uint64_t period)
{
    if (!rng_state)
        rng_state = (lb_now_ns() ^ ((uint64_t)gettid() << 32)) | 1;
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    uint64_t r = rng_state * 0x2545f4914f6cdd1dull;
    return period / 2 + (period ? r % period : 0);
}

/* t, on its own thread: its CPU-time timer replaced by a task-clock
 * event. If the event cannot be opened, the timer stays. */
static void switch_thread(lb_thread_t *t)
{
    if (!__atomic_load_n(&t->sampler->has_timer, __ATOMIC_ACQUIRE))
        return;
    if (lb_sampler_perf_ops.thread_start(t) != 0)
        return;
    lb_sampler_timer_ops.thread_stop(t);
}

void lb_tick_alias_after_sample(lb_thread_t *t)
{
    if (lb_likely(!__atomic_load_n(&lb_tick_alias_switched, __ATOMIC_ACQUIRE)))
        return;
    switch_thread(t);
    if (__atomic_load_n(&t->sampler->has_perf, __ATOMIC_ACQUIRE)) {
        uint64_t next = random_period(lb_sampler_cfg.period);
        ioctl(t->sampler->perf_fd, PERF_EVENT_IOC_PERIOD, &next);
    }
}

void lb_tick_alias_program_timer(const char *what, uint64_t interval_ns)
{
    if (interval_ns == 0 || lb_sampler_cfg.ops != &lb_sampler_timer_ops ||
        strcmp(lb_sampler_cfg.why, "requested") == 0 ||
        __atomic_exchange_n(&tried, 1, __ATOMIC_ACQ_REL))
        return;
    int saved_errno = errno;
    bool is_time = false, with_kernel = false;
    char why[128];
    uint64_t period = lb_sampler_cfg.period;
    if (lb_perf_prepare("task-clock", period, 0, &is_time, &with_kernel, why, sizeof why) != 0) {
        lb_warn("the program arms a periodic timer (%s, every %.3g ms), whose work the CPU-time "
                "timer's samples, taken at the kernel tick, may find always or never; task-clock "
                "is not available to sample off the tick (%s)",
                what, interval_ns / 1e6, why);
        errno = saved_errno;
        return;
    }
    snprintf(lb_sampler_cfg.event, sizeof lb_sampler_cfg.event, "task-clock");
    snprintf(lb_sampler_cfg.why, sizeof lb_sampler_cfg.why,
             "switched from the CPU-time timer: the program's periodic timer (%s, every %.3g ms) "
             "would beat with the tick; periods drawn at random around the mean",
             what, interval_ns / 1e6);
    lb_sampler_cfg.is_time = is_time;
    lb_sampler_cfg.with_kernel = with_kernel;
    __atomic_store_n(&lb_sampler_cfg.ops, &lb_sampler_perf_ops, __ATOMIC_RELEASE);
    __atomic_store_n(&lb_tick_alias_switched, 1, __ATOMIC_RELEASE);
    lb_warn("the program arms a periodic timer (%s, every %.3g ms): sampling moves from the "
            "CPU-time timer, whose samples come at the kernel tick and would beat with it, to "
            "task-clock at random periods around %.3g ms",
            what, interval_ns / 1e6, period / 1e6);
    if (lb_self)
        switch_thread(lb_self);
    errno = saved_errno;
}
