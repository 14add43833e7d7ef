/* Where a run of timed waits (docs/DESIGN.md rule 3) must not go on:
 *   fork  - main's 200 ms timed wait on a cond runs out, it forks, and in
 *           both processes main waits on the cond again at once, ended by
 *           a thread's signal 20 ms later: the child's wait is its own,
 *           not the rest of its parent's run
 *   reuse - main's 200 ms timed wait on a heap cond runs out, main
 *           destroys it and waits on a fresh cond (which may get the same
 *           lockblame record), ended by a thread's signal 20 ms later: the
 *           second cond is another object, not the first one's run
 * Each process prints "waited S" for its last (signalled) wait. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t shared_cond = PTHREAD_COND_INITIALIZER;
static pthread_cond_t *volatile signalled;
static int flag;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void deadline(struct timespec *ts, long ms)
{
    clock_gettime(CLOCK_REALTIME, ts);
    ts->tv_nsec += (ms % 1000) * 1000000L;
    ts->tv_sec += ms / 1000 + ts->tv_nsec / 1000000000L;
    ts->tv_nsec %= 1000000000L;
}

static void *signaller(void *arg)
{
    (void)arg;
    while (!signalled)
        usleep(1000);
    usleep(20000);
    pthread_mutex_lock(&lock);
    flag = 1;
    pthread_cond_signal(signalled);
    pthread_mutex_unlock(&lock);
    return NULL;
}

/* Locked: a timed wait on c that runs out. */
static void run_out(pthread_cond_t *c)
{
    struct timespec ts;
    deadline(&ts, 200);
    while (pthread_cond_timedwait(c, &lock, &ts) == 0)
        ;
}

/* Locked: waits on c until the signaller's signal; prints the wait. */
static void wait_signalled(pthread_cond_t *c)
{
    struct timespec ts;
    deadline(&ts, 5000);
    double t0 = now_s();
    while (!flag)
        if (pthread_cond_timedwait(c, &lock, &ts) != 0)
            break;
    printf("waited %.6f\n", now_s() - t0);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    pthread_t t;
    if (!strcmp(mode, "fork")) {
        pthread_mutex_lock(&lock);
        run_out(&shared_cond);
        pthread_mutex_unlock(&lock);
        pid_t child = fork();
        if (child < 0)
            return 1;
        pthread_create(&t, NULL, signaller, NULL);
        pthread_mutex_lock(&lock);
        signalled = &shared_cond;
        wait_signalled(&shared_cond);
        pthread_mutex_unlock(&lock);
        pthread_join(t, NULL);
        if (child > 0)
            waitpid(child, NULL, 0);
        return 0;
    }
    if (!strcmp(mode, "reuse")) {
        pthread_create(&t, NULL, signaller, NULL);
        pthread_cond_t *first = malloc(sizeof *first);
        pthread_cond_init(first, NULL);
        pthread_mutex_lock(&lock);
        run_out(first);
        pthread_cond_destroy(first);
        free(first);
        pthread_cond_t *second = malloc(sizeof *second);
        pthread_cond_init(second, NULL);
        signalled = second;
        wait_signalled(second);
        pthread_mutex_unlock(&lock);
        pthread_join(t, NULL);
        return 0;
    }
    fprintf(stderr, "usage: %s fork|reuse\n", argv[0]);
    return 2;
}
