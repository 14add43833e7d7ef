/*
 * syscall_forward: libc's syscall() as programs call it, whose results
 * and errno must be the same with lockblame preloaded as without (its
 * wrapper times futex waits, blames futex wakes and forwards everything
 * else). Prints one line per call: the result, errno, and what the call
 * did; tests/integration/syscall_forward.sh compares a native run with a
 * preloaded one. The futex word's address goes to stderr ("word N"), for
 * the driver's look at its sync_object row.
 *
 *   getpid, gettid            forwarded numbers, 0 to 1 argument
 *   an unknown number         ENOSYS
 *   write(2) with 3 arguments a forwarded call that does something
 *   FUTEX_WAIT, value differs EAGAIN at once
 *   FUTEX_WAIT, 20 ms timeout ETIMEDOUT (relative timeout)
 *   FUTEX_WAIT_BITSET, past   ETIMEDOUT (absolute, already passed)
 *   FUTEX_WAIT, bad address   EFAULT
 *   FUTEX_WAKE, no waiter     0 woken
 *   FUTEX_WAKE of a waiter    1 woken, the waiter returns 0
 *   FUTEX_CMP_REQUEUE         forwarded untouched (EAGAIN: value differs)
 */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static uint32_t word;
static long waiter_result;

static void show(const char *what, long rc, int err)
{
    printf("%-28s rc=%ld errno=%s\n", what, rc, rc == -1 ? strerror(err) : "-");
}

#define CALL(what, ...)                  \
    do {                                 \
        errno = 0;                       \
        long rc_ = syscall(__VA_ARGS__); \
        show(what, rc_, errno);          \
    } while (0)

static void *waiter(void *arg)
{
    (void)arg;
    /* loops over spurious wakes, as every futex user does */
    while (__atomic_load_n(&word, __ATOMIC_ACQUIRE) == 0)
        waiter_result = syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
    return NULL;
}

int main(void)
{
    fprintf(stderr, "word %llu\n", (unsigned long long)(uintptr_t)&word);
    errno = 0;
    printf("getpid matches: %d\n", syscall(SYS_getpid) == getpid());
    printf("gettid matches: %d\n", syscall(SYS_gettid) == gettid());
    CALL("unknown number", 100000, 1, 2, 3);
    CALL("write 3 bytes", SYS_write, 1, "ok\n", 3);
    CALL("futex wait, value differs", SYS_futex, &word, FUTEX_WAIT_PRIVATE, 1, NULL, NULL, 0);
    struct timespec rel = { 0, 20000000 };
    CALL("futex wait, 20 ms timeout", SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &rel, NULL, 0);
    struct timespec past;
    clock_gettime(CLOCK_MONOTONIC, &past);
    past.tv_sec -= 1;
    CALL("futex wait_bitset, past", SYS_futex, &word, FUTEX_WAIT_BITSET_PRIVATE, 0, &past, NULL,
         FUTEX_BITSET_MATCH_ANY);
    CALL("futex wait, bad address", SYS_futex, (uint32_t *)8, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
    CALL("futex wake, no waiter", SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    uint32_t other = 0;
    CALL("futex cmp_requeue, differs", SYS_futex, &word, FUTEX_CMP_REQUEUE_PRIVATE, 1, 1, &other,
         5);

    pthread_t t;
    if (pthread_create(&t, NULL, waiter, NULL) != 0)
        return 1;
    /* once the waiter sleeps (or has not started: it then sees 1 and
     * never waits), set the word and wake it */
    struct timespec nap = { 0, 50000000 };
    nanosleep(&nap, NULL);
    __atomic_store_n(&word, 1, __ATOMIC_RELEASE);
    long woken;
    do {
        woken = syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    } while (woken == 0 && pthread_tryjoin_np(t, NULL) == EBUSY);
    if (woken)
        pthread_join(t, NULL);
    printf("futex wake of a waiter: woken %ld, waiter rc=%ld\n", woken > 0 ? 1L : 0L,
           waiter_result);
    return 0;
}
