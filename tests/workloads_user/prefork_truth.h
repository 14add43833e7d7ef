/* The ground truth of the blame rule for a semaphore used as a lock by
 * the processes of a pre-forked server (prefork_sem.c, prefork_exec.c):
 * each post is blamed for the idleness accrued since the previous post,
 * over the waiters of every process (docs/DESIGN.md rule 3). The workers
 * log each wait (entry to and return from a sem_wait that blocked:
 * prefork_take) and each post (just before sem_post, with its site's
 * index, and on its return: prefork_posted) in shared memory; the parent
 * computes the truth from the logs once they have all ended.
 *
 * What the logs cannot place (prefork_unplaced): a waiter that the
 * machine keeps off its CPU between its clock read and the blocking call
 * logs waiting that lockblame, timing the call, rightly does not see; and
 * the waiting between a post's log and its return belongs to that post or
 * the next one. The time runnable but off CPU (schedstat's run delay over
 * the span) of each wait in which the waiter was preempted (involuntary
 * context switches: off_cpu.h) bounds the first (prefork_off_cpu); the waiting
 * within each post's span (prefork_unplaced) is the second. A checker
 * widens its tolerance by them (check_prefork.py). */
#ifndef PREFORK_TRUTH_H
#define PREFORK_TRUTH_H
#include <semaphore.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "gt_clock.h"
#include "off_cpu.h"

struct prefork_wait {
    double start, end;
    double off_cpu; /* runnable but not running within the span, where it was
                     * preempted in it (0 otherwise) */
};
struct prefork_post {
    double at;
    int site;
    double after; /* sem_post's return (0: not logged) */
};

/* After sem_post returned: the post's span closes. */
static void prefork_posted(struct prefork_post *p)
{
    p->after = gt_now_s();
}

/* Takes the lock s. A wait is timed only where the lock was not free: a
 * trywait that succeeds at once waited for nothing, and a clock read
 * before it would count a process descheduled just before the call as
 * waiting on the lock (a busy machine's deschedules are milliseconds,
 * which lockblame rightly does not count: docs/DESIGN.md rule 3's wait is a
 * blocking call). *w is the blocking call's span, or {0, 0}. */
static void prefork_take(sem_t *s, struct prefork_wait *w)
{
    *w = (struct prefork_wait){ 0, 0, 0 };
    if (sem_trywait(s) == 0)
        return;
    struct off_cpu_probe probe = off_cpu_probe_start();
    double start = gt_now_s();
    off_cpu_call_begins(&probe);
    while (sem_wait(s) != 0)
        ;
    off_cpu_call_ended(&probe);
    double end = gt_now_s();
    *w = (struct prefork_wait){ start, end, off_cpu_since(probe) };
}

static int prefork_by_time(const void *a, const void *b)
{
    double x = ((const struct prefork_post *)a)->at, y = ((const struct prefork_post *)b)->at;
    return (x > y) - (x < y);
}

/* blame[site] += the idleness each post of that site is blamed for (posts
 * sorted here); returns the waits' total. A post with at == 0 was never
 * made. */
/* The waiting of all the waits within [from, to]. */
static double prefork_waiting_in(const struct prefork_wait *waits, int nwaits, double from,
                                 double to)
{
    double sum = 0;
    for (int i = 0; i < nwaits; i++) {
        double a = waits[i].start > from ? waits[i].start : from;
        double b = waits[i].end < to ? waits[i].end : to;
        if (b > a)
            sum += b - a;
    }
    return sum;
}

static double prefork_truth(const struct prefork_wait *waits, int nwaits,
                            struct prefork_post *posts, int nposts, double *blame)
{
    qsort(posts, nposts, sizeof posts[0], prefork_by_time);
    double waited = 0, previous = 0;
    for (int i = 0; i < nwaits; i++)
        waited += waits[i].end - waits[i].start;
    for (int k = 0; k < nposts; k++) {
        if (posts[k].at == 0)
            continue;
        blame[posts[k].site] += prefork_waiting_in(waits, nwaits, previous, posts[k].at);
        previous = posts[k].at;
    }
    return waited;
}

/* The waits' time runnable but off CPU (see the top). */
static double prefork_off_cpu(const struct prefork_wait *waits, int nwaits)
{
    double sum = 0;
    for (int i = 0; i < nwaits; i++)
        sum += waits[i].off_cpu;
    return sum;
}

/* The waiting within the posts' spans (see the top). */
static double prefork_unplaced(const struct prefork_wait *waits, int nwaits,
                               const struct prefork_post *posts, int nposts)
{
    double sum = 0;
    for (int k = 0; k < nposts; k++)
        if (posts[k].at != 0)
            sum += prefork_waiting_in(waits, nwaits, posts[k].at, posts[k].after);
    return sum;
}
#endif
