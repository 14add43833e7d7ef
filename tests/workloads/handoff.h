/*
 * handoff.h: the shared body of the hand-off ground-truth workloads
 * (handoff_mutex.c, handoff_spin.c).
 *
 * One lock, one *slow* holder thread and several *fast* holder threads.
 * Each thread loops until the deadline:
 *
 *     t_wait = now; lock();  t_acq = now;   -- wait interval [t_wait, t_acq)
 *     spin for the hold time; t_rel = now;  -- hold interval [t_acq, t_rel)
 *     release();             -- slow_release_site() or fast_release_site()
 *     think (spin or sleep) outside the lock
 *
 * Every thread logs its intervals into its own preallocated array (no malloc
 * in the timed loop), with CLOCK_MONOTONIC, which is coherent across CPUs.
 * After joining, main sweeps over all interval end points and computes the
 * blame each release site deserves under docs/DESIGN.md rule 3: the
 * integral over that site's hold intervals of w(t), the number of threads waiting at t
 * (split 1/k when k holders overlap, which for these locks never happens).
 * Waiting while nobody holds the lock is hand-off latency.
 *
 * The sweep also gives the blame that CPU samples of the waiters can see
 * (sampled spin waits: a spinner kept off its CPU by other processes waits
 * unseen): each wait's CPU time (its thread's CPU clock across the lock
 * call) goes to the sites whose holds overlap the wait, in proportion to
 * the overlap. A spinner on a CPU takes a free lock at once, so its CPU
 * time falls within holds: none of it is hand-off unless no hold overlaps
 * the wait. On an otherwise idle machine a spinner runs throughout its
 * wait and the two figures agree.
 *
 * Output: JSON, to the file named by $GROUND_TRUTH or else to stdout:
 *   {"workload", "object", "object_address", "threads", "duration_s",
 *    "total_wait_s", "handoff_s", "sites": {site: blame_s},
 *    "holds": {site: count}, "max_holders",
 *    "cpu": {"total_wait_s", "handoff_s", "sites": {site: blame_s}}}
 *   ("cpu": the second sweep's figures)
 * Exit status 0, or 1 if mutual exclusion was ever violated or a call failed.
 *
 * Usage: PROG [FAST_THREADS [DURATION_MS]]
 */
#ifndef HANDOFF_H
#define HANDOFF_H

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gt_clock.h"

enum {
    SITE_SLOW = 0,
    SITE_FAST = 1,
    N_SITES = 2
};
static const char *const site_names[N_SITES] = { "slow_release_site", "fast_release_site" };

struct handoff_cfg {
    const char *workload;           /* name printed in the JSON */
    const char *object;             /* lockblame object kind: "mutex", "spin" */
    const void *address;            /* the lock, as lockblame will see it */
    void (*lock)(void);             /* acquire; dies on error */
    void (*release[N_SITES])(void); /* release, one function per site */
    int64_t hold_ns[N_SITES];       /* time spent holding per acquisition */
    int64_t think_ns[N_SITES];      /* time spent outside the lock per loop */
    int think_sleeps;               /* 1: think in nanosleep (off CPU), 0: spin */
    int default_fast_threads;
};

struct hold_rec {
    int64_t t_wait;         /* ns: just before the lock call */
    int64_t t_acq;          /* ns: just after the lock call returned */
    int64_t t_rel;          /* ns: just before the release call */
    int64_t c_wait;         /* ns of the thread's CPU clock just before the lock call */
    int64_t c_acq;          /* the same, just after it returned */
    double held_at_wait[2]; /* the sweep's per-site held time at t_wait */
};

struct thread_log {
    const struct handoff_cfg *cfg;
    pthread_t tid;
    int index;            /* 0 is the slow holder */
    int site;             /* SITE_SLOW or SITE_FAST */
    struct hold_rec *rec; /* preallocated, cap entries */
    size_t n, cap;
};

static atomic_int ho_ready; /* threads ready to start */
static atomic_int ho_go;    /* set by main when all are ready */
static int64_t ho_deadline; /* ns, written before ho_go */

static inline int64_t ho_cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void ho_die(const char *what, int rc)
{
    fprintf(stderr, "%s failed: %s\n", what, strerror(rc));
    exit(1);
}

