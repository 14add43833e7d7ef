/*
 * stripped_locks: a contended mutex whose release site is a static
 * function, for tests/integration/stripped_names.sh, which builds it -O2 -g
 * as users do, then strips it (adding MiniDebugInfo, or keeping .dynsym
 * names) and checks that the report still names the release site.
 *
 * Two threads (main + 1) each run ROUNDS rounds of: lock, hold for
 * HOLD_NS in hold_and_release(), unlock there, then a little work. The other
 * thread waits meanwhile, so nearly all blame lands on
 * hold_and_release's unlock. Prints the function names the test looks
 * for, so the names are the program's own, not the test's.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

enum {
    ROUNDS = 400,
    HOLD_NS = 200000
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile uint64_t sink;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void spin_for(uint64_t ns)
{
    uint64_t end = now_ns() + ns;
    while (now_ns() < end)
        sink = sink + 1;
}

/* Holds the lock for HOLD_NS (asleep, so the other thread waits for it even
 * on a loaded machine) and releases it: the release site. Static, so its
 * name is only in .symtab (or MiniDebugInfo) once stripped. The work after
 * the unlock keeps the unlock a real call (no tail jump). */
__attribute__((noinline)) static void hold_and_release(void)
{
    struct timespec hold = { 0, HOLD_NS };
    nanosleep(&hold, NULL);
    pthread_mutex_unlock(&lock);
    sink = sink + 1;
}

/* Exported (with -rdynamic it is in .dynsym): hold_and_release's caller,
 * for the .dynsym case. */
__attribute__((noinline)) void exported_hold_and_release(void)
{
    hold_and_release();
    sink = sink + 1;
}

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        pthread_mutex_lock(&lock);
        exported_hold_and_release();
        spin_for(HOLD_NS / 4); /* let the other thread take the lock */
    }
    return NULL;
}

int main(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL) != 0)
        return 1;
    worker(NULL);
    pthread_join(t, NULL);
    printf("release site: hold_and_release exported_hold_and_release\n");
    return 0;
}
