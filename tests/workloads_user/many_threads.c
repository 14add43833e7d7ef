/* Thousands of threads alive at once, built -O2.
 *
 *   many_threads N   opens /dev/null first and prints the fd it got, then
 *                    creates N threads with 64 KiB stacks; each computes a
 *                    little, checks in, and waits on a barrier until all N
 *                    are alive together; then all are joined.
 *
 * Prints the first fd, how many threads ran and the sum of their results
 * (the same natively and preloaded), and lists which of the low fds
 * (below 64) are perf events (there must be none). */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_barrier_t all_alive;
static unsigned long results[100000];

static void *worker(void *arg)
{
    unsigned long i = (unsigned long)arg, x = i * 2654435761ul + 1;
    for (int k = 0; k < 20000; k++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    results[i] = x % 1000;
    pthread_barrier_wait(&all_alive);
    return NULL;
}

static int low_perf_fds(void)
{
    int n = 0;
    for (int fd = 0; fd < 64; fd++) {
        char path[64], target[256];
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        ssize_t len = readlink(path, target, sizeof target - 1);
        if (len <= 0)
            continue;
        target[len] = '\0';
        if (strstr(target, "perf_event"))
            n++;
    }
    return n;
}

int main(int argc, char **argv)
{
    int fd = open("/dev/null", O_RDONLY);
    printf("first fd %d\n", fd);
    long n = argc > 1 ? atol(argv[1]) : 1000;
    if (n < 1 || n > 100000)
        return 2;
    pthread_t *t = calloc((size_t)n, sizeof *t);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    pthread_barrier_init(&all_alive, NULL, (unsigned)n + 1);
    long created = 0;
    for (long i = 0; i < n; i++) {
        if (pthread_create(&t[i], &attr, worker, (void *)i) != 0) {
            printf("pthread_create failed after %ld threads\n", created);
            fflush(stdout);
            _exit(1); /* the others wait on the barrier for ever */
        }
        created++;
    }
    pthread_barrier_wait(&all_alive);
    printf("perf event fds below 64: %d\n", low_perf_fds());
    for (long i = 0; i < created; i++)
        pthread_join(t[i], NULL);
    unsigned long sum = 0;
    for (long i = 0; i < created; i++)
        sum += results[i];
    printf("threads %ld of %ld, sum %lu\n", created, n, sum);
    return created == n ? 0 : 1;
}
