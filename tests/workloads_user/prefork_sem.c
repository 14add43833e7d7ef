/* A pre-forked server in miniature, built -O2 -g as users build: the
 * parent puts a process-shared semaphore (value 1, used as a lock) in
 * shared memory and forks WORKERS workers that take turns on it. Worker 0
 * computes HOLD_SLOW inside each hold and posts in slow_release; the
 * others hold briefly and post in fast_release. Every worker logs, in the
 * shared memory, each of its waits and posts; the parent then computes
 * the ground truth of the blame rule for semaphores (prefork_truth.h).
 * Prints one line per site:
 * "truth SITE SECONDS", and "waited SECONDS" (all waits). */
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gt_clock.h"
#include "prefork_truth.h"

#define WORKERS   4
#define ROUNDS    30
#define HOLD_SLOW 3000000L /* ns */
#define HOLD_FAST 0L
#define BETWEEN   300000L

struct shared {
    sem_t lock;
    struct prefork_wait waits[WORKERS][ROUNDS];
    struct prefork_post posts[WORKERS][ROUNDS];
};

static struct shared *sh;
static volatile unsigned long sink;

__attribute__((noinline)) static void slow_release(int worker, int round)
{
    sh->posts[worker][round] = (struct prefork_post){ gt_now_s(), 1, 0 };
    sem_post(&sh->lock);
    prefork_posted(&sh->posts[worker][round]);
    sink++; /* the post is not a tail call */
}

__attribute__((noinline)) static void fast_release(int worker, int round)
{
    sh->posts[worker][round] = (struct prefork_post){ gt_now_s(), 0, 0 };
    sem_post(&sh->lock);
    prefork_posted(&sh->posts[worker][round]);
    sink++;
}

static void worker(int me)
{
    for (int r = 0; r < ROUNDS; r++) {
        prefork_take(&sh->lock, &sh->waits[me][r]);
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
    double blame[2] = { 0, 0 };
    double waited = prefork_truth(&sh->waits[0][0], WORKERS * ROUNDS, &sh->posts[0][0],
                                  WORKERS * ROUNDS, blame);
    printf("truth slow_release %.6f\n", blame[1]);
    printf("truth fast_release %.6f\n", blame[0]);
    printf("waited %.6f\n", waited);
    printf("off_cpu %.6f\n", prefork_off_cpu(&sh->waits[0][0], WORKERS * ROUNDS));
    printf("unplaced %.6f\n", prefork_unplaced(&sh->waits[0][0], WORKERS * ROUNDS, &sh->posts[0][0],
                                               WORKERS * ROUNDS));
    return 0;
}
