/* The ground truth of the blame rule for a semaphore used as a lock by
 * the processes of a pre-forked server (prefork_sem.c, prefork_exec.c):
 * each post is blamed for the idleness accrued since the previous post,
 * over the waiters of every process (docs/DESIGN.md rule 3). The workers
 * log each wait (entry to and return from a sem_wait that blocked:
 * prefork_take) and each post (just before sem_post, with its site's
 * index) in shared memory; the parent computes the truth from the logs
 * once they have all ended. */
#ifndef PREFORK_TRUTH_H
#define PREFORK_TRUTH_H
#include <semaphore.h>
#include <stdlib.h>

#include "gt_clock.h"

struct prefork_wait {
    double start, end;
};
struct prefork_post {
    double at;
    int site;
};

/* Takes the lock s. A wait is timed only where the lock was not free: a
 * trywait that succeeds at once waited for nothing, and a clock read
 * before it would count a process descheduled just before the call as
 * waiting on the lock (a busy machine's deschedules are milliseconds,
 * which lockblame rightly does not count: docs/DESIGN.md rule 3's wait is a
 * blocking call). *w is the blocking call's span, or {0, 0}. */
static void prefork_take(sem_t *s, struct prefork_wait *w)
{
    *w = (struct prefork_wait){ 0, 0 };
    if (sem_trywait(s) == 0)
        return;
    double start = gt_now_s();
    while (sem_wait(s) != 0)
        ;
    *w = (struct prefork_wait){ start, gt_now_s() };
}

static int prefork_by_time(const void *a, const void *b)
{
    double x = ((const struct prefork_post *)a)->at, y = ((const struct prefork_post *)b)->at;
    return (x > y) - (x < y);
}

/* blame[site] += the idleness each post of that site is blamed for (posts
 * sorted here); returns the waits' total. A post with at == 0 was never
 * made. */
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
        double from = previous, to = posts[k].at;
        for (int i = 0; i < nwaits; i++) {
            double a = waits[i].start > from ? waits[i].start : from;
            double b = waits[i].end < to ? waits[i].end : to;
            if (b > a)
                blame[posts[k].site] += b - a;
        }
        previous = to;
    }
    return waited;
}
#endif
