/* A pre-forked server stopped the way `pg_ctl -m immediate` stops
 * PostgreSQL: the parent forks WORKERS workers that compute (so each has
 * samples to write), waits until each has begun, then kills one outright
 * with SIGKILL (a worker still running when the grace period ran out) and
 * sends the others SIGQUIT, on which they leave at once with _exit(2) from
 * their handler (PostgreSQL's quickdie). The parent waits for all of them
 * and exits 0. Prints "killed N": the workers that could not write, and
 * "begun_ms M": the CPU time each worker computed at least.
 *
 * With the argument "masked", each worker first blocks every signal but
 * SIGQUIT (as a server's worker that takes its signals with sigwait),
 * the sampling signal with them: its CPU time is then never sampled, as
 * a worker's can go unsampled on a busy machine (its CPU-time timer is
 * checked only on a scheduler tick it is running at), and it must still
 * write its profile. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WORKERS  4
#define BEGUN_NS 30000000L /* CPU time each worker computes before saying it began */

static volatile unsigned long sink;

static void quick_die(int sig)
{
    (void)sig;
    _exit(2);
}

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

__attribute__((noinline)) static void serve(int ready_fd)
{
    double until = cpu_now() + BEGUN_NS * 1e-9;
    while (cpu_now() < until)
        sink++;
    if (write(ready_fd, "r", 1) != 1)
        _exit(1);
    for (;;)
        sink++;
}

/* Block every signal but SIGQUIT (SIGKILL cannot be blocked). */
static void mask_all_but_quit(void)
{
    sigset_t all;
    sigfillset(&all);
    sigdelset(&all, SIGQUIT);
    if (sigprocmask(SIG_BLOCK, &all, NULL) != 0)
        _exit(1);
}

int main(int argc, char **argv)
{
    int masked = argc > 1 && strcmp(argv[1], "masked") == 0;
    int ready[2];
    if (pipe(ready) != 0)
        return 1;
    pid_t pids[WORKERS];
    for (int i = 0; i < WORKERS; i++) {
        pids[i] = fork();
        if (pids[i] < 0)
            return 1;
        if (pids[i] == 0) {
            signal(SIGQUIT, quick_die);
            if (masked)
                mask_all_but_quit();
            close(ready[0]);
            serve(ready[1]);
        }
    }
    close(ready[1]);
    char c;
    for (int i = 0; i < WORKERS; i++)
        if (read(ready[0], &c, 1) != 1)
            return 1;
    kill(pids[WORKERS - 1], SIGKILL);
    for (int i = 0; i < WORKERS - 1; i++)
        kill(pids[i], SIGQUIT);
    for (int i = 0; i < WORKERS; i++)
        while (waitpid(pids[i], NULL, 0) < 0)
            ;
    printf("killed 1\nbegun_ms %ld\n", BEGUN_NS / 1000000L);
    return 0;
}
