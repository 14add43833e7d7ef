/* A process tree whose children signal a condition variable from an
 * inline chain, for tests/integration/deferred_names.sh: the names of the
 * signal site (an inline chain at one code address) must reach the run's
 * database whether a child adds its own profile or leaves it pending in
 * the spool for another process to add. The test runs this program built
 * as a position-independent executable and as a fixed-address one
 * (-no-pie, names_tree_nopie).
 *
 *   names_tree N     the root forks N (>= 4) children one after another,
 *                    reaping each, then one more child that execs
 *                    "/proc/self/exe exec-child", reaps it and exits 0;
 *                    the root itself starts no thread and waits on nothing
 *   names_tree exec-child   the exec'd image: the same work as a child
 *
 * Each child and the exec'd image runs ROUNDS rounds of one episode: a
 * waiter thread waits on a condition variable until the round's number
 * is published; the signaller thread, once the waiter is inside
 * pthread_cond_wait, spins SPIN_NS of its own CPU time in signaller_outer
 * and then publishes the round and signals. The signal is an inline chain
 * three deep at one code address: signaller_outer (not inlined) calls
 * relay_inlined, which calls signal_inlined, which signals; both are
 * always inlined. So every round's wait is measured and its idleness
 * blamed on the signal, on any machine load (the spin is of thread CPU
 * time; the handshake makes the waiter wait first). The waiter's start
 * routine, waiter, begins with the inlined start_waiting, so that the
 * start routine's address is an inline chain too. The last forked child
 * runs the chain from signaller_outer_last, a copy no earlier process
 * ran: its names are not handed down by the root, so a child that leaves
 * its profile pending leaves the chain to the merge to name and expand.
 *
 * Each such process prints its ground truth, one line:
 *   "child|exec-child PID file FILE chain F1 L1 F2 L2 F3 L3"
 * with FILE this source's base name and the signal's inline chain, caller
 * first: signaller_outer (signaller_outer_last) and the line of its call
 * to relay_inlined,
 * relay_inlined and the line of its call to signal_inlined,
 * signal_inlined and the line of the pthread_cond_signal call.
 * Exit status 0, 1 on a failed call. */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gt.h"
#include "tree_procs.h"

#define ROUNDS  10
#define SPIN_NS 2000000 /* CPU time the signaller spends before each signal */

typedef struct episode {
    pthread_mutex_t lock;
    pthread_cond_t published;
    int round;          /* the last round the signaller published; under lock */
    int waiting_for;    /* the round the waiter waits for, set under lock before it waits */
    int waiter_started; /* set by the waiter's start routine */
    int relayed;        /* rounds relay_inlined passed on; the signaller's */
    /* the __LINE__ of each call of the signal's inline chain */
    int outer_call_line; /* signaller_outer's call of relay_inlined */
    int relay_call_line; /* relay_inlined's call of signal_inlined */
    int signal_line;     /* signal_inlined's pthread_cond_signal call */
    bool last;           /* the chain runs from signaller_outer_last */
} episode_t;

static int64_t thread_cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static __attribute__((noinline)) void *wait_rounds(episode_t *e)
{
    pthread_mutex_lock(&e->lock);
    for (int r = 1; r <= ROUNDS; r++) {
        __atomic_store_n(&e->waiting_for, r, __ATOMIC_RELEASE);
        while (e->round < r)
            pthread_cond_wait(&e->published, &e->lock);
    }
    pthread_mutex_unlock(&e->lock);
    return NULL;
}

/* The waiter's start, inlined into its start routine: its first
 * instruction is the routine's, which then jumps to wait_rounds. */
static inline __attribute__((always_inline)) void *start_waiting(episode_t *e)
{
    __atomic_store_n(&e->waiter_started, 1, __ATOMIC_RELAXED);
    return wait_rounds(e);
}

static void *waiter(void *arg)
{
    return start_waiting(arg);
}

