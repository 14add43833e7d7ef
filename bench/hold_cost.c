/* What one contended hold costs lockblame, without needing two threads
 * to run at once: a mutex whose lb_mon says one thread waits; each
 * iteration is a barging acquisition (the threaded inline lock's step
 * for a mutex that threads wait on: glibc's attempt, then the hold's
 * start read inside it) and the accounted release (hold_ends,
 * the deposit on the release's calling context, the real unlock). This
 * is the work lockblame adds to every hold of a contended lock in
 * bench/handoff and bench/taskq, on the one thread, so its time and
 * instruction count are steady on a loaded machine where the two-thread
 * rows are not. Links the library's objects (no interposition).
 *
 *   hold_cost N   -> "ns_per_hold X" (after a 60 ms pause, so the clock
 *                    has calibrated as it would have in a program) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "core/phase.h"
#include "core/real.h"
#include "core/thread.h"
#include "locks/mutex_ops.h"
#include "util/clock.h"

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

__attribute__((noinline)) static void holds(lb_thread_t *self, pthread_mutex_t *m, lb_mon_t *mon,
                                            long n)
{
    uintptr_t site = (uintptr_t)__builtin_return_address(0);
    for (long i = 0; i < n; i++) {
        if (!lb_mutex_normal_try(self, m) ||
            lb_mutex_acquired_unusual(self, m, *lb_mutex_stash(m)) != 0)
            abort();
        lb_mutex_unlock_accounted(self, m, mon, site);
    }
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    if (n < 1 || lb_real_resolve() != 0)
        return 2;
    lb_runtime_stamp_start();
    lb_thread_t *self = lb_thread_attach(0, 0, 0);
    if (!self || lb_mon_pool_setup() != 0)
        return 1;
    static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    lb_mon_t *mon = lb_mon_alloc(&m, LB_OBJ_MUTEX);
    if (!mon)
        return 1;
    *lb_mutex_stash(&m) = lb_mutex_stash_of(mon);
    mon->waiters = 1; /* as if a thread waited all along */
    struct timespec pause = { 0, 60000000 };
    nanosleep(&pause, NULL);
    holds(self, &m, mon, n / 10 + 1); /* warm: the context cache, the object record */
    long long t0 = now_ns();
    holds(self, &m, mon, n);
    long long t1 = now_ns();
    printf("ns_per_hold %.1f\n", (double)(t1 - t0) / (double)n);
    return 0;
}
