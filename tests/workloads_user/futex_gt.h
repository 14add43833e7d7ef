/*
 * futex_gt.h: shared by the futex ground-truth workloads in C and C++
 * (gt_futex_cxx.cc, gt_futex_glib.c; gt_futex_rust.rs does the same in
 * Rust). Three waiters block in a runtime's futex wait; one culprit makes
 * them wait. tests/lib/futex_truth.py computes the truth from the event
 * log written here.
 *
 * A waiter's wait, for the truth, begins when it enters the kernel's
 * futex call: the runtimes spin, and libstdc++ yields the CPU a few
 * times, before they call futex, and that is not waiting to lockblame (it
 * is CPU time), nor, on a loaded machine, a few microseconds. The waiter
 * notes its time, CPU time and run delay (time runnable but off the CPU,
 * /proc schedstat) just before its blocking call; once the culprit sees
 * it blocked in futex (/proc/self/task/TID/syscall names system call
 * 202), it reads the waiter's CPU time and run delay again: the waiter
 * never slept in between, so it entered futex that much later than its
 * note. The culprit begins its slow part only once all three are
 * blocked, so every wait spans it. The wait ends when the blocking call
 * returns.
 *
 * A wake is logged with its site just before the call that makes it
 * (fgt_signal) and again when that call returns (fgt_signalled):
 * lockblame accounts the wake somewhere in that span, while the truth
 * gives the span's waiting to the next wake logged (or leaves it
 * unattributed). A culprit that the machine keeps off its CPU within the
 * span (tens of ms on a loaded machine) moves that much waiting from one
 * to the other: futex_truth.py reports the waiting within the spans as
 * unplaced, and each site's tolerance widens by it (under a millisecond's
 * worth on a quiet machine).
 *
 * Every thread writes only its own entries until the threads are joined
 * (the signals' by an atomic count).
 */
#ifndef FUTEX_GT_H
#define FUTEX_GT_H
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gt_clock.h"

#define FUTEX_GT_WAITERS 3
#define FUTEX_GT_SIGNALS 8

static struct {
    int tid[FUTEX_GT_WAITERS];       /* each waiter's, 0 until it arrives */
    int64_t noted[FUTEX_GT_WAITERS]; /* its time, CPU time and run delay */
    int64_t noted_cpu[FUTEX_GT_WAITERS], noted_delay[FUTEX_GT_WAITERS]; /* before it blocks */
    int64_t blocked[FUTEX_GT_WAITERS];                                  /* when it entered futex */
    int64_t returned[FUTEX_GT_WAITERS];
    int64_t signal_ns[FUTEX_GT_SIGNALS];    /* just before the wake's call */
    int64_t signalled_ns[FUTEX_GT_SIGNALS]; /* when that call returned */
    const char *signal_site[FUTEX_GT_SIGNALS];
    int nsignals;
} fgt;

static int64_t fgt_hold_ns = 150000000; /* the culprit's slow part */

/* The workload's usage line (scenarios: "a|b|c"); returns 2, its exit
 * status. */
static inline int fgt_usage(const char *prog, const char *scenarios)
{
    fprintf(stderr, "usage: %s %s [HOLD_MS]\n", prog, scenarios);
    return 2;
}

/* argv[1], the scenario, with argv[2] (if given) as the hold in ms; NULL
 * when there is no scenario. */
static inline const char *fgt_args(int argc, char **argv)
{
    if (argc < 2)
        return NULL;
    if (argc > 2)
        fgt_hold_ns = atol(argv[2]) * 1000000;
    return argv[1];
}

static int fgt_culprit_watching; /* the culprit looks for blocked waiters */

/* Thread tid's CPU time and run delay in ns (/proc schedstat: exact for
 * a thread that is not running); 0 when they cannot be read. */
static inline void fgt_schedstat(int tid, int64_t *cpu, int64_t *delay)
{
    char path[64];
    long long c = 0, d = 0;
    snprintf(path, sizeof path, "/proc/self/task/%d/schedstat", tid);
    FILE *f = fopen(path, "r");
    if (f) {
        if (fscanf(f, "%lld %lld", &c, &d) != 2)
            c = d = 0;
        fclose(f);
    }
    *cpu = c;
    *delay = d;
}

/* Waiter i, about to block, once the culprit watches for it: notes its
 * time, CPU time (exact for the running thread: its CPU clock) and run
 * delay. */
