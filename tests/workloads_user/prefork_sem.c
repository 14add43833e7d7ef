/* A pre-forked server in miniature, built -O2 -g as users build: the
 * parent puts a process-shared semaphore (value 1, used as a lock) in
 * shared memory and forks WORKERS workers that take turns on it. Worker 0
 * computes HOLD_SLOW inside each hold and posts in slow_release; the
 * others hold briefly and post in fast_release. Every worker logs, in the
 * shared memory, each of its waits (entry to and return from sem_wait)
 * and each post (just before sem_post, with its site); the parent then
 * computes the ground truth of the blame rule for semaphores: the
 * idleness accrued since the previous post, over the waiters of every
 * process, is blamed on the next post. Prints one line per site:
 * "truth SITE SECONDS", and "waited SECONDS" (all waits). */
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gt_clock.h"

#define WORKERS   4
#define ROUNDS    30
#define HOLD_SLOW 3000000L /* ns */
#define HOLD_FAST 0L
#define BETWEEN   300000L

struct wait_log {
    double start, end;
};
struct post_log {
    double at;
    int slow;
};

struct shared {
    sem_t lock;
    struct wait_log waits[WORKERS][ROUNDS];
    struct post_log posts[WORKERS][ROUNDS];
};

static struct shared *sh;
static volatile unsigned long sink;

__attribute__((noinline)) static void slow_release(int worker, int round)
{
    sh->posts[worker][round] = (struct post_log){ gt_now_s(), 1 };
    sem_post(&sh->lock);
    sink++; /* the post is not a tail call */
}

__attribute__((noinline)) static void fast_release(int worker, int round)
{
    sh->posts[worker][round] = (struct post_log){ gt_now_s(), 0 };
    sem_post(&sh->lock);
    sink++;
}

static void worker(int me)
{
    for (int r = 0; r < ROUNDS; r++) {
        double start = gt_now_s();
        while (sem_wait(&sh->lock) != 0)
            ;
        sh->waits[me][r] = (struct wait_log){ start, gt_now_s() };
        if (me == 0) {
            gt_spin_ns(HOLD_SLOW);
            slow_release(me, r);
        } else {
            gt_spin_ns(HOLD_FAST);
            fast_release(me, r);
        }
        gt_spin_ns(BETWEEN);
    }
}

static int by_time(const void *a, const void *b)
{
    double x = ((const struct post_log *)a)->at, y = ((const struct post_log *)b)->at;
    return (x > y) - (x < y);
}

int main(void)
{
    sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED || sem_init(&sh->lock, 1, 1) != 0)
        return 1;
    pid_t pids[WORKERS];
    for (int i = 0; i < WORKERS; i++) {
        pids[i] = fork();
        if (pids[i] == 0) {
            worker(i);
            exit(0);
        }
    }
    for (int i = 0; i < WORKERS; i++) {
        int status;
        if (waitpid(pids[i], &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
            return 1;
    }
    /* The truth: for each post, the integral of the number of waiters
     * since the previous post (waits counted over [start, end]). */
    struct post_log posts[WORKERS * ROUNDS];
    int n = 0;
    for (int i = 0; i < WORKERS; i++)
        for (int r = 0; r < ROUNDS; r++)
            posts[n++] = sh->posts[i][r];
    qsort(posts, n, sizeof posts[0], by_time);
    double blame[2] = { 0, 0 }, waited = 0, previous = 0;
    for (int i = 0; i < WORKERS; i++)
        for (int r = 0; r < ROUNDS; r++)
            waited += sh->waits[i][r].end - sh->waits[i][r].start;
    for (int k = 0; k < n; k++) {
        double from = previous, to = posts[k].at;
        for (int i = 0; i < WORKERS; i++)
            for (int r = 0; r < ROUNDS; r++) {
                double a = sh->waits[i][r].start > from ? sh->waits[i][r].start : from;
                double b = sh->waits[i][r].end < to ? sh->waits[i][r].end : to;
                if (b > a)
                    blame[posts[k].slow] += b - a;
            }
        previous = to;
    }
    printf("truth slow_release %.6f\n", blame[1]);
    printf("truth fast_release %.6f\n", blame[0]);
    printf("waited %.6f\n", waited);
    return 0;
}
