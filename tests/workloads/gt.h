/*
 * gt.h: shared helpers of the ground-truth workloads for condition
 * variables, semaphores, barriers, rwlocks and joins (gt_*.c).
 *
 * Like handoff.h, every thread logs the CLOCK_MONOTONIC time of each event
 * that matters into its own preallocated array (no malloc in the timed
 * part); after joining, main computes what docs/DESIGN.md's blame rules give
 * for those events and writes JSON in the format tests/lib/check_blame.py
 * reads:
 *   {"workload", "object", "object_address", "object_addresses" (optional:
 *    all objects whose sync_object rows make up the total),
 *    "threads", "duration_s", "total_wait_s", "handoff_s", "unattributed_s",
 *    "sites": {site: blame_s}, "holds": {site: count}}
 * to the file named by $GROUND_TRUTH, or else to stdout.
 *
 * Two sweeps cover the accrual rules:
 *   gt_sweep_signal   cond vars, semaphores: idleness accrued since the
 *                     previous signal/post is blamed on the next one; what
 *                     accrues after the last one is unattributed, and so is
 *                     what a wait that ran out of time accrued since the
 *                     last signal/post before its end (GT_TIMED_OUT).
 *   gt_sweep_holders  rwlocks: idleness accrued while k threads hold is
 *                     split 1/k to each holder's release site; accrual with
 *                     no holder is hand-off latency.
 * Barriers and joins compute their truth directly (gt_barrier.c, gt_join.c).
 */
#ifndef GT_H
#define GT_H

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gt_clock.h"

#define GT_MAX_SITES   8
#define GT_MAX_OBJECTS 8

/* The CLOCK_REALTIME time ns from now: a timed wait's deadline. */
__attribute__((unused)) static struct timespec gt_realtime_in(int64_t ns)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_sec += (time_t)(ns / 1000000000);
    t.tv_nsec += (long)(ns % 1000000000);
    if (t.tv_nsec >= 1000000000) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000;
    }
    return t;
}

/* Off the CPU until t (absolute CLOCK_MONOTONIC ns). */
static inline void gt_sleep_until(int64_t t)
{
    struct timespec ts = { (time_t)(t / 1000000000), (long)(t % 1000000000) };
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

__attribute__((unused)) static void gt_die(const char *what, int rc)
{
    fprintf(stderr, "%s failed: %s\n", what, strerror(rc));
    exit(1);
}

/* calloc that also touches the pages now, so the timed part never faults. */
__attribute__((unused)) static void *gt_alloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p)
        gt_die("calloc", ENOMEM);
    memset(p, 0xff, n * size);
    memset(p, 0, n * size);
    return p;
}

/* One thread's log of intervals [t0, t1) (a wait or a hold) and, for
 * signallers, instants t0 with a site. Preallocated with cap entries. */
struct gt_span {
    int64_t t0, t1;
    int site; /* hold/signal site, or -1 for a wait (GT_TIMED_OUT: one that ran out of time) */
};

#define GT_TIMED_OUT (-2)

struct gt_log {
    struct gt_span *s;
    size_t n, cap;
};

__attribute__((unused)) static void gt_log_init(struct gt_log *lg, size_t cap)
{
    lg->s = gt_alloc(cap, sizeof *lg->s);
    lg->n = 0;
    lg->cap = cap;
}

static inline void gt_log_add(struct gt_log *lg, int64_t t0, int64_t t1, int site)
{
    if (lg->n >= lg->cap) {
        fprintf(stderr, "gt: log full (%zu entries)\n", lg->cap);
        exit(1);
    }
    lg->s[lg->n++] = (struct gt_span){ t0, t1, site };
}

/* Start gate: workers wait until main releases them all at once. */
static atomic_int gt_ready, gt_go;

__attribute__((unused)) static void gt_gate_arrive(void)
{
    atomic_fetch_add(&gt_ready, 1);
    while (!atomic_load(&gt_go))
        sched_yield();
}

/* Returns the start time. If deadline is not NULL, *deadline = start +
 * duration_ns is written before the gate opens (workers may read it after
 * gt_gate_arrive without a race). */
__attribute__((unused)) static int64_t gt_gate_open(int nthreads, int64_t *deadline,
                                                    int64_t duration_ns)
{
    while (atomic_load(&gt_ready) < nthreads)
        sched_yield();
    int64_t t0 = gt_now();
    if (deadline)
        *deadline = t0 + duration_ns;
    atomic_store(&gt_go, 1);
    return t0;
}

