/*
 * sem_counts: semaphore acquisitions that lockblame counts in each
 * thread's own table (src/locks/acq_counts.h), made so that every way
 * such a count reaches the profile is used:
 *   - `shared`: two threads each post then wait on it K times; one exits
 *     before the end (its table's count must outlive it), the other is
 *     still alive, parked in a condition wait, when the process exits
 *     (the final write takes its count);
 *   - `many`: main posts then waits on each of ten semaphores in turn, K
 *     times each: more than a thread's 8 slots, so some are counted in
 *     their lb_mon; the first five are destroyed before exit (their
 *     counts are taken at the destroy), the others stay live.
 * Every sem_wait completes: each waiter posts first, and a wait that finds
 * the unit taken by the other thread blocks until that thread's post.
 *
 * Prints "sem_waits N": the sem_waits made, which the profile's sem rows'
 * acquisitions must add up to.
 *
 * Usage: sem_counts [K]   (default 20000)
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define MANY 10

static sem_t shared;
static sem_t many[MANY];
static long k;
static atomic_long waits;
static atomic_int second_done;
static pthread_mutex_t park_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t park = PTHREAD_COND_INITIALIZER;

static void post_then_wait(sem_t *s)
{
    sem_post(s);
    while (sem_wait(s) != 0)
        ; /* (EINTR) */
    atomic_fetch_add(&waits, 1);
}

static void *first(void *arg)
{
    (void)arg;
    for (long i = 0; i < k; i++)
        post_then_wait(&shared);
    return NULL; /* exits: its count is in its table */
}

static void *second(void *arg)
{
    (void)arg;
    for (long i = 0; i < k; i++)
        post_then_wait(&shared);
    atomic_store(&second_done, 1);
    pthread_mutex_lock(&park_lock);
    for (;;) /* alive at exit */
        pthread_cond_wait(&park, &park_lock);
    return NULL;
}

int main(int argc, char **argv)
{
    k = argc > 1 ? atol(argv[1]) : 20000;
    if (k <= 0)
        return 2;
    sem_init(&shared, 0, 0);
    for (int i = 0; i < MANY; i++)
        sem_init(&many[i], 0, 0);
    pthread_t a, b;
    pthread_create(&a, NULL, first, NULL);
    pthread_create(&b, NULL, second, NULL);
    pthread_join(a, NULL);
    while (!atomic_load(&second_done))
        sched_yield();
    for (long i = 0; i < k; i++)
        for (int j = 0; j < MANY; j++)
            post_then_wait(&many[j]);
    for (int j = 0; j < MANY / 2; j++)
        sem_destroy(&many[j]);
    printf("sem_waits %ld\n", atomic_load(&waits));
    fflush(stdout);
    return 0; /* with the second thread parked */
}
