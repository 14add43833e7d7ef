/* Waits lockblame cannot see: threads blocked on stdio's FILE lock.
 *
 * glibc's FILE lock (flockfile, and the lock every fputc takes once the
 * process has threads) is a private lock whose waits go to the kernel's
 * futex inline (__lll_lock_wait_private), never through pthread. One
 * holder takes the lock with flockfile and keeps it HOLD_MS on the CPU;
 * WAITERS threads meanwhile block in fputc on the same FILE. ROUNDS times.
 * The waiters' blocked time is off CPU and no wait lockblame sees, so it
 * dominates by construction: about WAITERS x ROUNDS x HOLD_MS unseen,
 * against main's join (the one seen wait, about ROUNDS x HOLD_MS).
 *
 * The rounds are sequenced with atomics and sched_yield, not pthread
 * calls, so nothing else waits where lockblame looks. Writes
 * {"workload", "waiters", "blocked_s", "duration_s"} to $GROUND_TRUTH (or
 * stdout): blocked_s is the waiters' time inside fputc, as they timed it. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "gt.h"

#define WAITERS 4
#define ROUNDS  4
#define HOLD_MS 100

static FILE *sink;
static atomic_int locked_round = -1; /* the round whose lock the holder took */
static atomic_int passed;            /* waiters through their fputc this round */
static int64_t blocked_ns[WAITERS];

static void *holder(void *arg)
{
    (void)arg;
    for (int r = 0; r < ROUNDS; r++) {
        flockfile(sink);
        atomic_store(&locked_round, r);
        gt_spin_until(gt_now() + HOLD_MS * 1000000ll);
        funlockfile(sink);
        while (atomic_load(&passed) < WAITERS * (r + 1))
            sched_yield();
    }
    return NULL;
}

static void *waiter(void *arg)
{
    int i = (int)(intptr_t)arg;
    for (int r = 0; r < ROUNDS; r++) {
        while (atomic_load(&locked_round) < r)
            sched_yield();
        int64_t t0 = gt_now();
        fputc('x', sink); /* blocks on the FILE lock until the holder lets go */
        blocked_ns[i] += gt_now() - t0;
        atomic_fetch_add(&passed, 1);
    }
    return NULL;
}

int main(void)
{
    sink = fopen("/dev/null", "w");
    if (!sink)
        gt_die("fopen /dev/null", errno);
    int64_t start = gt_now();
    pthread_t h, w[WAITERS];
    int rc = pthread_create(&h, NULL, holder, NULL);
    for (int i = 0; i < WAITERS && rc == 0; i++)
        rc = pthread_create(&w[i], NULL, waiter, (void *)(intptr_t)i);
    if (rc)
        gt_die("pthread_create", rc);
    pthread_join(h, NULL);
    for (int i = 0; i < WAITERS; i++)
        pthread_join(w[i], NULL);
    double duration = (gt_now() - start) / 1e9;
    fclose(sink);
    double blocked = 0;
    for (int i = 0; i < WAITERS; i++)
        blocked += blocked_ns[i] / 1e9;
    const char *path = getenv("GROUND_TRUTH");
    FILE *out = path ? fopen(path, "w") : stdout;
    if (!out)
        gt_die("fopen $GROUND_TRUTH", errno);
    fprintf(out,
            "{\"workload\": \"unseen_stdio\", \"waiters\": %d, \"blocked_s\": %.6f,"
            " \"duration_s\": %.6f}\n",
            WAITERS, blocked, duration);
    if (out != stdout)
        fclose(out);
    return 0;
}
