/* A thread started by a raw clone(), not by pthread_create: CLONE_VM |
 * CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM on
 * a stack of its own (mmap), without CLONE_SETTLS, so it runs with main's
 * thread pointer: main's thread-local storage, errno and pthread included.
 * It and main contend for one pthread mutex for ROUNDS rounds each, each
 * holding it for a known time of busy work (the clone CLONE_HOLD_NS and
 * releasing in clone_release, main MAIN_HOLD_NS and releasing in
 * main_release), from the moment the other side wants it too. The clone touches nothing thread-local but what glibc's
 * mutex calls read (no stdio, no malloc). Main waits for its end on the
 * child-tid word (CLONE_CHILD_CLEARTID: the kernel clears it and wakes it).
 *
 * A pthread is started and joined first: glibc skips its atomics while
 * the process is single-threaded (__libc_single_threaded), which a raw
 * clone does not clear, and the mutex would not exclude.
 *
 * Each side logs its rounds (wait start, acquisition, release) into static
 * arrays; main then computes the truth of docs/DESIGN.md rule 3 for two
 * threads: a hold's blame is the other side's waiting during it. Prints
 * JSON in the shape of tests/workloads/handoff.h (check_blame.py reads
 * it), plus "clone_tid", each side's total hold time ("hold_s") and its
 * thread CPU time over its rounds ("cpu_s").
 * Exit status 0, or 1 if mutual exclusion was violated or a call failed.
 *
 * Usage: clone_thread [ROUNDS [CLONE_HOLD_US [MAIN_HOLD_US]]] */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "gt_clock.h"

#define MAX_ROUNDS  20000
#define STACK_BYTES (512 << 10)

typedef struct {
    int64_t wait[MAX_ROUNDS], acquired[MAX_ROUNDS], released[MAX_ROUNDS];
    int64_t hold_ns, think_ns;
    int64_t cpu_ns; /* the side's thread CPU time over its rounds */
    int failed;     /* a lock call failed, or exclusion was violated */
} side_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static side_t main_side, clone_side;
static int rounds;
static volatile int inside;   /* holders now: never above 1 */
static volatile int wanting;  /* sides about to lock or waiting for it */
static volatile int finished; /* sides done with their rounds */
static volatile unsigned long sink;
static volatile pid_t child_tid;

__attribute__((noinline)) static void clone_release(void)
{
    pthread_mutex_unlock(&lock);
    sink++; /* not a tail call */
}

__attribute__((noinline)) static void main_release(void)
{
    pthread_mutex_unlock(&lock);
    sink++;
}

/* One round: lock, hold, release, think. A holder begins its busy hold
 * once the other side wants the lock too (or has finished, or a hold's
 * time has passed), so most holds are waited for, also when the two
 * share one CPU. */
static void one_round(side_t *s, int r, void (*release)(void))
{
    __atomic_add_fetch(&wanting, 1, __ATOMIC_SEQ_CST);
    s->wait[r] = gt_now();
    if (pthread_mutex_lock(&lock) != 0)
        s->failed = 1;
    s->acquired[r] = gt_now();
    __atomic_sub_fetch(&wanting, 1, __ATOMIC_SEQ_CST);
    if (__atomic_add_fetch(&inside, 1, __ATOMIC_SEQ_CST) != 1)
        s->failed = 1;
    int64_t until = gt_now() + s->hold_ns; /* at most one hold's time */
    while (!__atomic_load_n(&wanting, __ATOMIC_SEQ_CST) &&
           !__atomic_load_n(&finished, __ATOMIC_SEQ_CST) && gt_now() < until)
        sched_yield(); /* the other side may share this CPU */
    gt_spin_ns(s->hold_ns);
    __atomic_sub_fetch(&inside, 1, __ATOMIC_SEQ_CST);
    s->released[r] = gt_now();
    release();
    gt_spin_ns(s->think_ns);
}

static void all_rounds(side_t *s, void (*release)(void))
{
    int64_t cpu_from = gt_thread_cpu_ns();
    for (int r = 0; r < rounds; r++)
        one_round(s, r, release);
    s->cpu_ns = gt_thread_cpu_ns() - cpu_from;
    __atomic_add_fetch(&finished, 1, __ATOMIC_SEQ_CST);
}

__attribute__((noinline)) static int clone_worker(void *arg)
{
    (void)arg;
    all_rounds(&clone_side, clone_release);
    return 0;
}