struct gt_result {
    const char *workload, *object;
    const void *addresses[GT_MAX_OBJECTS];
    int naddresses;
    int threads;
    double duration_s;
    int nsites;
    const char *site_names[GT_MAX_SITES];
    double blame_ns[GT_MAX_SITES];
    long counts[GT_MAX_SITES];
    double total_wait_ns, handoff_ns, unattributed_ns;
    double expired_ns;        /* of unattributed_ns, the timed-out waits' (gt_sweep_signal) */
    long waits;               /* the wait spans swept */
    bool all_objects_of_kind; /* the workload cannot name its objects (a runtime's own
                               * locks): check_blame.py sums every row of the kind */
};

struct gt_event {
    int64_t t;
    int dw;          /* change in the number of waiters */
    int site;        /* -1, or the site whose holder count changes / that signals */
    int dh;          /* holders: +1 acquire, -1 release; signals: 0 */
    int64_t expired; /* the end of a wait that ran out of time: its start, else 0 */
    int log;         /* a wait's begin or end: its thread's log + 1, else 0 */
};

__attribute__((unused)) static int gt_event_cmp(const void *a, const void *b)
{
    const struct gt_event *x = a, *y = b;
    if (x->t != y->t)
        return (x->t > y->t) - (x->t < y->t);
    return x->dh - y->dh; /* at equal times, a release before an acquire */
}

__attribute__((unused)) static struct gt_event *gt_events(struct gt_log *logs, int nlogs,
                                                          size_t *ne)
{
    size_t n = 0;
    for (int i = 0; i < nlogs; i++)
        n += logs[i].n;
    struct gt_event *ev = malloc((2 * n + 1) * sizeof *ev);
    if (!ev)
        gt_die("malloc", ENOMEM);
    *ne = 0;
    return ev;
}

/* A thread's last wait that ran out of time, in gt_sweep_signal: its span,
 * what was taken back at its end, and whether the wait open now put it
 * back (carried). */
struct gt_run {
    int64_t t0, t1; /* t1 0: none */
    double taken;
    int64_t signals; /* the signals seen by its end */
    bool carried;
};

/* Does a wait begun at t go on the run of the one of [t0, t1] that ran out
 * of time: begun right after it (within 1 ms, or an eighth of it if
 * more)? As the tool's wait notes (src/blame/wait_note.h). */
__attribute__((unused)) static bool gt_run_goes_on(int64_t t0, int64_t t1, int64_t t)
{
    int64_t slack = (t1 - t0) / 8 > 1000000 ? (t1 - t0) / 8 : 1000000;
    return t1 && t >= t1 && t - t1 <= slack;
}

/*
 * Cond vars and semaphores (one object). Wait spans (site -1, or
 * GT_TIMED_OUT for a timed wait that ran out) are [enter wait, return);
 * signal spans are instants t0 at a site (t1 ignored). Fills blame_ns,
 * counts (signals per site), total_wait_ns, unattributed_ns (accrued
 * after the last signal, and each timed-out wait's own accrual since the
 * last signal before its end: no signal ended it, docs/DESIGN.md rule 3;
 * that part also in expired_ns); handoff is 0 under this rule. A run of
 * timed waits of one thread, each begun right after the previous one ran
 * out (gt_run_goes_on) with no signal in between, is one wait: the next
 * one puts back what the previous one took, and the signal that ends the
 * run collects it all.
 */
