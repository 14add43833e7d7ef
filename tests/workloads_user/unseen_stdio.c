/* Waits lockblame cannot see: threads blocked on stdio's FILE lock.
 *
 * glibc's FILE lock (flockfile, and the lock every fputc takes once the
 * process has threads) is a private lock whose waits go to the kernel's
 * futex inline (__lll_lock_wait_private), never through pthread. One
 * holder takes the lock with flockfile and keeps it HOLD_MS on the CPU;
 * WAITERS threads meanwhile block in fputc on the same FILE. ROUNDS times.
 * The waiters' blocked time is off CPU and no wait lockblame sees, so it
 * dominates by construction: about WAITERS x ROUNDS x HOLD_MS unseen,
 * against main's join (the one seen wait, about ROUNDS x HOLD_MS).
 *
 * The rounds are sequenced with atomics and sched_yield, not pthread
 * calls, so nothing else waits where lockblame looks. Writes
 * {"workload", "waiters", "blocked_s", "blocked_off_cpu_s", "duration_s"}
 * to $GROUND_TRUTH (or stdout): blocked_s is the waiters' time inside
 * fputc, as they timed it; blocked_off_cpu_s the part of it they were
 * neither on a CPU nor runnable (less their CPU time and the run delay
 * the kernel's schedstat counted meanwhile), which a loaded machine does
 * not inflate. */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "gt.h"

#define WAITERS 4
#define ROUNDS  4
#define HOLD_MS 150

static FILE *sink;
static atomic_int locked_round = -1; /* the round whose lock the holder took */
static atomic_int passed;            /* waiters through their fputc this round */
static int64_t blocked_ns[WAITERS];
static int64_t off_cpu_ns[WAITERS];

/* The calling thread's CPU time plus run delay (schedstat's first two
 * fields), in ns; read with plain system calls, no stdio lock. 0 when
 * the kernel does not say. */
static int64_t on_cpu_or_runnable_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    int64_t cpu = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    char buf[128];
    int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return cpu;
    buf[n] = '\0';
    long long on_cpu = 0, delay = 0;
    if (sscanf(buf, "%lld %lld", &on_cpu, &delay) != 2)
        return cpu;
    return cpu + delay;
}

static void *holder(void *arg)
{
    (void)arg;
    for (int r = 0; r < ROUNDS; r++) {
        flockfile(sink);
        atomic_store(&locked_round, r);
        gt_spin_until(gt_now() + HOLD_MS * 1000000ll);
        funlockfile(sink);
        while (atomic_load(&passed) < WAITERS * (r + 1))
            sched_yield();
    }
    return NULL;
}

static void *waiter(void *arg)
{
    int i = (int)(intptr_t)arg;
    for (int r = 0; r < ROUNDS; r++) {
        while (atomic_load(&locked_round) < r)
            sched_yield();
        int64_t busy0 = on_cpu_or_runnable_ns(), t0 = gt_now();
        fputc('x', sink); /* blocks on the FILE lock until the holder lets go */
        int64_t t1 = gt_now(), busy1 = on_cpu_or_runnable_ns();
        blocked_ns[i] += t1 - t0;
        off_cpu_ns[i] += (t1 - t0) - (busy1 - busy0);
        atomic_fetch_add(&passed, 1);
    }
    return NULL;
}

int main(void)
{
    sink = fopen("/dev/null", "w");
    if (!sink)
        gt_die("fopen /dev/null", errno);
    int64_t start = gt_now();
    pthread_t h, w[WAITERS];
    int rc = pthread_create(&h, NULL, holder, NULL);
    for (int i = 0; i < WAITERS && rc == 0; i++)
        rc = pthread_create(&w[i], NULL, waiter, (void *)(intptr_t)i);
    if (rc)
        gt_die("pthread_create", rc);
    pthread_join(h, NULL);
    for (int i = 0; i < WAITERS; i++)
        pthread_join(w[i], NULL);
    double duration = (gt_now() - start) / 1e9;
    fclose(sink);
    double blocked = 0, off_cpu = 0;
    for (int i = 0; i < WAITERS; i++) {
        blocked += blocked_ns[i] / 1e9;
        off_cpu += off_cpu_ns[i] / 1e9;
    }
    const char *path = getenv("GROUND_TRUTH");
    FILE *out = path ? fopen(path, "w") : stdout;
    if (!out)
        gt_die("fopen $GROUND_TRUTH", errno);
    fprintf(out,
            "{\"workload\": \"unseen_stdio\", \"waiters\": %d, \"blocked_s\": %.6f,"
            " \"blocked_off_cpu_s\": %.6f, \"duration_s\": %.6f}\n",
            WAITERS, blocked, off_cpu, duration);
    if (out != stdout)
        fclose(out);
    return 0;
}