static void *nothing(void *arg)
{
    return arg;
}

/* The waiting of `waiter` during the holds of `holder`: both logs are in
 * time order, so one merge pass. */
static int64_t overlap(const side_t *waiter, const side_t *holder)
{
    int64_t sum = 0;
    int h = 0;
    for (int w = 0; w < rounds; w++) {
        int64_t a = waiter->wait[w], b = waiter->acquired[w];
        while (h < rounds && holder->released[h] <= a)
            h++;
        for (int k = h; k < rounds && holder->acquired[k] < b; k++) {
            int64_t lo = a > holder->acquired[k] ? a : holder->acquired[k];
            int64_t hi = b < holder->released[k] ? b : holder->released[k];
            if (hi > lo)
                sum += hi - lo;
        }
    }
    return sum;
}

static int64_t total(const int64_t *from, const int64_t *to)
{
    int64_t sum = 0;
    for (int r = 0; r < rounds; r++)
        sum += to[r] - from[r];
    return sum;
}

int main(int argc, char **argv)
{
    rounds = argc > 1 ? atoi(argv[1]) : 3000;
    clone_side.hold_ns = (argc > 2 ? atol(argv[2]) : 120) * 1000;
    main_side.hold_ns = (argc > 3 ? atol(argv[3]) : 40) * 1000;
    clone_side.think_ns = clone_side.hold_ns / 4;
    main_side.think_ns = main_side.hold_ns / 4;
    if (rounds < 1 || rounds > MAX_ROUNDS) {
        fprintf(stderr, "clone_thread: ROUNDS must be 1..%d\n", MAX_ROUNDS);
        return 2;
    }
    pthread_t t;
    if (pthread_create(&t, NULL, nothing, NULL) != 0 || pthread_join(t, NULL) != 0)
        return 1;
    char *stack = mmap(NULL, STACK_BYTES, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (stack == MAP_FAILED)
        return 1;
    int64_t start = gt_now();
    int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |
                CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID;
    pid_t tid = clone(clone_worker, stack + STACK_BYTES, flags, NULL, &child_tid, NULL, &child_tid);
    if (tid < 0) {
        perror("clone_thread: clone");
        return 1;
    }
    all_rounds(&main_side, main_release);
    for (pid_t v; (v = __atomic_load_n(&child_tid, __ATOMIC_ACQUIRE)) != 0;)
        syscall(SYS_futex, &child_tid, FUTEX_WAIT, v, NULL, NULL, 0);
    int64_t duration = gt_now() - start;
    munmap(stack, STACK_BYTES);

    int64_t main_waited = total(main_side.wait, main_side.acquired);
    int64_t clone_waited = total(clone_side.wait, clone_side.acquired);
    int64_t clone_blame = overlap(&main_side, &clone_side);
    int64_t main_blame = overlap(&clone_side, &main_side);
    int64_t waited = main_waited + clone_waited;
    printf("{\"workload\": \"clone_thread\", \"object\": \"mutex\", \"object_address\": %lu,"
           " \"threads\": 2, \"clone_tid\": %d, \"rounds\": %d, \"duration_s\": %.6f,"
           " \"total_wait_s\": %.6f, \"handoff_s\": %.6f,"
           " \"sites\": {\"clone_release\": %.6f, \"main_release\": %.6f},"
           " \"holds\": {\"clone_release\": %d, \"main_release\": %d},"
           " \"hold_s\": {\"clone_release\": %.6f, \"main_release\": %.6f},"
           " \"waited_s\": {\"clone\": %.6f, \"main\": %.6f},"
           " \"cpu_s\": {\"clone\": %.6f, \"main\": %.6f}, \"max_holders\": 1}\n",
           (unsigned long)(uintptr_t)&lock, (int)tid, rounds, duration * 1e-9, waited * 1e-9,
           (waited - clone_blame - main_blame) * 1e-9, clone_blame * 1e-9, main_blame * 1e-9,
           rounds, rounds, total(clone_side.acquired, clone_side.released) * 1e-9,
           total(main_side.acquired, main_side.released) * 1e-9, clone_waited * 1e-9,
           main_waited * 1e-9, clone_side.cpu_ns * 1e-9, main_side.cpu_ns * 1e-9);
    return main_side.failed || clone_side.failed;
}
