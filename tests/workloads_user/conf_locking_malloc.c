/* A program whose allocator takes a pthread mutex, as jemalloc and
 * tcmalloc do on their slow paths. glibc calls the allocator while it
 * holds a thread's own lock (pthread_getattr_np reallocs the affinity
 * mask under it), so a monitored lock taken there must not make lockblame
 * attach the thread again: the attach would call pthread_getattr_np
 * inside that lock and wait for itself for ever. Threads are created in
 * rounds, each allocates under contention and reads its own attributes;
 * the program checks its counts and stack bounds. */
#include "conf.h"

#include <stdint.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void __libc_free(void *p);

static pthread_mutex_t heap_lock = PTHREAD_MUTEX_INITIALIZER;
static long heap_calls; /* under heap_lock */

#define LOCKED(call)                      \
    do {                                  \
        pthread_mutex_lock(&heap_lock);   \
        heap_calls++;                     \
        call;                             \
        pthread_mutex_unlock(&heap_lock); \
    } while (0)

void *malloc(size_t size)
{
    void *p;
    LOCKED(p = __libc_malloc(size));
    return p;
}

void *calloc(size_t n, size_t size)
{
    void *p;
    LOCKED(p = __libc_calloc(n, size));
    return p;
}

void *realloc(void *old, size_t size)
{
    void *p;
    LOCKED(p = __libc_realloc(old, size));
    return p;
}

void free(void *p)
{
    if (p)
        LOCKED(__libc_free(p));
}

#define ROUNDS  20
#define THREADS 4
#define ALLOCS  2000

static void *worker(void *arg)
{
    uint64_t seed = (uintptr_t)arg;
    char *keep[16] = { 0 };
    for (int i = 0; i < ALLOCS; i++) {
        seed = seed * 6364136223846793005u + 1442695040888963407u;
        int k = (int)((seed >> 60) & 15);
        free(keep[k]);
        keep[k] = malloc(16 + (size_t)((seed >> 40) % 512));
        CONF_EXPECT(keep[k] != NULL, "malloc failed");
    }
    for (int k = 0; k < 16; k++)
        free(keep[k]);
    pthread_attr_t attr;
    void *lo = NULL;
    size_t size = 0;
    CONF_EXPECT(pthread_getattr_np(pthread_self(), &attr) == 0, "pthread_getattr_np failed");
    CONF_EXPECT(pthread_attr_getstack(&attr, &lo, &size) == 0, "pthread_attr_getstack failed");
    pthread_attr_destroy(&attr);
    char here;
    CONF_EXPECT(&here >= (char *)lo && &here < (char *)lo + size, "stack bounds miss the stack");
    return NULL;
}

int main(void)
{
    for (int r = 0; r < ROUNDS; r++) {
        pthread_t t[THREADS];
        for (int i = 0; i < THREADS; i++)
            CONF_EXPECT(
                pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(r * THREADS + i + 1)) == 0,
                "pthread_create failed");
        for (int i = 0; i < THREADS; i++)
            pthread_join(t[i], NULL);
    }
    pthread_mutex_lock(&heap_lock);
    long calls = heap_calls;
    pthread_mutex_unlock(&heap_lock);
    CONF_EXPECT(calls >= (long)ROUNDS * THREADS * ALLOCS, "%ld allocator calls", calls);
    printf("%d rounds of %d threads allocated through a locking allocator\n", ROUNDS, THREADS);
    return conf_exit_status();
}
