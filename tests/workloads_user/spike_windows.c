/*
 * spike_windows: contention only in a known interval, for the time
 * windows (docs/DESIGN.md "Time windows"), built -O2 -g.
 *
 * WORKERS threads run for TOTAL_MS. Outside [FROM_MS, TO_MS) each does
 * calm work on a mutex of its own (never contended). Inside it, all take
 * one shared mutex in spike_holder(), each holding it HOLD_US, so the
 * others wait and spike_holder's unlock takes their blame.
 *
 * Truth (one line each, wall clock in seconds): "spike_from_unix T",
 * "spike_to_unix T" (when the first spike hold began and the last ended),
 * "spike_wait_s S" (the workers' own timing of their waits for the shared
 * mutex: what spike_holder's blame plus hand-off must add up to).
 *
 * With HOLD_FILE, main says "workers done" on stderr once the workers
 * have ended and then waits until HOLD_FILE exists before it prints the
 * truth and exits: a test reads the running process's windows meanwhile.
 *
 * Usage: spike_windows [TOTAL_MS FROM_MS TO_MS [HOLD_FILE]]
 *        (default 6000 2000 4000)
 */
#include <unistd.h>

#include <stdatomic.h>

#include "gt.h"

#define WORKERS 3
#define HOLD_US 3000

static pthread_mutex_t shared = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t own[WORKERS];
static int64_t start, from, to, end;
static _Atomic int64_t first_hold = INT64_MAX, last_release;
static _Atomic int64_t waited_ns;

static double unix_of(int64_t mono)
{
    struct timespec r, m;
    clock_gettime(CLOCK_REALTIME, &r);
    clock_gettime(CLOCK_MONOTONIC, &m);
    int64_t offset =
        ((int64_t)r.tv_sec * 1000000000 + r.tv_nsec) - ((int64_t)m.tv_sec * 1000000000 + m.tv_nsec);
    return (double)(mono + offset) / 1e9;
}

static __attribute__((noinline)) void spike_holder(void)
{
    int64_t asked = gt_now();
    pthread_mutex_lock(&shared);
    int64_t got = gt_now();
    atomic_fetch_add(&waited_ns, got - asked);
    int64_t seen = atomic_load(&first_hold);
    while (got < seen && !atomic_compare_exchange_weak(&first_hold, &seen, got))
        ;
    gt_spin_until(got + HOLD_US * 1000);
    atomic_store(&last_release, gt_now());
    pthread_mutex_unlock(&shared);
    __asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void calm_work(int me)
{
    pthread_mutex_lock(&own[me]);
    gt_spin_until(gt_now() + 500000);
    pthread_mutex_unlock(&own[me]);
    gt_sleep_until(gt_now() + 1500000);
    __asm__ volatile("" ::: "memory");
}

static void *worker(void *arg)
{
    int me = (int)(intptr_t)arg;
    for (int64_t now = gt_now(); now < end; now = gt_now()) {
        if (now >= from && now < to)
            spike_holder();
        else
            calm_work(me);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int total = argc > 3 ? atoi(argv[1]) : 6000;
    int from_ms = argc > 3 ? atoi(argv[2]) : 2000;
    int to_ms = argc > 3 ? atoi(argv[3]) : 4000;
    if (total < 1 || from_ms < 0 || to_ms <= from_ms || to_ms > total) {
        fprintf(stderr, "usage: spike_windows [TOTAL_MS FROM_MS TO_MS]\n");
        return 2;
    }
    start = gt_now();
    from = start + (int64_t)from_ms * 1000000;
    to = start + (int64_t)to_ms * 1000000;
    end = start + (int64_t)total * 1000000;
    pthread_t th[WORKERS];
    for (int i = 0; i < WORKERS; i++) {
        pthread_mutex_init(&own[i], NULL);
        int rc = pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
        if (rc)
            gt_die("pthread_create", rc);
    }
    for (int i = 0; i < WORKERS; i++)
        pthread_join(th[i], NULL);
    if (argc > 4) {
        fprintf(stderr, "workers done\n");
        while (access(argv[4], F_OK) != 0)
            gt_sleep_until(gt_now() + 10000000);
    }
    printf("spike_from_unix %.6f\nspike_to_unix %.6f\nspike_wait_s %.6f\n",
           unix_of(atomic_load(&first_hold)), unix_of(atomic_load(&last_release)),
           atomic_load(&waited_ns) / 1e9);
    return 0;
}
