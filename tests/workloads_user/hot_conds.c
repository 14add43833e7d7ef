/* Many hot condition variables, re-initialized between rounds: more conds
 * than lockblame has slots for sharded waits (src/blame/signal_waits.h,
 * 64), so some take the meta path, and every round's pthread_cond_destroy
 * and pthread_cond_init free the slots for the next round's conds.
 *
 * One waiter and one signaller share CONDS conds, each with its own flag,
 * under one mutex. In each of ROUNDS rounds the signaller raises the flags
 * in turn (each once the waiter has taken it, and ~20 us later, so that
 * the waiter waits), PASSES times over, and signals; the waiter waits for each flag,
 * timing its own waits around pthread_cond_wait (CLOCK_MONOTONIC).
 *
 * Prints "waits N" (the pthread_cond_wait calls that returned), "wait_ns
 * T" (their total time) and "conds_waited C" (the conds, counted once per
 * round, that had at least one of them: on a busy machine the waiter often
 * comes to a flag already raised and does not wait), built -O2 -g like a
 * user's program.
 *
 *   hot_conds [CONDS [ROUNDS [PASSES]]]     default 80 3 40 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MAX_CONDS 256

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t conds[MAX_CONDS];
static int flags[MAX_CONDS];
static int nconds = 80, rounds = 3, passes = 40;
static long waits, conds_waited;
static uint64_t wait_ns;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *waiter(void *arg)
{
    (void)arg;
    char waited[MAX_CONDS] = { 0 }; /* this round's conds that had a wait */
    for (int p = 0; p < passes; p++) {
        for (int i = 0; i < nconds; i++) {
            pthread_mutex_lock(&lock);
            while (!flags[i]) {
                uint64_t t0 = now_ns();
                pthread_cond_wait(&conds[i], &lock);
                wait_ns += now_ns() - t0;
                waits++;
                conds_waited += !waited[i];
                waited[i] = 1;
            }
            flags[i] = 0;
            pthread_mutex_unlock(&lock);
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        nconds = atoi(argv[1]);
    if (argc > 2)
        rounds = atoi(argv[2]);
    if (argc > 3)
        passes = atoi(argv[3]);
    if (nconds < 1 || nconds > MAX_CONDS || rounds < 1 || passes < 1) {
        fprintf(stderr, "usage: hot_conds [CONDS (1-%d) [ROUNDS [PASSES]]]\n", MAX_CONDS);
        return 2;
    }
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < nconds; i++)
            pthread_cond_init(&conds[i], NULL);
        pthread_t t;
        pthread_create(&t, NULL, waiter, NULL);
        for (int p = 0; p < passes; p++) {
            for (int i = 0; i < nconds; i++) {
                pthread_mutex_lock(&lock);
                while (flags[i]) { /* the waiter has not taken it yet */
                    pthread_mutex_unlock(&lock);
                    sched_yield();
                    pthread_mutex_lock(&lock);
                }
                pthread_mutex_unlock(&lock);
                /* ~20 us outside the lock: the waiter is waiting by now */
                for (uint64_t until = now_ns() + 20000; now_ns() < until;)
                    ;
                pthread_mutex_lock(&lock);
                flags[i] = 1;
                pthread_cond_signal(&conds[i]);
                pthread_mutex_unlock(&lock);
            }
        }
        pthread_join(t, NULL);
        for (int i = 0; i < nconds; i++)
            pthread_cond_destroy(&conds[i]);
    }
    printf("waits %ld\nwait_ns %llu\nconds_waited %ld\n", waits, (unsigned long long)wait_ns,
           conds_waited);
    return 0;
}
