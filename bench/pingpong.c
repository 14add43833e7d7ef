/* Mutex ping-pong: two threads take one mutex N times each, with a tiny
 * critical section, and count inside it how often the lock changed hands
 * (an acquisition by the other thread than the previous one). Unlike
 * bench/handoff (the same loop, run for a time), this one runs a fixed
 * count, and on glibc it settles in the other regime: both threads stay
 * awake, a waiter's futex wait returns at once (the holder is releasing)
 * and its exchange takes the lock, so the lock changes hands every few
 * acquisitions, at a system call each. docs/PERFORMANCE.md, "Two threads
 * trading a mutex".
 *
 *   pingpong N   -> "elapsed_s S", "ops_per_s X", "handoff_rate H" (hand-offs
 *                   per acquisition), "handoffs_per_s R",
 *                   "sleeps_per_kacq Z" (bench.h)
 *
 * Time runs from the first pthread_create to the last join. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "bench.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t acquisitions, handoffs;
static uintptr_t last;
static long n;

static void *worker(void *arg)
{
    uintptr_t me = (uintptr_t)arg;
    for (long i = 0; i < n; i++) {
        pthread_mutex_lock(&lock);
        acquisitions++;
        handoffs += last != me;
        last = me;
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    n = argc > 1 ? atol(argv[1]) : 0;
    if (argc != 2 || n < 1) {
        fprintf(stderr, "usage: %s N\n", argv[0]);
        return 2;
    }
    pthread_t t[2];
    long long t0 = bench_now_ns();
    for (uintptr_t i = 0; i < 2; i++)
        if (pthread_create(&t[i], NULL, worker, (void *)(i + 1)) != 0)
            return 1;
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    long long t1 = bench_now_ns();
    if (acquisitions != 2 * (uint64_t)n) {
        fprintf(stderr, "pingpong: lost updates\n");
        return 1;
    }
    double s = (double)(t1 - t0) / 1e9;
    printf("elapsed_s %.6f\n", s);
    printf("ops_per_s %.0f\n", (double)acquisitions / s);
    printf("handoff_rate %.4f\n", (double)handoffs / (double)acquisitions);
    printf("handoffs_per_s %.0f\n", (double)handoffs / s);
    bench_print_sleeps((double)acquisitions);
    return 0;
}