__attribute__((unused)) static void gt_sweep_signal(struct gt_result *res, struct gt_log *logs,
                                                    int nlogs)
{
    size_t ne;
    struct gt_event *ev = gt_events(logs, nlogs, &ne);
    for (int i = 0; i < nlogs; i++) {
        for (size_t j = 0; j < logs[i].n; j++) {
            const struct gt_span *s = &logs[i].s[j];
            if (s->site < 0) {
                ev[ne++] = (struct gt_event){ s->t0, +1, -1, 0, 0, i + 1 };
                ev[ne++] = (struct gt_event){ s->t1, -1, -1, 0, s->site == GT_TIMED_OUT ? s->t0 : 0,
                                              i + 1 };
                res->total_wait_ns += (double)(s->t1 - s->t0);
                res->waits++;
            } else {
                ev[ne++] = (struct gt_event){ s->t0, 0, s->site, 0, 0, 0 };
                res->counts[s->site]++;
            }
        }
    }
    qsort(ev, ne, sizeof *ev, gt_event_cmp);
    struct gt_run *run = calloc((size_t)nlogs + 1, sizeof *run);
    if (!run)
        gt_die("calloc", ENOMEM);
    double pending = 0;
    int w = 0;
    int64_t last_signal = 0, signals = 0;
    for (size_t i = 0; i < ne; i++) {
        if (i > 0)
            pending += (double)w * (double)(ev[i].t - ev[i - 1].t);
        w += ev[i].dw;
        struct gt_run *r = &run[ev[i].log];
        if (ev[i].log && ev[i].dw > 0) { /* a wait begins: does it go on a run? */
            r->carried =
                r->taken > 0 && r->signals == signals && gt_run_goes_on(r->t0, r->t1, ev[i].t);
            if (r->carried) {
                pending += r->taken;
                res->unattributed_ns -= r->taken;
                res->expired_ns -= r->taken;
            }
        }
        if (ev[i].log && ev[i].dw < 0) {
            double carried = r->carried && r->signals == signals ? r->taken : 0;
            *r = (struct gt_run){ 0 };
            if (ev[i].expired) {
                int64_t since = ev[i].expired > last_signal ? ev[i].expired : last_signal;
                double own = (ev[i].t > since ? (double)(ev[i].t - since) : 0) + carried;
                if (own > pending)
                    own = pending;
                pending -= own;
                res->unattributed_ns += own;
                res->expired_ns += own;
                *r = (struct gt_run){ ev[i].expired, ev[i].t, own, signals, false };
            }
        }
        if (ev[i].site >= 0) {
            res->blame_ns[ev[i].site] += pending;
            pending = 0;
            last_signal = ev[i].t;
            signals++;
        }
    }
    res->unattributed_ns += pending;
    free(run);
    free(ev);
}

/*
 * rwlocks (and any lock with shared holders). Wait spans (site -1) are
 * [enter lock, return); hold spans are [acquired, release call) at a site.
 * While k > 0 threads hold, w(t)/k goes to each holder's site; with k == 0
 * it is hand-off latency. counts = holds per site. Returns the largest
 * number of simultaneous holders seen.
 */
__attribute__((unused)) static int gt_sweep_holders(struct gt_result *res, struct gt_log *logs,
                                                    int nlogs)
{
    size_t ne;
    struct gt_event *ev = gt_events(logs, nlogs, &ne);
    for (int i = 0; i < nlogs; i++) {
        for (size_t j = 0; j < logs[i].n; j++) {
            const struct gt_span *s = &logs[i].s[j];
            if (s->site < 0) {
                ev[ne++] = (struct gt_event){ s->t0, +1, -1, 0, 0, 0 };
                ev[ne++] = (struct gt_event){ s->t1, -1, -1, 0, 0, 0 };
                res->total_wait_ns += (double)(s->t1 - s->t0);
                res->waits++;
            } else {
                ev[ne++] = (struct gt_event){ s->t0, 0, s->site, +1, 0, 0 };
                ev[ne++] = (struct gt_event){ s->t1, 0, s->site, -1, 0, 0 };
                res->counts[s->site]++;
            }
        }
    }
    qsort(ev, ne, sizeof *ev, gt_event_cmp);
    int w = 0, k = 0, h[GT_MAX_SITES] = { 0 }, max_k = 0;
    for (size_t i = 0; i < ne; i++) {
        if (i > 0 && w > 0) {
            double acc = (double)w * (double)(ev[i].t - ev[i - 1].t);
            if (k == 0) {
                res->handoff_ns += acc;
            } else {
                for (int s = 0; s < res->nsites; s++)
                    res->blame_ns[s] += acc * h[s] / k;
            }
        }
        w += ev[i].dw;
        if (ev[i].site >= 0) {
            h[ev[i].site] += ev[i].dh;
            k += ev[i].dh;
        }
        if (k > max_k)
            max_k = k;
    }
    free(ev);
    return max_k;
}

