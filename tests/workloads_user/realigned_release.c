/*
 * realigned_release: a contended mutex released inside a function that
 * realigns its stack with a dynamic realignment pointer (gcc's DRAP: an
 * over-aligned local beside a variable-length array, as AVX code built
 * with -mstackrealign or x265's row filters do). Its CFI gives the CFA as
 * an expression (DW_OP_breg6 N; DW_OP_deref) and rbp's save slot as
 * another (DW_OP_breg6 0); tests/integration/realigned_frames.sh checks
 * that the walk goes through it to its callers.
 *
 * Two threads (main + 1) each run ROUNDS rounds of: lock, then
 * row_caller() -> release_realigned(), which holds the lock until the
 * other thread is on its way into pthread_mutex_lock (or ARRIVAL_WAIT_NS
 * has passed: it has no rounds left), then HOLD_NS more (asleep), and
 * unlocks it. The other thread waits meanwhile, however the two are
 * scheduled, so the blame lands on release_realigned's unlock, whose
 * callers are row_caller and round_loop. Prints the names the test looks
 * for.
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

enum {
    ROUNDS = 300,
    HOLD_NS = 200000,
    ARRIVAL_WAIT_NS = 20000000
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile uint64_t sink;
static int arriving; /* threads about to call pthread_mutex_lock */

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* In the hold: until the other thread is on its way to wait for it. */
static void wait_for_arrival(void)
{
    uint64_t give_up = now_ns() + ARRIVAL_WAIT_NS;
    while (!__atomic_load_n(&arriving, __ATOMIC_ACQUIRE) && now_ns() < give_up)
        sched_yield();
}

__attribute__((noinline)) static void touch(char *p)
{
    __asm__ volatile("" : : "r"(p) : "memory");
}

/* The over-aligned buffer and the VLA make gcc realign through DRAP. */
__attribute__((noinline)) static void release_realigned(int n)
{
    _Alignas(64) char row[256];
    char scratch[n];
    memset(row, 1, sizeof row);
    touch(row);
    touch(scratch);
    wait_for_arrival();
    struct timespec hold = { 0, HOLD_NS };
    nanosleep(&hold, NULL);
    pthread_mutex_unlock(&lock);
    touch(row); /* keeps the unlock a real call (no tail jump) */
}

__attribute__((noinline)) static void row_caller(int n)
{
    release_realigned(n);
    sink = sink + 1;
}

__attribute__((noinline)) static void round_loop(void)
{
    for (int i = 0; i < ROUNDS; i++) {
        __atomic_add_fetch(&arriving, 1, __ATOMIC_RELEASE);
        pthread_mutex_lock(&lock);
        __atomic_sub_fetch(&arriving, 1, __ATOMIC_RELEASE);
        row_caller(16 + (i & 7));
        struct timespec rest = { 0, HOLD_NS / 4 };
        nanosleep(&rest, NULL);
    }
}

static void *thread_main(void *arg)
{
    round_loop();
    return arg;
}

int main(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, thread_main, NULL) != 0)
        return 1;
    round_loop();
    pthread_join(t, NULL);
    printf("site release_realigned callers row_caller round_loop\n");
    return 0;
}
