/*
 * stack_mutex_reused: a contended mutex on a function's stack that goes
 * out of scope without pthread_mutex_destroy (as every std::mutex does:
 * its destructor is trivial), its stack then reused with other data. The
 * final write cannot read that mutex's acquisition count any more: the
 * words lockblame kept in the mutex now hold the new frame's data.
 *
 * contend() runs 2 threads x ROUNDS lock/unlock pairs (each holding
 * ~20 us, so they contend) on a stack mutex; scribble() then fills the
 * same stack depth with a pattern that looks like pointers; a second
 * mutex, static and contended the same way, stays valid until exit.
 * Prints "stack_mutex ADDR" and "static_mutex ADDR" (hex) and the
 * acquisitions of each ("static_acquisitions N").
 *
 * Usage: stack_mutex_reused [ROUNDS]   (default 2000)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long rounds = 2000;
static pthread_mutex_t static_mutex = PTHREAD_MUTEX_INITIALIZER;

static void spin_us(long us)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000000L + (t.tv_nsec - t0.tv_nsec) / 1000 < us);
}

static void *worker(void *arg)
{
    pthread_mutex_t *m = arg;
    for (long i = 0; i < rounds; i++) {
        pthread_mutex_lock(m);
        spin_us(20);
        pthread_mutex_unlock(m);
    }
    return NULL;
}

static void run_pair(pthread_mutex_t *m)
{
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        if (pthread_create(&t[i], NULL, worker, m) != 0)
            abort();
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
}

__attribute__((noinline)) static void contend(void)
{
    pthread_mutex_t m; /* never destroyed, as a std::mutex */
    pthread_mutex_init(&m, NULL);
    printf("stack_mutex %p\n", (void *)&m);
    run_pair(&m);
}

__attribute__((noinline)) static void scribble(void)
{
    volatile uintptr_t junk[256];
    for (int i = 0; i < 256; i++)
        junk[i] = (uintptr_t)&junk[i] + 0x35; /* odd values like the tags */
    (void)junk[0];
}

int main(int argc, char **argv)
{
    if (argc > 1)
        rounds = atol(argv[1]);
    contend();
    scribble();
    printf("static_mutex %p\n", (void *)&static_mutex);
    run_pair(&static_mutex);
    printf("static_acquisitions %ld\n", 2 * rounds);
    return 0;
}
