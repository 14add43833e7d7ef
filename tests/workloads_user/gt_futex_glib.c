/*
 * gt_futex_glib: GLib's waits, which block in futex system calls made
 * through libc's syscall() (g_mutex_lock's and g_cond_wait's slow paths),
 * each with one culprit that makes three threads wait; built the way
 * users build (gcc -O2 -g, pkg-config glib-2.0). One scenario per run:
 *
 *   gmutex  slow_holder holds a GMutex, computing; 3 threads lock it
 *           (and unlock it, one after the other: waiter)
 *   gcond   3 threads wait on a GCond for a flag; slow_signaller
 *           computes, then sets it and broadcasts
 *   pool    a GThreadPool of 3 exclusive threads waits for tasks;
 *           slow_signaller computes, then pushes one task per thread
 *
 * The waits and the wakes are logged as futex_gt.h describes (a waiter's
 * own unlock only where it wakes the word the others wait on, the
 * GMutex's: what the GCond's woken waiters still wait after the
 * broadcast is on the GCond's word, which no later wake ends); in the pool
 * a wait is a worker's, from the culprit seeing it blocked in the pool's
 * queue to the start of its task. tests/lib/futex_truth.py turns the log
 * into the ground truth.
 *
 * Usage: gt_futex_glib SCENARIO [HOLD_MS]   (HOLD_MS default 150)
 */
#include <glib.h>

#include "futex_gt.h"

static GMutex mutex;
static GCond cond;
static int holds; /* the scenario: gmutex (1) or gcond (0) */
static int flag, held, done;

/* Waiter i, about to block (after the culprit holds, where it must). */
static void arrive(int i)
{
    while (!__atomic_load_n(&held, __ATOMIC_ACQUIRE))
        sched_yield();
    fgt_arrive(i);
}

__attribute__((noinline)) static void slow_holder(void)
{
    g_mutex_lock(&mutex);
    __atomic_store_n(&held, 1, __ATOMIC_RELEASE);
    fgt_watch();
    fgt_await_blocked();
    gt_spin_until(gt_now() + fgt_hold_ns);
    int wake = fgt_signal("slow_holder");
    g_mutex_unlock(&mutex);
    fgt_signalled(wake);
    __atomic_add_fetch(&done, 1, __ATOMIC_RELAXED); /* (the unlock is no tail call) */
}

__attribute__((noinline)) static void waiter_gmutex(int i)
{
    arrive(i);
    g_mutex_lock(&mutex);
    fgt_returned(i);
    int wake = fgt_signal("waiter_gmutex");
    g_mutex_unlock(&mutex);
    fgt_signalled(wake);
    fgt_linger();
}

__attribute__((noinline)) static void slow_signaller(void)
{
    __atomic_store_n(&held, 1, __ATOMIC_RELEASE);
    fgt_watch();
    fgt_await_blocked();
    gt_spin_until(gt_now() + fgt_hold_ns);
    g_mutex_lock(&mutex);
    flag = 1;
    g_mutex_unlock(&mutex);
    /* broadcast after the unlock: the woken waiters find the mutex free */
    int wake = fgt_signal("slow_signaller");
    g_cond_broadcast(&cond);
    fgt_signalled(wake);
    __atomic_add_fetch(&done, 1, __ATOMIC_RELAXED);
}

__attribute__((noinline)) static void waiter_gcond(int i)
{
    arrive(i);
    g_mutex_lock(&mutex);
    while (!flag)
        g_cond_wait(&cond, &mutex);
    fgt_returned(i);
    g_mutex_unlock(&mutex);
    fgt_linger();
}

static gpointer run_waiter(gpointer arg)
{
    int i = GPOINTER_TO_INT(arg);
    if (holds)
        waiter_gmutex(i);
    else
        waiter_gcond(i);
    return NULL;
}

static gpointer run_holder(gpointer arg)
{
    (void)arg;
    if (holds)
        slow_holder();
    else
        slow_signaller();
    return NULL;
}

