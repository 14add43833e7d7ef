/* A fork-heavy process tree: the parent forks CHILDREN children one after
 * another, each reaped before the next. Each child creates THREADS threads
 * that wait on a condition variable until the child's main thread, after
 * sleeping WAIT_US, broadcasts; then it joins them and exits.
 *   forktree 200 2 1000   a fork-heavy harness or a prefork server's
 *                         workers: 2 threads waiting ~1 ms each
 *   forktree 1600 8 0     LTP's conformance tests (pthread_cond_broadcast/1-2):
 *                         a child per case, each creating several threads
 *
 *   forktree CHILDREN THREADS WAIT_US
 *     prints elapsed_s, per_child_ms, end_mono_ns */
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int released;

static void *waiter(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock);
    while (!released)
        pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
    return NULL;
}

static int child(int threads, long wait_us)
{
    pthread_t t[64];
    if (threads > 64)
        threads = 64;
    for (int i = 0; i < threads; i++)
        if (pthread_create(&t[i], NULL, waiter, NULL) != 0)
            return 1;
    if (wait_us > 0)
        usleep((useconds_t)wait_us);
    pthread_mutex_lock(&lock);
    released = 1;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s CHILDREN THREADS WAIT_US\n", argv[0]);
        return 2;
    }
    int children = atoi(argv[1]), threads = atoi(argv[2]);
    long wait_us = atol(argv[3]);
    long long t0 = bench_now_ns();
    for (int i = 0; i < children; i++) {
        pid_t pid = fork();
        if (pid < 0)
            return 1;
        if (pid == 0)
            exit(child(threads, wait_us));
        int status;
        if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
            return 1;
    }
    double s = (bench_now_ns() - t0) / 1e9;
    printf("elapsed_s %.6f\nper_child_ms %.4f\n", s, s * 1000 / children);
    printf("end_mono_ns %lld\n", bench_now_ns());
    return 0;
}
