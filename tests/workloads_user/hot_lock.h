/* Shared by the hot-lock workloads (spin_hot.c, mutex_hot.c): THREADS
 * workers released together through a start gate, run until main says
 * stop, and report the acquisitions and hand-offs they counted under the
 * lock, and the run's parallelism: its CPU time over its wall time (about
 * THREADS on an idle machine; far less where other processes keep the
 * workers off their CPUs, so that they seldom run at once). Each workload names itself in HOT_NAME before including this. */
#ifndef HOT_LOCK_H
#define HOT_LOCK_H
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HOT_MAX_THREADS 64

static uint64_t acquisitions; /* under the workload's lock */
static uint64_t handoffs;     /* under the workload's lock */
static uintptr_t last_owner;  /* under the lock: 1 + the last acquirer's index */
static int ready, go, stop;
static int64_t start_ns; /* written before go */

static void die(const char *what, int rc)
{
    fprintf(stderr, HOT_NAME ": %s: %s\n", what, strerror(rc));
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

/* In a worker, first: wait at the start gate. */
static void hot_gate(void)
{
    __atomic_add_fetch(&ready, 1, __ATOMIC_ACQ_REL);
    while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
        ;
}

static int hot_stopped(void)
{
    return __atomic_load_n(&stop, __ATOMIC_RELAXED);
}

/* Run nthreads workers (each returns its acquisitions, given 1 + its
 * index) for `seconds`, and on after that until done() says so (if done is
 * not NULL) or 20 times `seconds` have passed; check the sum against the
 * lock's count, and print the five common lines. Returns main's exit
 * status. */
static int hot_run(int nthreads, double seconds, void *(*worker)(void *), int (*done)(void))
{
    pthread_t tids[HOT_MAX_THREADS];
    for (int i = 0; i < nthreads; i++) {
        int rc = pthread_create(&tids[i], NULL, worker, (void *)(uintptr_t)(i + 1));
        if (rc)
            die("pthread_create", rc);
    }
    while (__atomic_load_n(&ready, __ATOMIC_ACQUIRE) < nthreads)
        ;
    struct timespec cpu0, cpu1;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu0);
    int64_t t0 = start_ns = now_ns();
    __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
    for (;;) {
        struct timespec nap = { 0, 10 * 1000 * 1000 };
        nanosleep(&nap, NULL);
        double ran = (double)(now_ns() - t0) / 1e9;
        if (ran >= seconds && (!done || done() || ran >= 20 * seconds))
            break;
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    uint64_t sum = 0;
    for (int i = 0; i < nthreads; i++) {
        void *r;
        int rc = pthread_join(tids[i], &r);
        if (rc)
            die("pthread_join", rc);
        sum += (uintptr_t)r;
    }
    double elapsed = (double)(now_ns() - t0) / 1e9;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu1);
    double cpu = (double)(cpu1.tv_sec - cpu0.tv_sec) + (double)(cpu1.tv_nsec - cpu0.tv_nsec) / 1e9;
    if (sum != acquisitions) {
        fprintf(stderr, HOT_NAME ": lost updates: threads counted %llu, the lock %llu\n",
                (unsigned long long)sum, (unsigned long long)acquisitions);
        return 1;
    }
    printf("acquisitions %llu\n", (unsigned long long)acquisitions);
    printf("handoffs %llu\n", (unsigned long long)handoffs);
    printf("elapsed_s %.6f\n", elapsed);
    printf("handoffs_per_s %.0f\n", (double)handoffs / elapsed);
    printf("parallelism %.2f\n", cpu / elapsed); /* CPUs the run kept busy, on average */
    return 0;
}
#endif
