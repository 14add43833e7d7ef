/* Choosing what to sample: LOCKBLAME_EVENT = NAME[@PERIOD],
 * LOCKBLAME_FREQ = HZ, LOCKBLAME_SIGNAL = number or name, and the fallback
 * chain requested-or-cycles -> CPU-time timer -> task-clock -> none.
 *
 * Choice by cost (docs/DESIGN.md "Sampling"). The probe is whether cycles opens:
 *  - a hardware PMU (cycles opens): cycles, the most precise measure;
 *  - none (ENOENT, as on this project's VMs): the CPU-time timer. A perf
 *    software event (task-clock) samples with an hrtimer that perf
 *    reprograms at every context switch of the thread; on a VM each
 *    reprogramming traps to the hypervisor. Measured here (docs/
 *    INTERNALS.md, "Sampling"): a pipe round trip between two threads
 *    costs 29-37 us with task-clock against 2-10 us with the timer or
 *    without sampling. The timer rides the scheduler tick instead and
 *    costs one signal per sample. It also samples kernel time in place,
 *    without interrupting system calls (backend_perf.c says why perf
 *    counts user mode only), so it is never the worse choice without a
 *    PMU; task-clock is used only when asked for, or when no timer can be
 *    created.
 * A start-up measurement was rejected: telling the two apart needs context
 * switches with the event armed (another thread, milliseconds), paid by
 * every exec'd process of a tree.
 *
 * Messages: each bad value prints one line and is replaced by its default.
 * The chain prints at most one line, and none when the user asked for
 * nothing and the default cycles is simply absent: then the timer at 1 ms
 * is the normal, silent outcome.
 *
 * Runs once, during lb_sampler_setup, on one thread; no shared state. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/parse_u64.h"
#include "sampler/backend.h"
#include "util/env.h"
#include "util/log.h"

#define LB_DEFAULT_FREQ      1000u    /* Hz, frequency mode for cycles */
#define LB_DEFAULT_PERIOD_NS 1000000u /* 1 ms for time events */
#define LB_MAX_FREQ          1000000u

void lb_sampler_read_env(lb_sampler_request_t *req)
{
    memset(req, 0, sizeof *req);
    snprintf(req->raw, sizeof req->raw, "default");

    const char *ev = lb_getenv("LOCKBLAME_EVENT");
    if (ev && *ev) {
        snprintf(req->raw, sizeof req->raw, "%s", ev);
        const char *at = strrchr(ev, '@');
        size_t len = at ? (size_t)(at - ev) : strlen(ev);
        if (len == 0 || len >= sizeof req->event) {
            lb_warn_setting(
                "LOCKBLAME_EVENT",
                "bad LOCKBLAME_EVENT '%s' (want NAME[@PERIOD]); using the default event", ev);
        } else {
            memcpy(req->event, ev, len);
            req->event[len] = '\0';
            if (at && !lb_parse_u64(at + 1, 1, UINT64_C(1) << 62, &req->period)) {
                lb_warn_setting("LOCKBLAME_EVENT",
                                "bad period in LOCKBLAME_EVENT '%s' (want a positive integer); "
                                "using the default period",
                                ev);
                req->period = 0;
            }
        }
    }

    const char *fq = lb_getenv("LOCKBLAME_FREQ");
    if (fq && *fq) {
        if (!lb_parse_u64(fq, 1, LB_MAX_FREQ, &req->freq)) {
            lb_warn_setting("LOCKBLAME_FREQ",
                            "bad LOCKBLAME_FREQ '%s' (want 1..%u Hz); using %u Hz", fq, LB_MAX_FREQ,
                            LB_DEFAULT_FREQ);
            req->freq = 0;
        } else if (req->period) {
            lb_warn_setting("LOCKBLAME_FREQ",
                            "LOCKBLAME_FREQ=%s ignored: LOCKBLAME_EVENT gives a period", fq);
            req->freq = 0;
        }
    }

    const char *sg = lb_getenv("LOCKBLAME_SIGNAL");
    if (sg && *sg) {
        req->signo = lb_sampler_parse_signal(sg);
        if (!req->signo)
            lb_warn_setting("LOCKBLAME_SIGNAL",
                            "bad LOCKBLAME_SIGNAL '%s' (want SIGUSR1/2, SIGPROF, RTMIN+N...); "
                            "using SIGRTMIN+5",
                            sg);
    }
}

/* "every 1 ms", "at 1000 Hz", "every 2000000 events": the tail of a line. */
static void lb_describe(const lb_sampler_config_t *cfg, char *buf, size_t len)
{
    if (cfg->freq)
        snprintf(buf, len, "at %llu Hz", (unsigned long long)cfg->freq);
    else if (!cfg->is_time)
        snprintf(buf, len, "every %llu events", (unsigned long long)cfg->period);
    else if (cfg->period % 1000000u == 0)
        snprintf(buf, len, "every %llu ms", (unsigned long long)(cfg->period / 1000000u));
    else if (cfg->period % 1000u == 0)
        snprintf(buf, len, "every %llu us", (unsigned long long)(cfg->period / 1000u));
    else
        snprintf(buf, len, "every %llu ns", (unsigned long long)cfg->period);
}

