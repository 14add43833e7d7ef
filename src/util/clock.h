/* Monotonic nanoseconds for the contended paths, and thread CPU time.
 *
 * lb_now_ns is CLOCK_MONOTONIC. Where the kernel itself keeps time with
 * the TSC (clocksource "tsc", or "kvm-clock" while the host marks the
 * guest's TSC stable, which its vDSO then reads; and CPUID's invariant
 * TSC, which the kernel shows as the flags constant_tsc and nonstop_tsc:
 * one rate, not stopped in idle states), it reads the TSC and scales it
 * (~8 ns on a VM whose clocksource is "tsc", against ~18 ns for the
 * vDSO's clock_gettime there, which contended paths call several times a
 * hold; under kvm-clock ~20 ns against 50-70 ns on a busy 2-vCPU VM). The
 * scale is calibrated against clock_gettime over the first
 * LB_TSC_CALIBRATE_NS of the run; until then, and wherever the TSC is not
 * eligible, lb_now_ns is clock_gettime itself.
 *
 * Invariants: lb_tsc's fields are written once, by the one thread that
 * wins the calibration, before `ready` is published with a release
 * store; a reader that sees ready == 1 (acquire) sees them all. The one
 * exception, verified_tsc, is also rewritten by each verification (one
 * thread at a time, lb_clock_verify, unless one is taken over) and by a
 * fork child whose parent was verifying, and read relaxed: a stale value
 * moves a verification by one read at most. `ready`
 * leaves 1 only for good (-1), when a verification finds the scaled TSC
 * off CLOCK_MONOTONIC's pace (lb_clock_verify); readers then take
 * clock_gettime plus the lead, at the switch, of the latest time readers
 * may have been given (the scaled time, or where the TSC went back, the
 * last verification's plus the real time since; written before
 * `ready`), so that no reader sees time step back. The value
 * at the switch continues clock_gettime's (anchored there); the TSC is
 * not serializing, so two reads may come out a few ns out of order:
 * callers that difference timestamps from different threads already
 * allow for that (blame_clock.h ignores a time before the last event). */
#ifndef LB_CLOCK_H
#define LB_CLOCK_H
#include <stdint.h>
#include <time.h>
#include <x86intrin.h>

#include "util/common.h"

struct lb_tsc {
    int ready;             /* 1: the fields below are valid */
    uint64_t base_tsc;     /* TSC at the anchor */
    uint64_t base_ns;      /* CLOCK_MONOTONIC at the anchor */
    uint64_t mult;         /* ns per tick, << 32 */
    uint64_t verify_ticks; /* ticks between two verifications (lb_clock_verify) */
    uint64_t verified_tsc; /* TSC at the last verification */
};
extern struct lb_tsc lb_tsc;

/* At start-up (before threads): take the calibration's first reading. */
void lb_clock_setup(void);
/* clock_gettime, finishing the calibration once it is due: first asking
 * whether the TSC may be used at all (a file of sysfs read by raw system
 * calls, no cancellation point, and a CPUID; async-signal-safe), once. */
uint64_t lb_clock_slow_ns(void);

/* Whether the scaled TSC still keeps pace with CLOCK_MONOTONIC, checked
 * at most every 100 ms of TSC time (a load and an rdtsc otherwise): if not,
 * lb_now_ns is clock_gettime from then on. lb_now_ns calls it through
 * lb_clock_verified_ns once the interval is due, so every value it gives
 * follows a verification at most 100 ms old, sampled or not; a forking
 * parent calls it too (lb_clock_settle). Async-signal-safe; errno kept. */
void lb_clock_verify(void);
/* lb_now_ns once a verification is due: lb_clock_verify, then the time. */
uint64_t lb_clock_verified_ns(void);

/* Before a fork: the calibration finished if it is due (lb_clock_slow_ns),
 * and a verification made if one is due, so that the children inherit
 * the clock's decision and a fresh verification, each of which would
 * otherwise make them again. */
void lb_clock_settle(void);
/* In a fork child, while it has one thread: a calibration another thread
 * of the parent had under way is made again here when due, where the
 * child would otherwise never make one. */
void lb_clock_fork_child(void);

static inline uint64_t lb_monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* TSC value tsc as lb_now_ns's nanoseconds (lb_tsc's fields valid). */
static inline uint64_t lb_tsc_scaled_ns(uint64_t tsc)
{
    uint64_t ticks = tsc - lb_tsc.base_tsc;
    return lb_tsc.base_ns + (uint64_t)(((unsigned __int128)ticks * lb_tsc.mult) >> 32);
}

static inline uint64_t lb_now_ns(void)
{
    if (lb_likely(__atomic_load_n(&lb_tsc.ready, __ATOMIC_ACQUIRE) == 1)) {
        uint64_t tsc = __rdtsc();
        if (lb_likely(tsc - __atomic_load_n(&lb_tsc.verified_tsc, __ATOMIC_RELAXED) <
                      lb_tsc.verify_ticks))
            return lb_tsc_scaled_ns(tsc);
        return lb_clock_verified_ns();
    }
    return lb_clock_slow_ns();
}

static inline uint64_t lb_thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#endif
