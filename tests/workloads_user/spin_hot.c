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
 * Usage: spin_hot [THREADS [SECONDS]]   (default 2 threads, 0.6 s)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_THREADS 64
#define WARM_UP_NS 50000000 /* 50 ms */

static pthread_spinlock_t the_lock;
static uint64_t acquisitions;  /* under the_lock */
static uint64_t handoffs;      /* under the_lock */
static uintptr_t last_owner;   /* under the_lock: 1 + the last acquirer's index */
static int ready, go, stop;
static int64_t start_ns;       /* written before go */

static void die(const char *what, int rc)
{
    fprintf(stderr, "spin_hot: %s: %s\n", what, strerror(rc));
    exit(1);
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Under the lock: one more acquisition, by me. */
static inline void count_acquisition(uintptr_t me)
{
    acquisitions++;
    handoffs += last_owner != me;
    last_owner = me;
}

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
    while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
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
    __atomic_add_fetch(&ready, 1, __ATOMIC_ACQ_REL);
    while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
        ;
    uint64_t mine = warm_up(me, start_ns + WARM_UP_NS);
    mine += hot_loop(me);
    return (void *)(uintptr_t)mine;
}

int main(int argc, char **argv)
{
    int nthreads = argc > 1 ? atoi(argv[1]) : 2;
    double seconds = argc > 2 ? atof(argv[2]) : 0.6;
    if (nthreads < 1 || nthreads > MAX_THREADS || seconds <= 0) {
        fprintf(stderr, "usage: spin_hot [THREADS [SECONDS]]\n");
        return 2;
    }
    int rc = pthread_spin_init(&the_lock, PTHREAD_PROCESS_PRIVATE);
    if (rc)
        die("pthread_spin_init", rc);
    pthread_t tids[MAX_THREADS];
    for (int i = 0; i < nthreads; i++) {
        rc = pthread_create(&tids[i], NULL, worker, (void *)(uintptr_t)(i + 1));
        if (rc)
            die("pthread_create", rc);
    }
    while (__atomic_load_n(&ready, __ATOMIC_ACQUIRE) < nthreads)
        ;
    int64_t t0 = start_ns = now_ns();
    __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
    struct timespec nap = { (time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9) };
    while (nanosleep(&nap, &nap) != 0)
        ;
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    uint64_t sum = 0;
    for (int i = 0; i < nthreads; i++) {
        void *r;
        rc = pthread_join(tids[i], &r);
        if (rc)
            die("pthread_join", rc);
        sum += (uintptr_t)r;
    }
    double elapsed = (double)(now_ns() - t0) / 1e9;
    if (sum != acquisitions) {
        fprintf(stderr, "spin_hot: lost updates: threads counted %llu, the lock %llu\n",
                (unsigned long long)sum, (unsigned long long)acquisitions);
        return 1;
    }
    printf("acquisitions %llu\n", (unsigned long long)acquisitions);
    printf("handoffs %llu\n", (unsigned long long)handoffs);
    printf("elapsed_s %.6f\n", elapsed);
    printf("handoffs_per_s %.0f\n", (double)handoffs / elapsed);
    return 0;
}