static void *ho_thread(void *arg)
{
    struct thread_log *lg = arg;
    const struct handoff_cfg *cfg = lg->cfg;
    int64_t hold = cfg->hold_ns[lg->site], think = cfg->think_ns[lg->site];
    void (*release)(void) = cfg->release[lg->site];

    atomic_fetch_add(&ho_ready, 1);
    while (!atomic_load(&ho_go))
        sched_yield();
    int64_t deadline = ho_deadline;
    /* Stagger the fast threads a little so they do not start in lock step. */
    gt_spin_until(gt_now() + think * lg->index / 4);

    while (lg->n < lg->cap) {
        struct hold_rec *r = &lg->rec[lg->n];
        r->c_wait = ho_cpu_now();
        r->t_wait = gt_now();
        if (r->t_wait >= deadline)
            break;
        cfg->lock();
        r->t_acq = gt_now();
        r->c_acq = ho_cpu_now();
        gt_spin_until(r->t_acq + hold);
        r->t_rel = gt_now();
        release();
        lg->n++;
        if (cfg->think_sleeps) {
            struct timespec ts = { 0, think };
            nanosleep(&ts, NULL);
        } else {
            gt_spin_until(gt_now() + think);
        }
    }
    return NULL;
}

struct ho_event {
    int64_t t;
    int dw;               /* change in the number of waiters */
    struct hold_rec *rec; /* the wait's record, when dw != 0 */
    int site;             /* -1, or the site whose holder count changes by dh */
    int dh;
};

static int ho_event_cmp(const void *a, const void *b)
{
    const struct ho_event *x = a, *y = b;
    if (x->t != y->t)
        return (x->t > y->t) - (x->t < y->t);
    return x->dh - y->dh; /* at equal times, a release before an acquire */
}

