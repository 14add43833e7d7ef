/* A pre-forked server in miniature, built -O2 -g as users build: the
 * parent puts a process-shared object in shared memory and forks WORKERS
 * workers that contend on it; worker 0 holds long at a known site.
 * Every worker logs its own waits (a lock's only where its own trylock
 * failed: an acquisition at once waits for nothing) and releases in the
 * shared memory, and
 * the parent computes the truth of the blame rule for the object's kind,
 * over the waiters of every process:
 *   mutex    each hold's blame is the time the others waited during it;
 *            worker 0 holds HOLD_SLOW and releases in slow_release, the
 *            others release at once in fast_release
 *   cond     each broadcast's blame is the waiting since the previous
 *            one; worker 0 computes HOLD_SLOW before slow_signal on even
 *            rounds, HOLD_FAST before fast_signal on odd ones, while the
 *            others wait for each new generation
 *   barrier  each episode's blame is the waiting of its early arrivals,
 *            on the last arrival's site: worker 0 computes HOLD_SLOW
 *            before arriving in slow_arrive, the others HOLD_FAST before
 *            fast_arrive
 *   rwlock   each hold's blame is the waiting during it, shared by the
 *            holders of each moment; worker 0 write-locks and holds
 *            HOLD_SLOW before slow_rw_release, the others read-lock,
 *            hold HOLD_FAST and release in fast_rw_release (the lock
 *            prefers writers, so worker 0 waits out the readers already
 *            in, not a stream of new ones)
 *   outside  cond's, but worker 0 is a process outside the profiled
 *            tree: it execs this program again without LD_PRELOAD
 *            ("signaller FD": the shared memory is a memfd it inherits)
 * Usage: prefork_shared mutex|cond|barrier|rwlock|outside. Prints "truth SITE
 * SECONDS" per site, "waited SECONDS" (all waits on the object) and
 * "unplaced SECONDS" (the waiting the logs cannot give to a site: see
 * main; 0 for a barrier and an rwlock), "off_cpu SECONDS" (the waits'
 * time runnable but off CPU where their waiter was preempted: a waiter
 * kept off its CPU between its clock read and the blocking call logs
 * waiting that lockblame, timing the call, rightly does not see;
 * off_cpu.h); for a
 * mutex also "acquired PID COUNT" per worker (its locks) and "released
 * SITE COUNT WAITED_FOR AT_MOST" per site (its releases, how many of its
 * holds the logs and the lock word prove some worker waited during: see
 * proven_waited, and how many can have been: a logged wait overlaps the
 * span of the real hold, from the previous release's log to the unlock's
 * return). */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gt_clock.h"
#include "off_cpu.h"

#define WORKERS   4
#define ROUNDS    40
#define HOLD_SLOW 3000000L /* ns */
#define HOLD_FAST 200000L
#define MAX_WAITS (ROUNDS * 4)

enum {
    FAST,
    SLOW,
    SITES
};
static const char *const site_names[4][SITES] = {
    { "fast_release", "slow_release" },
    { "fast_signal", "slow_signal" },
    { "fast_arrive", "slow_arrive" },
    { "fast_rw_release", "slow_rw_release" },
};

struct span {
    double start, end;
    double off_cpu; /* runnable but off CPU within it, where preempted (off_cpu.h) */
};
struct release {
    double start, at; /* a hold's start (mutex), and the release / signal / arrival */
    double after;     /* the release's or signal's return */
    int site;
    int worker;
    int word_from, word_at; /* mutex: its lock word after the acquisition and before `at` */
};

struct shared {
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    pthread_barrier_t barrier;
    pthread_rwlock_t rwlock;
    int generation, done;
    int nwaits[WORKERS], nreleases[WORKERS], nacquired[WORKERS];
    struct span waits[WORKERS][MAX_WAITS];
    struct release releases[WORKERS][MAX_WAITS];
};

static struct shared *sh;
static volatile unsigned long sink;

/* A wait's start: its clock, with the probe of its time off CPU. */
struct wait_start {
    struct off_cpu_probe probe;
    double at;
};

static struct wait_start wait_begins(void)
{
    struct off_cpu_probe probe = off_cpu_probe_start();
    return (struct wait_start){ probe, gt_now_s() };
}

