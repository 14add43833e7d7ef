/*
 * shared_timed: timed waits that run out on a process-shared semaphore
 * (docs/DESIGN.md rule 3, "Across processes"). A forked child waits on
 * the semaphore with a 100 ms deadline, ROUNDS times; each wait runs out,
 * and the child then posts the semaphore itself (self_post) and takes the
 * token back (a wait that does not wait). Then it tells the parent, which
 * begins a real wait on the semaphore; the child posts 100 ms later
 * (real_post), which ends it.
 *
 * Prints "timed_out S" (the child's waits that ran out, as it measured
 * them) and "parent_waited S" (the parent's real wait).
 *
 * Usage: shared_timed [ROUNDS]   (default 3)
 */
#include <errno.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gt_clock.h"

__attribute__((noinline)) void self_post(sem_t *s)
{
    if (sem_post(s) != 0)
        exit(1);
}

__attribute__((noinline)) void real_post(sem_t *s)
{
    if (sem_post(s) != 0)
        exit(1);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 3;
    struct shared {
        sem_t sem;
        int64_t timed_out_ns;
    } *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    int ready[2];
    if (sh == MAP_FAILED || sem_init(&sh->sem, 1, 0) != 0 || pipe(ready) != 0)
        return 1;
    pid_t child = fork();
    if (child < 0)
        return 1;
    if (child == 0) {
        for (int i = 0; i < rounds; i++) {
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_nsec += 100000000L;
            if (until.tv_nsec >= 1000000000L) {
                until.tv_sec++;
                until.tv_nsec -= 1000000000L;
            }
            int64_t t0 = gt_now();
            int rc = sem_timedwait(&sh->sem, &until);
            if (rc == 0 || errno != ETIMEDOUT)
                _exit(2); /* nobody else posts yet */
            sh->timed_out_ns += gt_now() - t0;
            self_post(&sh->sem);
            sem_wait(&sh->sem); /* its own token back */
        }
        if (write(ready[1], "r", 1) != 1)
            _exit(1);
        struct timespec later = { 0, 100000000L };
        nanosleep(&later, NULL);
        real_post(&sh->sem);
        _exit(0);
    }
    char c;
    if (read(ready[0], &c, 1) != 1)
        return 1;
    int64_t t0 = gt_now();
    while (sem_wait(&sh->sem) != 0 && errno == EINTR)
        ;
    int64_t waited = gt_now() - t0;
    int status;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return 1;
    printf("timed_out %.9f\nparent_waited %.9f\n", (double)sh->timed_out_ns / 1e9,
           (double)waited / 1e9);
    return 0;
}