__attribute__((unused)) static void gt_write_json(const struct gt_result *r)
{
    FILE *out = stdout;
    const char *gt = getenv("GROUND_TRUTH");
    if (gt && *gt) {
        out = fopen(gt, "w");
        if (!out)
            gt_die(gt, errno);
    }
    fprintf(out, "{\"workload\": \"%s\", \"object\": \"%s\", \"object_address\": %llu,\n",
            r->workload, r->object, (unsigned long long)(uintptr_t)r->addresses[0]);
    fprintf(out, " \"object_addresses\": [");
    for (int i = 0; i < r->naddresses; i++)
        fprintf(out, "%s%llu", i ? ", " : "", (unsigned long long)(uintptr_t)r->addresses[i]);
    fprintf(out, "],\n \"all_objects_of_kind\": %s,", r->all_objects_of_kind ? "true" : "false");
    fprintf(out, "\n \"threads\": %d, \"duration_s\": %.6f,\n", r->threads, r->duration_s);
    fprintf(out, " \"total_wait_s\": %.9f, \"handoff_s\": %.9f, \"unattributed_s\": %.9f,\n",
            r->total_wait_ns / 1e9, r->handoff_ns / 1e9, r->unattributed_ns / 1e9);
    fprintf(out, " \"expired_s\": %.9f,\n", r->expired_ns / 1e9);
    fprintf(out, " \"sites\": {");
    for (int s = 0; s < r->nsites; s++)
        fprintf(out, "%s\"%s\": %.9f", s ? ", " : "", r->site_names[s], r->blame_ns[s] / 1e9);
    fprintf(out, "},\n \"waits\": %ld, \"holds\": {", r->waits);
    for (int s = 0; s < r->nsites; s++)
        fprintf(out, "%s\"%s\": %ld", s ? ", " : "", r->site_names[s], r->counts[s]);
    fprintf(out, "}}\n");
    if (out != stdout && fclose(out) != 0)
        gt_die(gt, errno);
}

/* The signalling workloads' arguments (gt_cond, gt_sem, gt_cond_hot):
 * [CONSUMERS 1..16 [ROUNDS]], defaults 2 and default_rounds. Returns 0,
 * or 2 (the exit status) after printing the usage line. */
__attribute__((unused)) static int gt_consumer_args(int argc, char **argv, long default_rounds,
                                                    int *nconsumers, long *rounds)
{
    *nconsumers = argc > 1 ? atoi(argv[1]) : 2;
    *rounds = argc > 2 ? atol(argv[2]) : default_rounds;
    if (*nconsumers >= 1 && *nconsumers <= 16 && *rounds >= 1)
        return 0;
    fprintf(stderr, "usage: %s [CONSUMERS 1..16 [ROUNDS]]\n", argv[0]);
    return 2;
}

/* Their logs: logs[0] the producer's, with room for producer_events,
 * logs[1..nthreads-1] the consumers', consumer_events each. */
__attribute__((unused)) static struct gt_log *gt_consumer_logs(int nthreads, size_t producer_events,
                                                               size_t consumer_events)
{
    struct gt_log *logs = gt_alloc((size_t)nthreads, sizeof *logs);
    gt_log_init(&logs[0], producer_events);
    for (int i = 1; i < nthreads; i++)
        gt_log_init(&logs[i], consumer_events);
    return logs;
}

/* The signalling workloads' run (gt_cond, gt_sem, gt_cond_hot): thread 0
 * runs first(&logs[0]), threads 1..nthreads-1 rest(&logs[i]), all from
 * one start gate; returns the seconds from the gate's opening to the
 * last join. */
__attribute__((unused)) static double gt_run_logged(int nthreads, void *(*first)(void *),
                                                    void *(*rest)(void *), struct gt_log *logs)
{
    pthread_t *tids = gt_alloc((size_t)nthreads, sizeof *tids);
    for (int i = 0; i < nthreads; i++) {
        int rc = pthread_create(&tids[i], NULL, i == 0 ? first : rest, &logs[i]);
        if (rc)
            gt_die("pthread_create", rc);
    }
    int64_t t0 = gt_gate_open(nthreads, NULL, 0);
    for (int i = 0; i < nthreads; i++) {
        int rc = pthread_join(tids[i], NULL);
        if (rc)
            gt_die("pthread_join", rc);
    }
    free(tids);
    return (double)(gt_now() - t0) / 1e9;
}

/* The truth for one cond or semaphore at addr, signalled from nsites
 * sites (gt_sweep_signal over every thread's log), written as JSON. */
__attribute__((unused)) static void gt_write_signal_truth(const char *workload, const char *object,
                                                          const void *addr,
                                                          const char *const *site_names, int nsites,
                                                          struct gt_log *logs, int nthreads,
                                                          double duration_s)
{
    struct gt_result res = {
        .workload = workload,
        .object = object,
        .addresses = { addr },
        .naddresses = 1,
        .threads = nthreads,
        .duration_s = duration_s,
        .nsites = nsites,
    };
    for (int s = 0; s < nsites; s++)
        res.site_names[s] = site_names[s];
    gt_sweep_signal(&res, logs, nthreads);
    gt_write_json(&res);
}

/*
 * A queue of tasks under one mutex and one cond, shared by the signalling
 * workloads whose producer pushes from named sites (gt_cond_hot,
 * gt_cond_bursty, gt_cond_deferred). The push and the shutdown are macros,
 * so that each site's signal is its own call: an inline helper would be
 * the release site of all of them (docs/DESIGN.md rule 5).
 */