static int handoff_main(const struct handoff_cfg *cfg, int argc, char **argv)
{
    int nfast = argc > 1 ? atoi(argv[1]) : cfg->default_fast_threads;
    int ms = argc > 2 ? atoi(argv[2]) : 1000;
    if (nfast < 1 || nfast > 64 || ms < 1) {
        fprintf(stderr, "usage: %s [FAST_THREADS 1..64 [DURATION_MS]]\n", argv[0]);
        return 2;
    }
    int nthreads = nfast + 1;
    struct thread_log *logs = calloc((size_t)nthreads, sizeof *logs);
    if (!logs)
        ho_die("calloc", ENOMEM);
    for (int i = 0; i < nthreads; i++) {
        struct thread_log *lg = &logs[i];
        lg->cfg = cfg;
        lg->index = i;
        lg->site = i == 0 ? SITE_SLOW : SITE_FAST;
        /* Enough for the whole run even if every loop took only the hold
         * and think time; a full log just ends that thread's loop early. */
        lg->cap =
            (size_t)ms * 1000000 / (size_t)(cfg->hold_ns[lg->site] + cfg->think_ns[lg->site]) + 16;
        lg->rec = calloc(lg->cap, sizeof *lg->rec);
        if (!lg->rec)
            ho_die("calloc", ENOMEM);
        memset(lg->rec, 0xff, lg->cap * sizeof *lg->rec); /* fault pages in now */
    }
    for (int i = 0; i < nthreads; i++) {
        int rc = pthread_create(&logs[i].tid, NULL, ho_thread, &logs[i]);
        if (rc)
            ho_die("pthread_create", rc);
    }
    while (atomic_load(&ho_ready) < nthreads)
        sched_yield();
    int64_t t0 = gt_now();
    ho_deadline = t0 + (int64_t)ms * 1000000;
    atomic_store(&ho_go, 1);
    for (int i = 0; i < nthreads; i++) {
        int rc = pthread_join(logs[i].tid, NULL);
        if (rc)
            ho_die("pthread_join", rc);
    }
    double duration = (double)(gt_now() - t0) / 1e9;

    /* The sweep. */
    size_t nrec = 0;
    for (int i = 0; i < nthreads; i++)
        nrec += logs[i].n;
    struct ho_event *ev = malloc(4 * nrec * sizeof *ev + 1);
    if (!ev)
        ho_die("malloc", ENOMEM);
    size_t ne = 0;
    long holds[N_SITES] = { 0 };
    double total_wait = 0, total_wait_cpu = 0;
    for (int i = 0; i < nthreads; i++) {
        for (size_t j = 0; j < logs[i].n; j++) {
            struct hold_rec *r = &logs[i].rec[j];
            int s = logs[i].site;
            ev[ne++] = (struct ho_event){ r->t_wait, +1, r, -1, 0 };
            ev[ne++] = (struct ho_event){ r->t_acq, -1, r, -1, 0 };
            ev[ne++] = (struct ho_event){ r->t_acq, 0, NULL, s, +1 };
            ev[ne++] = (struct ho_event){ r->t_rel, 0, NULL, s, -1 };
            holds[s]++;
            total_wait += (double)(r->t_acq - r->t_wait);
            total_wait_cpu += (double)(r->c_acq - r->c_wait);
        }
    }
    qsort(ev, ne, sizeof *ev, ho_event_cmp);
    double blame[N_SITES] = { 0 }, handoff = 0;
    double blame_cpu[N_SITES] = { 0 }, handoff_cpu = 0;
    double held[N_SITES] = { 0 }; /* each site's held time so far (split 1/k) */
    int w = 0, h[N_SITES] = { 0 }, max_holders = 0;
    for (size_t i = 0; i < ne; i++) {
        if (i > 0) {
            double dt = (double)(ev[i].t - ev[i - 1].t);
            int k = h[SITE_SLOW] + h[SITE_FAST];
            for (int s = 0; k > 0 && s < N_SITES; s++)
                held[s] += dt * h[s] / k;
            if (w > 0 && k == 0) {
                handoff += w * dt;
            } else if (w > 0) {
                for (int s = 0; s < N_SITES; s++)
                    blame[s] += w * dt * h[s] / k;
            }
        }
        struct hold_rec *r = ev[i].rec;
        if (ev[i].dw > 0) {
            memcpy(r->held_at_wait, held, sizeof held);
        } else if (ev[i].dw < 0) {
            double cpu = (double)(r->c_acq - r->c_wait), overlap = 0;
            for (int s = 0; s < N_SITES; s++)
                overlap += held[s] - r->held_at_wait[s];
            for (int s = 0; overlap > 0 && s < N_SITES; s++)
                blame_cpu[s] += cpu * (held[s] - r->held_at_wait[s]) / overlap;
            if (overlap <= 0)
                handoff_cpu += cpu;
        }
        w += ev[i].dw;
        if (ev[i].site >= 0)
            h[ev[i].site] += ev[i].dh;
        if (h[SITE_SLOW] + h[SITE_FAST] > max_holders)
            max_holders = h[SITE_SLOW] + h[SITE_FAST];
    }

    FILE *out = stdout;
    const char *gt = getenv("GROUND_TRUTH");
    if (gt && *gt) {
        out = fopen(gt, "w");
        if (!out)
            ho_die(gt, errno);
    }
    fprintf(out,
            "{\"workload\": \"%s\", \"object\": \"%s\", \"object_address\": %llu,\n"
            " \"threads\": %d, \"duration_s\": %.6f,\n"
            " \"total_wait_s\": %.9f, \"handoff_s\": %.9f,\n"
            " \"sites\": {\"%s\": %.9f, \"%s\": %.9f},\n"
            " \"holds\": {\"%s\": %ld, \"%s\": %ld},\n"
            " \"max_holders\": %d,\n"
            " \"cpu\": {\"total_wait_s\": %.9f, \"handoff_s\": %.9f,\n"
            "  \"sites\": {\"%s\": %.9f, \"%s\": %.9f}}}\n",
            cfg->workload, cfg->object, (unsigned long long)(uintptr_t)cfg->address, nthreads,
            duration, total_wait / 1e9, handoff / 1e9, site_names[SITE_SLOW],
            blame[SITE_SLOW] / 1e9, site_names[SITE_FAST], blame[SITE_FAST] / 1e9,
            site_names[SITE_SLOW], holds[SITE_SLOW], site_names[SITE_FAST], holds[SITE_FAST],
            max_holders, total_wait_cpu / 1e9, handoff_cpu / 1e9, site_names[SITE_SLOW],
            blame_cpu[SITE_SLOW] / 1e9, site_names[SITE_FAST], blame_cpu[SITE_FAST] / 1e9);
    if (out != stdout && fclose(out) != 0)
        ho_die(gt, errno);
    if (max_holders > 1) {
        fprintf(stderr, "%s: mutual exclusion violated: %d holders at once\n", cfg->workload,
                max_holders);
        return 1;
    }
    return 0;
}

#endif /* HANDOFF_H */