/* Just before the wait's call. */
static void wait_calls(struct wait_start *start)
{
    off_cpu_call_begins(&start->probe);
}

static void log_wait(int me, struct wait_start start)
{
    off_cpu_call_ended(&start.probe);
    double end = gt_now_s();
    sh->waits[me][sh->nwaits[me]++] = (struct span){ start.at, end, off_cpu_since(start.probe) };
}

static void log_release(int me, double start, int site)
{
    sh->releases[me][sh->nreleases[me]++] =
        (struct release){ start, gt_now_s(), 0, site, me, 0, 0 };
}

/* The mutex's lock word, as glibc keeps it: 0 free, 1 held, 2 held and a
 * thread has been in the contended step since the holder took it, or the
 * holder took it there (a lock or trylock takes a free word with 1; the
 * contended step exchanges the word with 2 before each sleep, and the
 * exchange that finds it free is the acquisition; only the release clears
 * it). Read by the holder, it changes nothing. */
static int lock_word(void)
{
    return __atomic_load_n(&sh->mutex.__data.__lock, __ATOMIC_RELAXED);
}

/* A hold of the mutex, its word read just after the acquisition. */
struct hold {
    double from;
    int word;
};

/* The release's log, with the word read before its clock: a hold that
 * began with 1 and reads 2 here had a waiter inside the lock call by now. */
static void log_mutex_release(int me, struct hold held, int site)
{
    int word = lock_word();
    log_release(me, held.from, site);
    sh->releases[me][sh->nreleases[me] - 1].word_from = held.word;
    sh->releases[me][sh->nreleases[me] - 1].word_at = word;
}

/* After the real release or signal that log_release announced: the span
 * between the two holds the real call, wherever in it the kernel ran it. */
static void log_returned(int me)
{
    sh->releases[me][sh->nreleases[me] - 1].after = gt_now_s();
}

__attribute__((noinline)) static void slow_release(int me, struct hold held)
{
    log_mutex_release(me, held, SLOW);
    pthread_mutex_unlock(&sh->mutex);
    log_returned(me);
    sink++; /* not a tail call */
}

__attribute__((noinline)) static void fast_release(int me, struct hold held)
{
    log_mutex_release(me, held, FAST);
    pthread_mutex_unlock(&sh->mutex);
    log_returned(me);
    sink++;
}

__attribute__((noinline)) static void slow_signal(int me)
{
    log_release(me, 0, SLOW);
    pthread_cond_broadcast(&sh->cond);
    log_returned(me);
    sink++;
}

__attribute__((noinline)) static void fast_signal(int me)
{
    log_release(me, 0, FAST);
    pthread_cond_broadcast(&sh->cond);
    log_returned(me);
    sink++;
}

__attribute__((noinline)) static void slow_arrive(int me)
{
    struct wait_start start = wait_begins();
    log_release(me, 0, SLOW);
    wait_calls(&start);
    pthread_barrier_wait(&sh->barrier);
    log_wait(me, start);
}

__attribute__((noinline)) static void fast_arrive(int me)
{
    struct wait_start start = wait_begins();
    log_release(me, 0, FAST);
    wait_calls(&start);
    pthread_barrier_wait(&sh->barrier);
    log_wait(me, start);
}

/* A lock, timed as a wait only when it is contended: an acquisition at
 * once is no wait (a clock read before it would count the time the
 * process was descheduled before the call as waiting on the lock). */
static void mutex_acquire(int me)
{
    sh->nacquired[me]++;
    if (pthread_mutex_trylock(&sh->mutex) == 0)
        return;
    struct wait_start start = wait_begins();
    wait_calls(&start);
    pthread_mutex_lock(&sh->mutex);
    log_wait(me, start);
}

static void mutex_worker(int me)
{
    for (int r = 0; r < ROUNDS; r++) {
        mutex_acquire(me);
        struct hold held = { gt_now_s(), lock_word() };
        if (me == 0) {
            gt_spin_ns(HOLD_SLOW);
            slow_release(me, held);
        } else {
            fast_release(me, held);
        }
        gt_spin_ns(HOLD_FAST);
    }
}

