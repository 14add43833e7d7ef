/*
 * spin_hot: a hot pthread spin lock, as bench/handoff.c THREADS SECONDS spin,
 * built -O2 -g. THREADS threads take one spin lock in a loop with a tiny
 * critical section until main stops them; inside the lock each counts its
 * acquisition and whether the previous one was another thread's (a
 * hand-off). The unlock is in hot_release_site(), the lock's only release
 * site. The first 50 ms run in warm_up(), the rest in hot_loop(): the same
 * loop in two calling contexts, so that a profile can tell the first waits
 * (which lockblame times exactly until the lock turns sampled) from the
 * rest.
 *
 * Output (stdout, one "key value" a line):
 *   acquisitions N    total acquisitions (checked against the threads' sums)
 *   handoffs H        acquisitions by another thread than the previous one
 *   elapsed_s S       from the start gate to the last join
 *   handoffs_per_s R  H / S
 * Exit status 0, or 1 if an update was lost or a call failed.
 *
 * Usage: spin_hot [THREADS [SECONDS [destroy]]]   (default 2 threads, 0.6 s)
 *   destroy: pthread_spin_destroy the lock before exiting (else it is
 *   still live at exit)
 */
#define HOT_NAME "spin_hot"
#include "hot_lock.h"

#define WARM_UP_NS 50000000 /* 50 ms */

static pthread_spinlock_t the_lock;

/* The unlock, at a release site of its own. */
static __attribute__((noinline)) void hot_release_site(void)
{
    int rc = pthread_spin_unlock(&the_lock);
    if (rc)
        die("pthread_spin_unlock", rc);
}

/* The first WARM_UP_NS of the run: as hot_loop, in a calling context of
 * its own. (Under LOCKBLAME_SPIN=auto the lock's first waits are timed
 * exactly until it turns sampled; they are counted here, apart from the
 * measured loop.) Returns the acquisitions made. */
static __attribute__((noinline)) uint64_t warm_up(uintptr_t me, int64_t until)
{
    uint64_t mine = 0;
    while ((mine & 63) != 0 || now_ns() < until) {
        int rc = pthread_spin_lock(&the_lock);
        if (rc)
            die("pthread_spin_lock", rc);
        count_acquisition(me);
        hot_release_site();
        mine++;
    }
    return mine;
}

/* Take and release the lock until main says stop. Returns the
 * acquisitions made. */
static __attribute__((noinline)) uint64_t hot_loop(uintptr_t me)
{
    uint64_t mine = 0;
    while (!hot_stopped()) {
        int rc = pthread_spin_lock(&the_lock);
        if (rc)
            die("pthread_spin_lock", rc);
        count_acquisition(me);
        hot_release_site();
        mine++;
    }
    return mine;
}

static void *worker(void *arg)
{
    uintptr_t me = (uintptr_t)arg;
    hot_gate();
    uint64_t mine = warm_up(me, start_ns + WARM_UP_NS);
    mine += hot_loop(me);
    return (void *)(uintptr_t)mine;
}

int main(int argc, char **argv)
{
    int nthreads = argc > 1 ? atoi(argv[1]) : 2;
    double seconds = argc > 2 ? atof(argv[2]) : 0.6;
    int destroy = argc > 3 && strcmp(argv[3], "destroy") == 0;
    if (nthreads < 1 || nthreads > HOT_MAX_THREADS || seconds <= 0 || (argc > 3 && !destroy)) {
        fprintf(stderr, "usage: spin_hot [THREADS [SECONDS [destroy]]]\n");
        return 2;
    }
    int rc = pthread_spin_init(&the_lock, PTHREAD_PROCESS_PRIVATE);
    if (rc)
        die("pthread_spin_init", rc);
    int status = hot_run(nthreads, seconds, worker, NULL);
    if (destroy && (rc = pthread_spin_destroy(&the_lock)) != 0)
        die("pthread_spin_destroy", rc);
    return status;
}
