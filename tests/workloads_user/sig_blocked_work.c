/* Work in a thread that blocks every signal (docs/DESIGN.md "Metrics"), built -O2.
 *
 *   blocked_worker  blocks all signals, computes until its own CPU clock
 *                   shows BLOCKED_MS, then asks for any pending signal
 *                   with a zero timeout (natively: none, EAGAIN);
 *   free_worker     computes FREE_MS of CPU with signals as inherited.
 *
 * Prints each thread's own CPU time (CLOCK_THREAD_CPUTIME_ID, user and
 * kernel) as ground truth, and the result of the zero-timeout wait, which
 * must read the same natively and preloaded: a profiler may not leave a
 * signal of its own pending where the program can collect it. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "thread_cpu.h"

#define BLOCKED_MS 400
#define FREE_MS    200

static volatile unsigned long sink;

/* Computes until this thread has used ms of CPU; returns its CPU time. */
static double burn(int ms)
{
    unsigned long x = 88172645463325252ul;
    double start = thread_cpu_s(), now;
    do {
        xorshift_rounds(&x, 100000);
        sink += x;
        now = thread_cpu_s();
    } while (now - start < ms / 1000.0);
    return now;
}

static double blocked_cpu, free_cpu;
static const char *wait_result = "?";

static void *blocked_worker(void *arg)
{
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    blocked_cpu = burn(BLOCKED_MS);
    struct timespec zero = { 0, 0 };
    int s = sigtimedwait(&all, NULL, &zero);
    wait_result = s < 0 && errno == EAGAIN ? "EAGAIN" : "a signal";
    blocked_cpu = thread_cpu_s();
    return arg;
}

static void *free_worker(void *arg)
{
    free_cpu = burn(FREE_MS);
    return arg;
}

int main(void)
{
    pthread_t a, b;
    if (pthread_create(&a, NULL, blocked_worker, NULL) ||
        pthread_create(&b, NULL, free_worker, NULL))
        return 1;
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("zero-timeout wait in the blocked thread: %s\n", wait_result);
    printf("cpu_s blocked_worker %.6f\n", blocked_cpu);
    printf("cpu_s free_worker %.6f\n", free_cpu);
    return 0;
}