static void cond_worker(int me)
{
    if (me == 0) {
        for (int r = 0; r <= ROUNDS; r++) {
            gt_spin_ns(r % 2 ? HOLD_FAST : HOLD_SLOW);
            pthread_mutex_lock(&sh->mutex);
            sh->generation++;
            sh->done = r == ROUNDS;
            if (r % 2)
                fast_signal(me);
            else
                slow_signal(me);
            pthread_mutex_unlock(&sh->mutex);
        }
        return;
    }
    pthread_mutex_lock(&sh->mutex);
    int seen = sh->generation;
    while (!sh->done) {
        while (sh->generation == seen && !sh->done) {
            struct wait_start start = wait_begins();
            wait_calls(&start);
            pthread_cond_wait(&sh->cond, &sh->mutex);
            if (sh->nwaits[me] < MAX_WAITS)
                log_wait(me, start);
        }
        seen = sh->generation;
    }
    pthread_mutex_unlock(&sh->mutex);
}

static void barrier_worker(int me)
{
    for (int r = 0; r < ROUNDS; r++) {
        if (me == 0) {
            gt_spin_ns(HOLD_SLOW);
            slow_arrive(me);
        } else {
            gt_spin_ns(HOLD_FAST);
            fast_arrive(me);
        }
    }
}

__attribute__((noinline)) static void slow_rw_release(int me, double held_from)
{
    log_release(me, held_from, SLOW);
    pthread_rwlock_unlock(&sh->rwlock);
    sink++;
}

__attribute__((noinline)) static void fast_rw_release(int me, double held_from)
{
    log_release(me, held_from, FAST);
    pthread_rwlock_unlock(&sh->rwlock);
    sink++;
}

static void rwlock_worker(int me)
{
    for (int r = 0; r < ROUNDS; r++) {
        if ((me == 0 ? pthread_rwlock_trywrlock(&sh->rwlock)
                     : pthread_rwlock_tryrdlock(&sh->rwlock)) != 0) { /* contended: a wait */
            struct wait_start start = wait_begins();
            wait_calls(&start);
            if (me == 0)
                pthread_rwlock_wrlock(&sh->rwlock);
            else
                pthread_rwlock_rdlock(&sh->rwlock);
            log_wait(me, start);
        }
        double held_from = gt_now_s();
        if (me == 0) {
            gt_spin_ns(HOLD_SLOW);
            slow_rw_release(me, held_from);
        } else {
            gt_spin_ns(HOLD_FAST);
            fast_rw_release(me, held_from);
        }
        gt_spin_ns(HOLD_FAST);
    }
}

static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The rwlock rule: over each stretch between two events, the waiting
 * then is shared by the holds then, each taking waiters / holders. */
static void rwlock_truth(const struct release *all, int n, double *blame)
{
    static double t[2 * WORKERS * MAX_WAITS * 2];
    int m = 0;
    for (int k = 0; k < n; k++) {
        t[m++] = all[k].start;
        t[m++] = all[k].at;
    }
    for (int i = 0; i < WORKERS; i++)
        for (int k = 0; k < sh->nwaits[i]; k++) {
            t[m++] = sh->waits[i][k].start;
            t[m++] = sh->waits[i][k].end;
        }
    qsort(t, m, sizeof t[0], by_double);
    for (int j = 0; j + 1 < m; j++) {
        double mid = (t[j] + t[j + 1]) / 2, dt = t[j + 1] - t[j];
        int holders = 0, waiters = 0;
        for (int k = 0; k < n; k++)
            holders += all[k].start <= mid && mid < all[k].at;
        if (!holders || dt <= 0)
            continue;
        for (int i = 0; i < WORKERS; i++)
            for (int k = 0; k < sh->nwaits[i]; k++)
                waiters += sh->waits[i][k].start <= mid && mid < sh->waits[i][k].end;
        for (int k = 0; k < n; k++)
            if (all[k].start <= mid && mid < all[k].at)
                blame[all[k].site] += waiters * dt / holders;
    }
}

static double overlap(struct span w, double from, double to)
{
    double a = w.start > from ? w.start : from, b = w.end < to ? w.end : to;
    return b > a ? b - a : 0;
}