struct gt_queue {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    long queued, consumed;
    int done;
};
#define GT_QUEUE_INIT                                                \
    {                                                                \
        PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0 \
    }

/* Push one task and signal under the lock; the log entry is the signal's
 * time. */
#define GT_QUEUE_PUSH(q, lg, site)                 \
    do {                                           \
        pthread_mutex_lock(&(q)->lock);            \
        (q)->queued++;                             \
        gt_log_add(lg, gt_now(), 0, site);         \
        int rc_ = pthread_cond_signal(&(q)->cond); \
        if (rc_)                                   \
            gt_die("pthread_cond_signal", rc_);    \
        pthread_mutex_unlock(&(q)->lock);          \
    } while (0)

/* Wake every consumer for good. */
#define GT_QUEUE_SHUTDOWN(q, lg, site)      \
    do {                                    \
        pthread_mutex_lock(&(q)->lock);     \
        (q)->done = 1;                      \
        gt_log_add(lg, gt_now(), 0, site);  \
        pthread_cond_broadcast(&(q)->cond); \
        pthread_mutex_unlock(&(q)->lock);   \
    } while (0)

/* Define a push site: a function `name` that works work_ns, then pushes a
 * task and signals (its own release site), logged as site. */
#define GT_QUEUE_PUSH_SITE(name, q, work_ns, site)         \
    __attribute__((noinline)) void name(struct gt_log *lg) \
    {                                                      \
        gt_spin_until(gt_now() + (work_ns));               \
        GT_QUEUE_PUSH(q, lg, site);                        \
    }

/* Define shutdown_broadcast_site, which shuts q down, logged as site. */
#define GT_QUEUE_SHUTDOWN_SITE(q, site)                                       \
    __attribute__((noinline)) void shutdown_broadcast_site(struct gt_log *lg) \
    {                                                                         \
        GT_QUEUE_SHUTDOWN(q, lg, site);                                       \
    }

/* The producer's end: the consumers drain the queue and wait again, then
 * 1 ms more, before the shutdown. */
__attribute__((unused)) static void gt_queue_drained(struct gt_queue *q)
{
    for (;;) {
        pthread_mutex_lock(&q->lock);
        long left = q->queued;
        pthread_mutex_unlock(&q->lock);
        if (left == 0)
            break;
        sched_yield();
    }
    gt_sleep_until(gt_now() + 1000000);
}

/* A consumer holding q->lock: wait, logging each wait, until a task is
 * queued (taken: returns 1) or the queue is shut down (0); q->lock held
 * either way. */
__attribute__((unused)) static int gt_queue_take(struct gt_queue *q, struct gt_log *lg)
{
    while (q->queued == 0 && !q->done) {
        int64_t t0 = gt_now();
        pthread_cond_wait(&q->cond, &q->lock);
        gt_log_add(lg, t0, gt_now(), -1);
    }
    if (q->queued == 0)
        return 0;
    q->queued--;
    q->consumed++;
    return 1;
}

/* main of such a workload: [CONSUMERS [ROUNDS]] (default_rounds), one
 * producer and the consumers, tasks_per_round tasks a round; checks every
 * task was consumed and writes the cond's signal truth. Returns the exit
 * status; *rounds is set before any thread starts. */
__attribute__((unused)) static int
gt_queue_main(int argc, char **argv, const char *name, struct gt_queue *q, long default_rounds,
              long tasks_per_round, long *rounds, void *(*producer)(void *),
              void *(*consumer)(void *), const char *const *site_names, int nsites)
{
    int nconsumers;
    int bad = gt_consumer_args(argc, argv, default_rounds, &nconsumers, rounds);
    if (bad)
        return bad;
    int nthreads = nconsumers + 1;
    long tasks = tasks_per_round * *rounds;
    struct gt_log *logs = gt_consumer_logs(nthreads, (size_t)tasks + 8, (size_t)tasks + 64);
    double duration = gt_run_logged(nthreads, producer, consumer, logs);
    if (q->consumed != tasks) {
        fprintf(stderr, "%s: %ld tasks consumed, %ld produced\n", name, q->consumed, tasks);
        return 1;
    }
    gt_write_signal_truth(name, "cond", &q->cond, site_names, nsites, logs, nthreads, duration);
    fprintf(stderr, "%s: %.0f signals a second\n", name, (double)tasks / duration);
    return 0;
}

#endif /* GT_H */
