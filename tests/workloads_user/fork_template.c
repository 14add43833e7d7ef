/* A parent that forks its children one after another, as a test harness
 * or a prefork server does, built -O2 -g as users build. Every process
 * (the parent, each child, and the grandchildren that one child forks in
 * turn) creates its own threads, each running worker(), joins them, and
 * prints one line, "proc PID PPID THREADS START" (THREADS counts its main
 * thread; START is its start time as /proc/self/stat gives it), before it
 * exits. The children after the parent's second fork
 * start their exit write from the profile database the parent prepared
 * (report/writer/profile_db.h); the grandchildren from the copy their
 * parent inherited. At its end the parent prints "sqlite_mapped 0|1":
 * whether SQLite is in its address space before its own exit write (the
 * template loads it for the children, except under `lockblame run`). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHILDREN      6
#define GRANDCHILDREN 3
#define FORKING_CHILD 3 /* the child that forks grandchildren */

static volatile unsigned long sink;

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void *worker(void *arg)
{
    (void)arg;
    double until = cpu_s() + 0.005;
    while (cpu_s() < until)
        sink++;
    return NULL;
}

/* This process's start time: /proc/self/stat's field 22 (after the
 * command, which may hold spaces, field 3 on), or 0. */
static unsigned long long proc_start(void)
{
    char buf[1024];
    unsigned long long start = 0;
    FILE *stat = fopen("/proc/self/stat", "r");
    size_t got = stat ? fread(buf, 1, sizeof buf - 1, stat) : 0;
    if (stat)
        fclose(stat);
    buf[got] = '\0';
    char *p = strrchr(buf, ')');
    for (int field = 2; p && field < 22; field++)
        p = strchr(p + 1, ' ');
    if (p)
        start = strtoull(p + 1, NULL, 10);
    return start;
}

/* nthreads threads of worker(), joined; then the process's line. */
static void run_threads(int nthreads)
{
    pthread_t t[16];
    for (int i = 0; i < nthreads; i++)
        if (pthread_create(&t[i], NULL, worker, NULL) != 0)
            exit(3);
    for (int i = 0; i < nthreads; i++)
        pthread_join(t[i], NULL);
    dprintf(1, "proc %d %d %d %llu\n", (int)getpid(), (int)getppid(), nthreads + 1, proc_start());
}

/* Fork n processes one after another; the i-th (from 1) runs
 * first_threads + i threads, and the forking one's, if any, forks more. */
static void fork_in_turn(int n, int first_threads, int forking)
{
    for (int i = 1; i <= n; i++) {
        pid_t pid = fork();
        if (pid < 0)
            exit(4);
        if (pid == 0) {
            if (i == forking)
                fork_in_turn(GRANDCHILDREN, 1, 0);
            run_threads(first_threads + i);
            exit(0);
        }
        int status;
        if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
            exit(5);
    }
}

/* Whether a libsqlite3 is mapped in this process. */
static int sqlite_mapped(void)
{
    char line[512];
    int found = 0;
    FILE *maps = fopen("/proc/self/maps", "r");
    while (maps && fgets(line, sizeof line, maps))
        found |= strstr(line, "libsqlite3") != NULL;
    if (maps)
        fclose(maps);
    return found;
}

int main(void)
{
    fork_in_turn(CHILDREN, 0, FORKING_CHILD);
    run_threads(2);
    dprintf(1, "sqlite_mapped %d\n", sqlite_mapped());
    return 0;
}
