/* The program's periodic timers: setitimer and timer_settime forward to
 * libc unchanged (return value and errno are libc's own); after a call
 * that armed a timer with an interval, the sampler hears of it
 * (sampler/tick_alias.h: the CPU-time timer's tick-bound samples would
 * beat with it). timer_settime calls that lockblame's own timer backend
 * makes are told apart by a thread-local flag and not reported.
 *
 * The real functions are looked up on first use (dlsym; timer_settime at
 * its current ABI, GLIBC_2.3.3, the one every program built since glibc
 * 2.3.3 calls). Neither is called by ld.so or inside dlsym. */
#include <dlfcn.h>
#include <errno.h>
#include <sys/time.h>
#include <time.h>

#include "sampler/tick_alias.h"
#include "util/common.h"

typedef int (*setitimer_fn)(__itimer_which_t, const struct itimerval *, struct itimerval *);
typedef int (*timer_settime_fn)(timer_t, int, const struct itimerspec *, struct itimerspec *);

static setitimer_fn real_setitimer;
static timer_settime_fn real_timer_settime;

static const char *itimer_name(__itimer_which_t which)
{
    switch (which) {
    case ITIMER_REAL:
        return "setitimer(ITIMER_REAL)";
    case ITIMER_VIRTUAL:
        return "setitimer(ITIMER_VIRTUAL)";
    case ITIMER_PROF:
        return "setitimer(ITIMER_PROF)";
    default:
        return "setitimer";
    }
}

LB_EXPORT int setitimer(__itimer_which_t which, const struct itimerval *new_value,
                        struct itimerval *old_value)
{
    setitimer_fn real = __atomic_load_n(&real_setitimer, __ATOMIC_ACQUIRE);
    if (lb_unlikely(!real)) {
        real = (setitimer_fn)dlsym(RTLD_NEXT, "setitimer");
        if (!real) {
            errno = ENOSYS;
            return -1;
        }
        __atomic_store_n(&real_setitimer, real, __ATOMIC_RELEASE);
    }
    int rc = real(which, new_value, old_value);
    if (rc == 0 && new_value && (new_value->it_interval.tv_sec || new_value->it_interval.tv_usec)) {
        int saved_errno = errno;
        lb_tick_alias_program_timer(itimer_name(which),
                                    (uint64_t)new_value->it_interval.tv_sec * 1000000000u +
                                        (uint64_t)new_value->it_interval.tv_usec * 1000u);
        errno = saved_errno;
    }
    return rc;
}

LB_EXPORT int timer_settime(timer_t timer, int flags, const struct itimerspec *new_value,
                            struct itimerspec *old_value)
{
    timer_settime_fn real = __atomic_load_n(&real_timer_settime, __ATOMIC_ACQUIRE);
    if (lb_unlikely(!real)) {
        real = (timer_settime_fn)dlvsym(RTLD_NEXT, "timer_settime", "GLIBC_2.3.3");
        if (!real)
            real = (timer_settime_fn)dlsym(RTLD_NEXT, "timer_settime");
        if (!real) {
            errno = ENOSYS;
            return -1;
        }
        __atomic_store_n(&real_timer_settime, real, __ATOMIC_RELEASE);
    }
    int rc = real(timer, flags, new_value, old_value);
    if (rc == 0 && new_value && !lb_timer_own_call &&
        (new_value->it_interval.tv_sec || new_value->it_interval.tv_nsec)) {
        int saved_errno = errno;
        lb_tick_alias_program_timer("timer_settime",
                                    (uint64_t)new_value->it_interval.tv_sec * 1000000000u +
                                        (uint64_t)new_value->it_interval.tv_nsec);
        errno = saved_errno;
    }
    return rc;
}
