/* The program's periodic timers: setitimer and timer_settime forward to
 * libc unchanged (return value and errno are libc's own); after a call
 * that armed a timer with an interval, the sampler hears of it
 * (sampler/tick_alias.h: the CPU-time timer's tick-bound samples would
 * beat with it). lockblame's own timer backend calls libc's timer_settime
 * (core/real.h) and never comes here.
 *
 * The real functions are looked up on first use: setitimer with dlsym,
 * timer_settime in core's table (lb_real, at its current ABI, GLIBC_2.3.3,
 * the one every program built since glibc 2.3.3 calls). Neither is called
 * by ld.so or inside dlsym. A process that forks looks setitimer up
 * before its first fork: dlsym walks every loaded library's symbol
 * tables, pages a fork child would fault in again (about 0.7 ms in each
 * PostgreSQL backend, which arms a timer at its start). */
#include <dlfcn.h>
#include <errno.h>
#include <sys/time.h>
#include <time.h>

#include "core/hooks.h"
#include "core/real.h"
#include "sampler/tick_alias.h"
#include "util/common.h"

typedef int (*setitimer_fn)(__itimer_which_t, const struct itimerval *, struct itimerval *);

static setitimer_fn real_setitimer;

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

/* libc's setitimer, looked up once (NULL if it cannot be found). */
static setitimer_fn resolve_setitimer(void)
{
    setitimer_fn real = __atomic_load_n(&real_setitimer, __ATOMIC_ACQUIRE);
    if (lb_unlikely(!real)) {
        real = (setitimer_fn)dlsym(RTLD_NEXT, "setitimer");
        if (real)
            __atomic_store_n(&real_setitimer, real, __ATOMIC_RELEASE);
    }
    return real;
}

LB_EXPORT int setitimer(__itimer_which_t which, const struct itimerval *new_value,
                        struct itimerval *old_value)
{
    setitimer_fn real = resolve_setitimer();
    if (!real) {
        errno = ENOSYS;
        return -1;
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
    if (lb_unlikely(lb_real.timer_settime == NULL))
        lb_real_resolve();
    if (lb_real.timer_settime == NULL) {
        errno = ENOSYS;
        return -1;
    }
    int rc = lb_real.timer_settime(timer, flags, new_value, old_value);
    if (rc == 0 && new_value && (new_value->it_interval.tv_sec || new_value->it_interval.tv_nsec)) {
        int saved_errno = errno;
        lb_tick_alias_program_timer("timer_settime",
                                    (uint64_t)new_value->it_interval.tv_sec * 1000000000u +
                                        (uint64_t)new_value->it_interval.tv_nsec);
        errno = saved_errno;
    }
    return rc;
}

/* Before a fork, in the forking thread: the look-up done once, here,
 * not in every child (errno kept). */
static void timers_fork_prepare(void)
{
    if (__atomic_load_n(&real_setitimer, __ATOMIC_ACQUIRE))
        return;
    int saved_errno = errno;
    resolve_setitimer();
    errno = saved_errno;
}

LB_PROCESS_HOOKS(timers_hooks) = {
    .rank = LB_RANK_INTERPOSE,
    .fork_prepare = timers_fork_prepare,
};
