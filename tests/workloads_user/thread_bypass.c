/* A thread that lockblame's pthread_create never saw: started through
 * libc's own pthread_create, found with dlsym on a handle of libc (as
 * jemalloc finds it with dlsym(RTLD_NEXT, "pthread_create") to start its
 * background threads). It holds a mutex HOLD at a time and releases it
 * in bypass_release, while main waits for it; main measures its own
 * waiting. Prints "waited SECONDS". */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#include "gt_clock.h"

#define ROUNDS 60
#define HOLD   2000000L /* ns */
#define APART  1000000L /* the worker's, between holds; main's is half */

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long sink;
static volatile int started;

__attribute__((noinline)) static void bypass_release(void)
{
    pthread_mutex_unlock(&lock);
    sink++; /* not a tail call */
}

__attribute__((noinline)) static void *bypassed_worker(void *arg)
{
    (void)arg;
    for (int r = 0; r < ROUNDS; r++) {
        pthread_mutex_lock(&lock);
        started = 1;
        gt_spin_ns(HOLD);
        bypass_release();
        gt_spin_ns(APART);
    }
    return NULL;
}

int main(void)
{
    void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    create_fn create = libc ? (create_fn)dlsym(libc, "pthread_create") : NULL;
    pthread_t t;
    if (!create || create(&t, NULL, bypassed_worker, NULL) != 0)
        return 1;
    while (!started)
        ;
    double waited = 0;
    for (int r = 0; r < ROUNDS; r++) {
        double start = gt_now_s();
        pthread_mutex_lock(&lock);
        waited += gt_now_s() - start;
        pthread_mutex_unlock(&lock);
        gt_spin_ns(APART / 2);
    }
    pthread_join(t, NULL);
    printf("waited %.6f\n", waited);
    return 0;
}