/* The pool's tasks come in two rounds of three: a task of the first
 * names its worker (its tid), one of the second ends its worker's wait.
 * A task returns only once all three of its round have started, so that
 * each runs on a worker of its own: a worker done with its task before
 * another woken worker runs (a loaded machine) would otherwise take the
 * task pushed for that one, whose wait would end only at the pool's end. */
static int first_started, second_started, finished;

static void await_round(int *round_started)
{
    while (__atomic_load_n(round_started, __ATOMIC_ACQUIRE) < FUTEX_GT_WAITERS)
        sched_yield();
}

static void task(gpointer data, gpointer user_data)
{
    (void)user_data;
    int n = GPOINTER_TO_INT(data);
    if (n <= FUTEX_GT_WAITERS) {
        fgt_arrive(__atomic_fetch_add(&first_started, 1, __ATOMIC_RELAXED));
        await_round(&first_started);
        return;
    }
    int i;
    for (i = 0; i < FUTEX_GT_WAITERS; i++)
        if (fgt.tid[i] == (int)gettid())
            break;
    if (i == FUTEX_GT_WAITERS || fgt.returned[i]) {
        fprintf(stderr, "gt_futex_glib: a second task ran on a thread of %s\n",
                i == FUTEX_GT_WAITERS ? "no first task" : "another second task");
        exit(1);
    }
    fgt_returned(i);
    __atomic_add_fetch(&second_started, 1, __ATOMIC_RELEASE);
    fgt_linger();
    await_round(&second_started);
    __atomic_add_fetch(&finished, 1, __ATOMIC_RELEASE);
}

__attribute__((noinline)) static void slow_pusher(GThreadPool *pool)
{
    fgt_await_blocked();
    gt_spin_until(gt_now() + fgt_hold_ns);
    for (int i = 0; i < FUTEX_GT_WAITERS; i++) {
        int wake = fgt_signal("slow_pusher");
        g_thread_pool_push(pool, GINT_TO_POINTER(FUTEX_GT_WAITERS + 1 + i), NULL);
        fgt_signalled(wake);
    }
    __atomic_add_fetch(&done, 1, __ATOMIC_RELAXED);
}

static int usage(const char *prog)
{
    return fgt_usage(prog, "gmutex|gcond|pool");
}

int main(int argc, char **argv)
{
    const char *scenario = fgt_args(argc, argv);
    if (!scenario)
        return usage(argv[0]);
    int64_t start = gt_now();
    if (strcmp(scenario, "pool") == 0) {
        /* exclusive: its 3 threads start now and wait in the queue
         * without a timeout until the pool is freed */
        GThreadPool *pool = g_thread_pool_new(task, NULL, FUTEX_GT_WAITERS, TRUE, NULL);
        fgt_watch();
        for (int i = 0; i < FUTEX_GT_WAITERS; i++)
            g_thread_pool_push(pool, GINT_TO_POINTER(i + 1), NULL);
        slow_pusher(pool);
        /* freed once the tasks are done: the workers' wait for the
         * pool's end, and main's for them, are short */
        while (__atomic_load_n(&finished, __ATOMIC_ACQUIRE) < FUTEX_GT_WAITERS)
            sched_yield();
        g_thread_pool_free(pool, FALSE, TRUE);
    } else if (strcmp(scenario, "gmutex") == 0 || strcmp(scenario, "gcond") == 0) {
        holds = strcmp(scenario, "gmutex") == 0;
        GThread *threads[FUTEX_GT_WAITERS + 1];
        threads[0] = g_thread_new("holder", run_holder, NULL);
        for (int i = 0; i < FUTEX_GT_WAITERS; i++)
            threads[i + 1] = g_thread_new("waiter", run_waiter, GINT_TO_POINTER(i));
        for (int i = 0; i <= FUTEX_GT_WAITERS; i++)
            g_thread_join(threads[i]);
    } else {
        return usage(argv[0]);
    }
    /* the pool's workers also wait for their first tasks and for its end */
    return fgt_write("gt_futex_glib", "gt_futex_glib.c", (double)(gt_now() - start) / 1e9,
                     strcmp(scenario, "pool") == 0);
}
