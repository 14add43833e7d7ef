/*
 * many_contended: more contended mutexes than lockblame has slots for
 * mutexes blamed by holder samples (64), each contended exactly once.
 *
 * For each of N mutexes in turn, the first thread locks it and says so;
 * the second then calls pthread_mutex_lock on it and must wait, because
 * the first holds it until a waiter has marked the lock word (glibc's 2:
 * "someone may sleep on it", which a waiter writes before it sleeps, with
 * or without lockblame), then 1 ms more. So every mutex has one contended
 * acquisition, made while it is held, however late a loaded machine runs
 * the second thread (a fixed 2 ms hold lost most of them under load). Under
 * LOCKBLAME_MUTEX=sampled each contention asks for a slot: the first 64
 * get one, the rest stay exact (tests/integration/mutex_slots.sh).
 *
 * Usage: many_contended [N]   (default 80) -> "contended N"
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t *locks;
static int n;
static atomic_int held = -1;  /* index the first thread holds, announced */
static atomic_int taken = -1; /* index the second thread has acquired */

static void sleep_ms(long ms)
{
    struct timespec ts = { 0, ms * 1000000 };
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static void *holder(void *arg)
{
    (void)arg;
    for (int i = 0; i < n; i++) {
        pthread_mutex_lock(&locks[i]);
        atomic_store(&held, i);
        /* until the other thread waits on it (at most ~10 s) */
        for (int k = 0;
             k < 10000 && __atomic_load_n(&locks[i].__data.__lock, __ATOMIC_ACQUIRE) != 2; k++)
            sleep_ms(1);
        sleep_ms(1);
        pthread_mutex_unlock(&locks[i]);
        while (atomic_load(&taken) < i) /* it got the lock: next one */
            sleep_ms(0);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    n = argc > 1 ? atoi(argv[1]) : 80;
    if (n < 1 || n > 10000) {
        fprintf(stderr, "usage: %s [N 1..10000]\n", argv[0]);
        return 2;
    }
    locks = calloc((size_t)n, sizeof *locks);
    if (!locks)
        return 1;
    for (int i = 0; i < n; i++)
        pthread_mutex_init(&locks[i], NULL);
    pthread_t t;
    if (pthread_create(&t, NULL, holder, NULL) != 0)
        return 1;
    for (int i = 0; i < n; i++) {
        while (atomic_load(&held) < i)
            sched_yield();
        pthread_mutex_lock(&locks[i]); /* waits: the holder has it for 2 ms */
        pthread_mutex_unlock(&locks[i]);
        atomic_store(&taken, i);
    }
    pthread_join(t, NULL);
    printf("contended %d\n", n);
    return 0;
}
