/*
 * spin_counts: a known number of contended waits on each of three spin
 * locks, made so that every way a thread's count of sampled spin waits
 * reaches the lock's record is used (src/blame/spin_sampled.h: a thread
 * keeps its count until it waits on another lock, exits, or the final
 * write):
 *   - thread B waits K times on lock 0, then K times on lock 1 (the
 *     switch hands lock 0's count on), then exits (lock 1's count goes
 *     with its exit);
 *   - thread C waits K times on lock 2, then blocks in a condition wait
 *     that never ends: the process exits with C alive, and the final
 *     write must take lock 2's count from C's record.
 * Each wait is forced: the holder takes the lock, announces it, waits
 * until the waiter says it is about to call pthread_spin_lock, and holds
 * the lock 2 ms more, so the waiter's call finds it held (unless the
 * waiter is kept off its CPU for those 2 ms: then it does not wait).
 *
 * Usage: spin_counts [K]   (default 20) -> "waits K per lock, 3 locks"
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum {
    LOCKS = 3
};

static pthread_spinlock_t locks[LOCKS];
static int k;
static atomic_int held = -1;  /* the holder holds wait number `held` */
static atomic_int about = -1; /* the waiter is about to wait for it */
static atomic_int taken = -1; /* the waiter got it */
static pthread_mutex_t park_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t park = PTHREAD_COND_INITIALIZER;
static atomic_int parked;

static void sleep_ms(long ms)
{
    struct timespec ts = { 0, ms * 1000000 };
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* Waits number first .. first + k - 1 are on lock l. */
static void wait_k_times(int l, int first)
{
    for (int i = first; i < first + k; i++) {
        while (atomic_load(&held) < i)
            sleep_ms(0);
        atomic_store(&about, i);
        pthread_spin_lock(&locks[l]); /* held 2 ms more: waits */
        pthread_spin_unlock(&locks[l]);
        atomic_store(&taken, i);
    }
}

static void hold_k_times(int l, int first)
{
    for (int i = first; i < first + k; i++) {
        pthread_spin_lock(&locks[l]);
        atomic_store(&held, i);
        while (atomic_load(&about) < i)
            ;
        sleep_ms(2);
        pthread_spin_unlock(&locks[l]);
        while (atomic_load(&taken) < i)
            sleep_ms(0);
    }
}

static void *waiter_b(void *arg)
{
    (void)arg;
    wait_k_times(0, 0);
    wait_k_times(1, k);
    return NULL;
}

static void *waiter_c(void *arg)
{
    (void)arg;
    wait_k_times(2, 2 * k);
    pthread_mutex_lock(&park_lock);
    atomic_store(&parked, 1);
    for (;;)
        pthread_cond_wait(&park, &park_lock); /* never signalled */
    return NULL;
}

int main(int argc, char **argv)
{
    k = argc > 1 ? atoi(argv[1]) : 20;
    if (k < 1 || k > 100000) {
        fprintf(stderr, "usage: %s [K 1..100000]\n", argv[0]);
        return 2;
    }
    for (int l = 0; l < LOCKS; l++)
        pthread_spin_init(&locks[l], PTHREAD_PROCESS_PRIVATE);
    pthread_t b, c;
    if (pthread_create(&b, NULL, waiter_b, NULL) != 0)
        return 1;
    hold_k_times(0, 0);
    hold_k_times(1, k);
    pthread_join(b, NULL);
    if (pthread_create(&c, NULL, waiter_c, NULL) != 0)
        return 1;
    hold_k_times(2, 2 * k);
    while (!atomic_load(&parked))
        sleep_ms(1);
    pthread_mutex_lock(&park_lock); /* C is inside its wait now */
    pthread_mutex_unlock(&park_lock);
    printf("waits %d per lock, %d locks\n", k, LOCKS);
    fflush(stdout);
    exit(0); /* C still waits */
}