/* The waits' time off CPU that lockblame may not see (off_cpu.h). */
static double waits_off_cpu(void)
{
    double sum = 0;
    for (int i = 0; i < WORKERS; i++)
        for (int k = 0; k < sh->nwaits[i]; k++)
            sum += sh->waits[i][k].off_cpu;
    return sum;
}

/* The waiting of every worker over [from, to]. */
static double waiting_in(double from, double to)
{
    double sum = 0;
    for (int i = 0; i < WORKERS; i++)
        for (int k = 0; k < sh->nwaits[i]; k++)
            sum += overlap(sh->waits[i][k], from, to);
    return sum;
}

/* The index in all (sorted by release) of worker i's first hold after t, n if none. */
static int next_hold(const struct release *all, int n, int i, double t)
{
    for (int j = 0; j < n; j++)
        if (all[j].worker == i && all[j].start > t)
            return j;
    return n;
}

/* The holds that some worker certainly waited during, all sorted by
 * release. Not every hold whose logged span a logged wait overlaps: a
 * wait's log begins before its lock call, and the waiter may be preempted
 * there until the hold is over, never waiting during it. The lock word
 * proves a waiter: a hold that began with 1 and reads 2 before its
 * release's log had a thread in the contended step by then, inside its
 * lock call, which acquires only after this release. That thread waits on
 * through every hold up to its own, which began with 2 (its exchange took
 * the word). Which worker it is the logs do not say: the chain ends before
 * the earliest hold of any that can be it (its logged wait spans the
 * release's log, and the hold after that wait began with 2). */
static void proven_waited(const struct release *all, int n, bool *proven)
{
    for (int k = 0; k < n; k++)
        proven[k] = false;
    for (int k = 0; k < n; k++) {
        if (all[k].word_from != 1 || all[k].word_at != 2)
            continue;
        int until = -1; /* the earliest hold of a worker that can be the waiter */
        for (int i = 0; i < WORKERS; i++)
            for (int w = 0; i != all[k].worker && w < sh->nwaits[i]; w++) {
                struct span wait = sh->waits[i][w];
                if (wait.start >= all[k].at || wait.end <= all[k].at)
                    continue;
                int j = next_hold(all, n, i, wait.end);
                if (j == n)
                    j = k + 1; /* (a wait with no hold after it: this hold alone) */
                else if (all[j].word_from != 2)
                    continue; /* that hold began with no exchange: not the waiter's */
                until = until < 0 || j < until ? j : until;
            }
        for (int j = k; j < (until < 0 ? k + 1 : until); j++) /* (none found: this hold) */
            proven[j] = true;
    }
}

static int by_time(const void *a, const void *b)
{
    double x = ((const struct release *)a)->at, y = ((const struct release *)b)->at;
    return (x > y) - (x < y);
}

static struct shared *map_shared(int fd)
{
    void *p = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    return p == MAP_FAILED ? NULL : p;
}