/* Publish round r and wake the waiter: the signal site, the innermost of
 * the inline chain. The signal is not a tail call (its result is checked). */
static inline __attribute__((always_inline)) void signal_inlined(episode_t *e, int r)
{
    pthread_mutex_lock(&e->lock);
    e->round = r;
    pthread_mutex_unlock(&e->lock);
    e->signal_line = __LINE__ + 1;
    int rc = pthread_cond_signal(&e->published);
    if (rc)
        gt_die("pthread_cond_signal", rc);
}

/* The middle of the inline chain: counts the round, then signals. */
static inline __attribute__((always_inline)) void relay_inlined(episode_t *e, int r)
{
    e->relayed++;
    e->relay_call_line = __LINE__ + 1;
    signal_inlined(e, r);
}

static __attribute__((noinline)) void signaller_outer(episode_t *e, int r)
{
    int64_t until = thread_cpu_ns() + SPIN_NS;
    while (thread_cpu_ns() < until)
        ;
    e->outer_call_line = __LINE__ + 1;
    relay_inlined(e, r);
}

/* The same for the last forked child alone: its chain's address is new
 * in the run, so no forking parent hands its names down. */
static __attribute__((noinline)) void signaller_outer_last(episode_t *e, int r)
{
    int64_t until = thread_cpu_ns() + SPIN_NS;
    while (thread_cpu_ns() < until)
        ;
    e->outer_call_line = __LINE__ + 1;
    relay_inlined(e, r);
}

static void *signaller(void *arg)
{
    episode_t *e = arg;
    for (int r = 1; r <= ROUNDS; r++) {
        /* the waiter marks round r under the lock, which it holds until
         * it waits: once the lock is free after the mark, it waits */
        while (__atomic_load_n(&e->waiting_for, __ATOMIC_ACQUIRE) < r)
            usleep(1000);
        while (pthread_mutex_trylock(&e->lock) != 0)
            usleep(1000);
        pthread_mutex_unlock(&e->lock);
        if (e->last)
            signaller_outer_last(e, r);
        else
            signaller_outer(e, r);
    }
    return NULL;
}

static void work(const char *what, bool last)
{
    episode_t e = { .lock = PTHREAD_MUTEX_INITIALIZER,
                    .published = PTHREAD_COND_INITIALIZER,
                    .last = last };
    pthread_t w, s;
    int rc = pthread_create(&w, NULL, waiter, &e);
    if (rc == 0)
        rc = pthread_create(&s, NULL, signaller, &e);
    if (rc)
        gt_die("pthread_create", rc);
    pthread_join(s, NULL);
    pthread_join(w, NULL);
    const char *base = strrchr(__FILE__, '/');
    if (e.relayed != ROUNDS || !e.waiter_started) {
        fprintf(stderr, "names_tree: %d of %d rounds relayed; waiter started: %d\n", e.relayed,
                ROUNDS, e.waiter_started);
        exit(1);
    }
    printf("%s %d file %s chain %s %d relay_inlined %d signal_inlined %d\n", what, (int)getpid(),
           base ? base + 1 : __FILE__, last ? "signaller_outer_last" : "signaller_outer",
           e.outer_call_line, e.relay_call_line, e.signal_line);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "exec-child") == 0) {
        work("exec-child", false);
        return 0;
    }
    int n = argc == 2 ? atoi(argv[1]) : 0;
    if (n < 4) {
        fprintf(stderr, "usage: names_tree N (N >= 4) | names_tree exec-child\n");
        return 2;
    }
    for (int i = 0; i < n; i++) {
        pid_t pid = fork_or_die();
        if (pid == 0) {
            work("child", i == n - 1);
            exit(0);
        }
        reap(pid);
    }
    pid_t pid = fork_or_die();
    if (pid == 0) {
        execl("/proc/self/exe", "names_tree", "exec-child", (char *)NULL);
        gt_die("exec", errno);
    }
    reap(pid);
    return 0;
}
