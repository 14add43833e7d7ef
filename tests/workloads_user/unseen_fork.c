/* A fork child's threads begin at the fork: a process that computes for
 * COMPUTE_MS, then forks a child whose two threads contend on a mutex.
 * The child's CPU clocks and scheduler statistics start from zero at the
 * fork, so its profile must not count the parent's time before the fork
 * as its main thread's unseen off-CPU time (tests/integration/unseen_waits.sh).
 * Prints "child N" with the child's pid; exit status 0. */
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gt.h"

#define COMPUTE_MS 300
#define WORK_MS    20

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock);
    gt_spin_until(gt_now() + WORK_MS * 1000000ll);
    pthread_mutex_unlock(&lock);
    return NULL;
}

int main(void)
{
    gt_spin_until(gt_now() + COMPUTE_MS * 1000000ll);
    fflush(stdout);
    pid_t child = fork();
    if (child < 0)
        gt_die("fork", errno);
    if (child == 0) {
        pthread_t t[2];
        for (int i = 0; i < 2; i++) {
            int rc = pthread_create(&t[i], NULL, worker, NULL);
            if (rc)
                gt_die("pthread_create", rc);
        }
        for (int i = 0; i < 2; i++)
            pthread_join(t[i], NULL);
        return 0;
    }
    int status = 0;
    waitpid(child, &status, 0);
    printf("child %d\n", (int)child);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