int main(int argc, char **argv)
{
    static const char *const modes[] = { "mutex", "cond", "barrier", "rwlock", "outside" };
    int mode = -1;
    for (int m = 0; argc == 2 && m < 5; m++)
        if (!strcmp(argv[1], modes[m]))
            mode = m;
    if (argc == 3 && !strcmp(argv[1], "signaller")) { /* outside: worker 0, unprofiled */
        sh = map_shared(atoi(argv[2]));
        if (!sh)
            return 1;
        cond_worker(0);
        return 0;
    }
    if (mode < 0) {
        fprintf(stderr, "usage: prefork_shared mutex|cond|barrier|rwlock|outside\n");
        return 2;
    }
    bool outside = mode == 4;
    if (outside)
        mode = 1;
    int fd = memfd_create("prefork_shared", 0);
    if (fd < 0 || ftruncate(fd, sizeof *sh) != 0 || !(sh = map_shared(fd)))
        return 1;
    pthread_mutexattr_t ma;
    pthread_condattr_t ca;
    pthread_barrierattr_t ba;
    pthread_rwlockattr_t ra;
    pthread_rwlockattr_init(&ra);
    pthread_rwlockattr_setpshared(&ra, PTHREAD_PROCESS_SHARED);
    /* The writer waits for the readers in at most, not for a stream of
     * new ones: worker 0 is the culprit by a margin. */
    pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
    pthread_condattr_init(&ca);
    pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED);
    pthread_barrierattr_init(&ba);
    pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED);
    if (pthread_mutex_init(&sh->mutex, &ma) || pthread_cond_init(&sh->cond, &ca) ||
        pthread_barrier_init(&sh->barrier, &ba, WORKERS) || pthread_rwlock_init(&sh->rwlock, &ra))
        return 1;
    pid_t pids[WORKERS];
    for (int i = 0; i < WORKERS; i++) {
        pids[i] = fork();
        if (pids[i] == 0) {
            if (outside && i == 0) {
                char fdarg[16];
                snprintf(fdarg, sizeof fdarg, "%d", fd);
                unsetenv("LD_PRELOAD");
                execl("/proc/self/exe", argv[0], "signaller", fdarg, (char *)NULL);
                _exit(3);
            }
            if (mode == 0)
                mutex_worker(i);
            else if (mode == 1)
                cond_worker(i);
            else if (mode == 2)
                barrier_worker(i);
            else
                rwlock_worker(i);
            exit(0);
        }
    }
    for (int i = 0; i < WORKERS; i++) {
        int status;
        if (waitpid(pids[i], &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
            return 1;
    }
    struct release all[WORKERS * MAX_WAITS];
    int n = 0;
    for (int i = 0; i < WORKERS; i++)
        for (int k = 0; k < sh->nreleases[i]; k++)
            all[n++] = sh->releases[i][k];
    qsort(all, n, sizeof all[0], by_time);
    double blame[SITES] = { 0, 0 }, waited = waiting_in(0, 1e18);
    if (mode == 0) { /* a hold: the waiting during it */
        for (int k = 0; k < n; k++)
            blame[all[k].site] += waiting_in(all[k].start, all[k].at);
    } else if (mode == 1) { /* a broadcast: the waiting since the previous one */
        for (int k = 0; k < n; k++)
            blame[all[k].site] += waiting_in(k ? all[k - 1].at : 0, all[k].at);
    } else if (mode == 3) {
        rwlock_truth(all, n, blame);
    } else { /* an episode, WORKERS arrivals in a row: the last arrival's */
        for (int k = 0; k + WORKERS <= n; k += WORKERS) {
            const struct release *last = &all[k + WORKERS - 1];
            for (int j = k; j < k + WORKERS - 1; j++)
                blame[last->site] += last->at - all[j].at;
        }
    }
    /* What the logs cannot place. A mutex's: the waiting during no logged
     * hold (from a release's log to the next holder's first clock read:
     * the hand-off, and a holder descheduled just before its log or its
     * unlock). A cond's: the waiting between a broadcast's log and its
     * return, which belongs to that broadcast or the next one. */
    double unplaced = 0;
    if (mode == 0)
        unplaced = waited - blame[FAST] - blame[SLOW];
    else if (mode == 1)
        for (int k = 0; k < n; k++)
            unplaced += waiting_in(all[k].at, all[k].after);
    for (int s = 0; s < SITES; s++)
        printf("truth %s %.6f\n", site_names[mode][s], blame[s]);
    printf("waited %.6f\n", waited);
    printf("unplaced %.6f\n", unplaced > 0 ? unplaced : 0);
    printf("off_cpu %.6f\n", waits_off_cpu());
    if (mode == 0) { /* the counts: each worker's locks, and each site's releases */
        int released[SITES] = { 0, 0 }, waited_for[SITES] = { 0, 0 }, at_most[SITES] = { 0, 0 };
        static bool proven[WORKERS * MAX_WAITS];
        proven_waited(all, n, proven);
        for (int k = 0; k < n; k++) {
            released[all[k].site]++;
            waited_for[all[k].site] += proven[k];
            /* The real hold lies within the previous release's log and
             * this unlock's return: waiting there may have been during it. */
            at_most[all[k].site] += waiting_in(k ? all[k - 1].at : all[k].start, all[k].after) > 0;
        }
        for (int i = 0; i < WORKERS; i++)
            printf("acquired %d %d\n", (int)pids[i], sh->nacquired[i]);
        for (int s = 0; s < SITES; s++)
            printf("released %s %d %d %d\n", site_names[mode][s], released[s], waited_for[s],
                   at_most[s]);
    }
    return 0;
}