static int lb_try_perf(lb_sampler_config_t *cfg, const char *name, uint64_t period, uint64_t freq,
                       char *why, size_t whylen)
{
    bool is_time = false, with_kernel = false;
    if (lb_perf_prepare(name, period, freq, &is_time, &with_kernel, why, whylen) < 0)
        return -1;
    cfg->ops = &lb_sampler_perf_ops;
    snprintf(cfg->event, sizeof cfg->event, "%s", name);
    cfg->period = period;
    cfg->freq = period ? 0 : freq;
    cfg->is_time = is_time;
    cfg->with_kernel = with_kernel;
    return 0;
}

static int lb_try_timer(lb_sampler_config_t *cfg, uint64_t period_ns, char *why, size_t whylen)
{
    if (lb_timer_prepare(period_ns, why, whylen) < 0)
        return -1;
    cfg->ops = &lb_sampler_timer_ops;
    snprintf(cfg->event, sizeof cfg->event, "timer:thread-cputime");
    cfg->period = period_ns;
    cfg->freq = 0;
    cfg->is_time = true;
    cfg->with_kernel = true; /* a thread CPU clock counts both modes */
    return 0;
}

static bool lb_is_time_name(const char *name)
{
    return strcmp(name, "task-clock") == 0 || strcmp(name, "cpu-clock") == 0;
}

int lb_sampler_choose(const lb_sampler_request_t *req, lb_sampler_config_t *cfg)
{
    uint64_t time_period = req->freq ? 1000000000u / req->freq : LB_DEFAULT_PERIOD_NS;
    if (time_period == 0)
        time_period = 1;
    char failed[192] = ""; /* why the explicitly requested event failed */
    char why[128] = "";
    char how[48];

    cfg->ops = NULL;
    snprintf(cfg->event, sizeof cfg->event, "none");
    snprintf(cfg->requested, sizeof cfg->requested, "%s", req->raw);

    const char *name = req->event;
    if (strcmp(name, "none") == 0 || strcmp(name, "off") == 0)
        return -1; /* asked for no sampling: say nothing */
    if (strcmp(name, "timer") == 0 || strcmp(name, "timer:thread-cputime") == 0) {
        if (lb_try_timer(cfg, req->period ? req->period : time_period, why, sizeof why) == 0) {
            snprintf(cfg->why, sizeof cfg->why, "requested");
            return 0;
        }
        snprintf(failed, sizeof failed, "cannot sample %s (%s)", name, why);
    } else if (*name) {
        uint64_t period = req->period;
        if (!period && lb_is_time_name(name))
            period = time_period; /* software clocks: exact period in ns */
        if (lb_try_perf(cfg, name, period, req->freq ? req->freq : LB_DEFAULT_FREQ, why,
                        sizeof why) == 0) {
            snprintf(cfg->why, sizeof cfg->why, "requested");
            return 0;
        }
        snprintf(failed, sizeof failed, "cannot sample %s (%s)", name, why);
    } else if (lb_try_perf(cfg, "cycles", 0, req->freq ? req->freq : LB_DEFAULT_FREQ, why,
                           sizeof why) == 0) {
        snprintf(cfg->why, sizeof cfg->why, "hardware PMU: cycles");
        return 0;
    } else {
        /* No PMU: the timer, silently (see the top of this file). */
        char cycles_why[64];
        snprintf(cycles_why, sizeof cycles_why, "%s", why);
        if (lb_try_timer(cfg, time_period, why, sizeof why) == 0) {
            snprintf(cfg->why, sizeof cfg->why,
                     "no hardware PMU (cycles: %s); CPU-time timer costs less than task-clock",
                     cycles_why);
            return 0;
        }
        snprintf(failed, sizeof failed, "no hardware PMU (cycles: %s) and no CPU-time timer (%s)",
                 cycles_why, why);
    }

    if (*failed && !strstr(failed, "CPU-time timer") &&
        lb_try_timer(cfg, time_period, why, sizeof why) == 0) {
        snprintf(cfg->why, sizeof cfg->why, "fallback: %s", failed);
        lb_describe(cfg, how, sizeof how);
        lb_warn_setting("LOCKBLAME_EVENT", "%s; sampling with a thread CPU-time timer %s", failed,
                        how);
        return 0;
    }
    if (lb_try_perf(cfg, "task-clock", time_period, 0, why, sizeof why) == 0) {
        snprintf(cfg->why, sizeof cfg->why, "fallback: %s", failed);
        lb_describe(cfg, how, sizeof how);
        lb_warn_setting("LOCKBLAME_EVENT", "%s; sampling task-clock %s", failed, how);
        return 0;
    }
    lb_warn("%s; no task-clock either (%s); CPU sampling off", failed, why);
    cfg->ops = NULL;
    snprintf(cfg->event, sizeof cfg->event, "none");
    return -1;
}
