/* Timeouts glibc rejects before it tries to lock or wait: a clock other
 * than CLOCK_REALTIME or CLOCK_MONOTONIC for the *clock* variants
 * (futex_abstimed_supported_clockid) and, where glibc validates up front
 * (sem_timedwait/clockwait, rwlock timed/clock variants), a tv_nsec
 * outside [0, 1e9). A wrapper that tries the lock first must hand such
 * calls straight to the real function, or it would succeed where glibc
 * returns EINVAL.
 *
 * clock: LB_WAIT_FOREVER (no timeout), LB_WAIT_REALTIME (the timed
 * variants, which use CLOCK_REALTIME), or the clockid of a clock variant. */
#ifndef LB_TIMEOUT_H
#define LB_TIMEOUT_H
#include <stdbool.h>
#include <time.h>

#define LB_WAIT_FOREVER  ((clockid_t)-1)
#define LB_WAIT_REALTIME ((clockid_t)-2)

static inline bool lb_clock_rejected(clockid_t clock)
{
    return clock != LB_WAIT_FOREVER && clock != LB_WAIT_REALTIME && clock != CLOCK_REALTIME &&
           clock != CLOCK_MONOTONIC;
}

static inline bool lb_timeout_rejected(clockid_t clock, const struct timespec *abstime)
{
    if (clock == LB_WAIT_FOREVER)
        return false;
    return lb_clock_rejected(clock) || !abstime || abstime->tv_nsec < 0 ||
           abstime->tv_nsec >= 1000000000;
}
#endif