static inline void fgt_arrive(int i)
{
    while (!__atomic_load_n(&fgt_culprit_watching, __ATOMIC_ACQUIRE))
        sched_yield();
    int64_t cpu_unused;
    fgt_schedstat((int)gettid(), &cpu_unused, &fgt.noted_delay[i]);
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    fgt.noted_cpu[i] = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    fgt.noted[i] = gt_now();
    __atomic_store_n(&fgt.tid[i], (int)gettid(), __ATOMIC_RELEASE);
}

/* Waiter i, back from its blocking call. */
static inline void fgt_returned(int i)
{
    fgt.returned[i] = gt_now();
}

/* Then it lives on for half the culprit's time (a thread that ends right
 * after its only wait would be parked until shutdown, a structural wait),
 * asleep: the threads woken with it need the CPUs, and a woken thread
 * that waits for one is still in its futex call to lockblame, while the
 * truth cannot tell which futex word it waits on. It sleeps that long
 * however late it comes here: lockblame discounts the time a thread was
 * runnable but off its CPU, so a thread that a loaded machine kept off
 * it past a deadline, and then did not sleep, would end right after its
 * wait. */
static inline void fgt_linger(void)
{
    struct timespec left = { (time_t)(fgt_hold_ns / 2 / 1000000000),
                             (long)(fgt_hold_ns / 2 % 1000000000) };
    while (clock_nanosleep(CLOCK_MONOTONIC, 0, &left, &left) != 0)
        ;
}

/* Is thread tid blocked in a futex system call now? */
static inline int fgt_in_futex(int tid)
{
    char path[64], line[32] = "";
    snprintf(path, sizeof path, "/proc/self/task/%d/syscall", tid);
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        exit(1);
    }
    int in = fgets(line, sizeof line, f) != NULL && strncmp(line, "202 ", 4) == 0;
    fclose(f);
    return in;
}

/* The culprit, before any waiter arrives: it watches from now on. */
static inline void fgt_watch(void)
{
    __atomic_store_n(&fgt_culprit_watching, 1, __ATOMIC_RELEASE);
}

/* The culprit: returns once every waiter is blocked in futex, the time
 * each entered it noted. */
static inline void fgt_await_blocked(void)
{
    int seen = 0;
    while (seen < FUTEX_GT_WAITERS) {
        for (int i = 0; i < FUTEX_GT_WAITERS; i++) {
            int tid = __atomic_load_n(&fgt.tid[i], __ATOMIC_ACQUIRE);
            if (!fgt.blocked[i] && tid && fgt_in_futex(tid)) {
                int64_t cpu, delay;
                fgt_schedstat(tid, &cpu, &delay);
                fgt.blocked[i] =
                    fgt.noted[i] + (cpu - fgt.noted_cpu[i]) + (delay - fgt.noted_delay[i]);
                seen++;
            }
        }
        if (seen < FUTEX_GT_WAITERS)
            sched_yield();
    }
}

/* A thread at site, just before its wake call (any thread). Returns the
 * wake's slot, for fgt_signalled. */
static inline int fgt_signal(const char *site)
{
    int n = __atomic_fetch_add(&fgt.nsignals, 1, __ATOMIC_RELAXED);
    if (n < FUTEX_GT_SIGNALS) {
        fgt.signal_ns[n] = gt_now();
        fgt.signal_site[n] = site;
    }
    return n;
}

/* The same thread, once the wake call of slot (fgt_signal's) returned. */
static inline void fgt_signalled(int slot)
{
    if (slot < FUTEX_GT_SIGNALS)
        fgt.signalled_ns[slot] = gt_now();
}

/* The event log, to $EVENTS or stdout (tests/lib/futex_truth.py); partial:
 * the runtime waits on its own too, unlogged. Returns the exit status. */
static inline int fgt_write(const char *workload, const char *source, double duration_s,
                            int partial)
{
    const char *path = getenv("EVENTS");
    FILE *out = path && *path ? fopen(path, "w") : stdout;
    if (!out) {
        perror(path);
        return 1;
    }
    fprintf(out, "workload %s\nsource %s\nthreads %d\nduration_s %.6f\n", workload, source,
            FUTEX_GT_WAITERS + 1, duration_s);
    if (partial)
        fprintf(out, "partial 1\n");
    for (int i = 0; i < FUTEX_GT_WAITERS; i++)
        fprintf(out, "wait %lld %lld\n", (long long)fgt.blocked[i], (long long)fgt.returned[i]);
    for (int s = 0; s < fgt.nsignals && s < FUTEX_GT_SIGNALS; s++)
        fprintf(out, "signal %lld %lld %s\n", (long long)fgt.signal_ns[s],
                (long long)fgt.signalled_ns[s], fgt.signal_site[s]);
    return out != stdout && fclose(out) != 0;
}
#endif
