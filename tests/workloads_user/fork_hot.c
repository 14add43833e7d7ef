/*
 * fork_hot: a hot mutex in a parent and again in its fork child, built
 * -O2 -g. Two threads trade one mutex with CPU work inside until they have
 * used CPU_SECONDS of CPU time together, are joined, and the process
 * forks; the child does the same and exits, the parent waits for it. So
 * while one thread holds, the other waits, in each process, and each
 * process's blame is most of its wait. A holder whose partner is not on
 * its way to the lock yields the CPU as it takes it: where the two threads
 * share one CPU (the other one busy with other processes) the partner then
 * comes to wait for the whole hold, instead of running only between holds
 * (its waits were then a few us each, 0.002 s in all). The end is set by CPU time,
 * not wall time: on a machine busy with other work the traders run as
 * long as it takes to do the same work, and the holders' samples are as
 * many.
 * Under LOCKBLAME_MUTEX=sampled the child's holder samples must owe
 * blame as the parent's do: what the parent's samples owed is not the
 * child's to pay (tests/integration/mutex_sampled_fork.sh).
 *
 * Output: "parent_pid P", "child_pid C" (the child's exit status is the
 * parent's: 0, or 1 if a call failed).
 *
 * Usage: fork_hot [CPU_SECONDS]   (default 0.4)
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t the_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile int stop;
static unsigned long long sink; /* under the_lock */
static int wanting;             /* traders in or on their way into a hold (atomic) */

static void *trader(void *arg)
{
    while (!stop) {
        __atomic_add_fetch(&wanting, 1, __ATOMIC_SEQ_CST);
        if (pthread_mutex_lock(&the_lock) != 0)
            exit(1);
        /* The other trader is not on its way: it is runnable but off the
         * CPU (we share one); let it run and come to wait. */
        if (__atomic_load_n(&wanting, __ATOMIC_SEQ_CST) < 2)
            sched_yield();
        for (int i = 0; i < 30000; i++)
            sink = sink * 6364136223846793005ull + 1442695040888963407ull;
        __atomic_sub_fetch(&wanting, 1, __ATOMIC_SEQ_CST);
        if (pthread_mutex_unlock(&the_lock) != 0)
            exit(1);
    }
    return arg;
}

/* The CPU time threads t[0] and t[1] have used, in seconds. */
static double cpu_of(const pthread_t *t)
{
    double sum = 0;
    for (int i = 0; i < 2; i++) {
        clockid_t clock;
        struct timespec ts;
        if (pthread_getcpuclockid(t[i], &clock) != 0 || clock_gettime(clock, &ts) != 0)
            exit(1);
        sum += (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
    }
    return sum;
}

/* Two threads trade the_lock until they have used `cpu_seconds` of CPU. */
static void trade(double cpu_seconds)
{
    pthread_t t[2];
    stop = 0;
    for (int i = 0; i < 2; i++)
        if (pthread_create(&t[i], NULL, trader, NULL) != 0)
            exit(1);
    while (cpu_of(t) < cpu_seconds) {
        struct timespec ts = { 0, 5 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    stop = 1;
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
}

int main(int argc, char **argv)
{
    double cpu_seconds = argc > 1 ? atof(argv[1]) : 0.4;
    trade(cpu_seconds);
    fflush(stdout);
    pid_t child = fork();
    if (child < 0)
        return 1;
    if (child == 0) {
        trade(cpu_seconds);
        return 0;
    }
    int status;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status))
        return 1;
    printf("parent_pid %d\nchild_pid %d\n", (int)getpid(), (int)child);
    return WEXITSTATUS(status);
}
