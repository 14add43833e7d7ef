/*
 * fork_hot: a hot mutex in a parent and again in its fork child, built
 * -O2 -g. Two threads trade one mutex with CPU work inside for SECONDS,
 * are joined, and the process forks; the child does the same and exits,
 * the parent waits for it. So while one thread holds, the other waits,
 * in each process, and each process's blame is most of its wait.
 * Under LOCKBLAME_MUTEX=sampled the child's holder samples must owe
 * blame as the parent's do: what the parent's samples owed is not the
 * child's to pay (tests/integration/mutex_sampled_fork.sh).
 *
 * Output: "parent_pid P", "child_pid C" (the child's exit status is the
 * parent's: 0, or 1 if a call failed).
 *
 * Usage: fork_hot [SECONDS]   (default 0.4)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t the_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile int stop;
static unsigned long long sink; /* under the_lock */

static void *trader(void *arg)
{
    while (!stop) {
        if (pthread_mutex_lock(&the_lock) != 0)
            exit(1);
        for (int i = 0; i < 3000; i++)
            sink = sink * 6364136223846793005ull + 1442695040888963407ull;
        if (pthread_mutex_unlock(&the_lock) != 0)
            exit(1);
    }
    return arg;
}

/* Two threads trade the_lock for `seconds`. */
static void trade(double seconds)
{
    pthread_t t[2];
    stop = 0;
    for (int i = 0; i < 2; i++)
        if (pthread_create(&t[i], NULL, trader, NULL) != 0)
            exit(1);
    struct timespec ts = { (time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9) };
    while (nanosleep(&ts, &ts) != 0)
        ;
    stop = 1;
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 0.4;
    trade(seconds);
    fflush(stdout);
    pid_t child = fork();
    if (child < 0)
        return 1;
    if (child == 0) {
        trade(seconds);
        return 0;
    }
    int status;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status))
        return 1;
    printf("parent_pid %d\nchild_pid %d\n", (int)getpid(), (int)child);
    return WEXITSTATUS(status);
}
