/* System calls the profiler must not interrupt (docs/DESIGN.md "Never change the
 * program's behaviour"), built -O2: two threads hand a token back and
 * forth N times through semaphores, then N/4 times through pipes waited
 * on with poll(), computing a little at each turn. Natively neither call
 * ever fails with EINTR (the program has no signal handler); the counts of
 * EINTR it saw must read 0 preloaded too, whatever the sampling event.
 *
 *   eintr_pingpong [N]   (default 100000) */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static sem_t a, b;
static int p1[2], p2[2];
static long n;
static long eintr_sem, eintr_poll; /* updated under the hand-off only */
static volatile unsigned long sink;

static void burn(void)
{
    for (int i = 0; i < 2000; i++)
        sink += (unsigned long)i;
}

static void sem_take(sem_t *s)
{
    while (sem_wait(s) != 0)
        if (errno == EINTR)
            __atomic_add_fetch(&eintr_sem, 1, __ATOMIC_RELAXED);
}

static void poll_in(int fd)
{
    struct pollfd pf = { fd, POLLIN, 0 };
    while (poll(&pf, 1, -1) < 0)
        if (errno == EINTR)
            __atomic_add_fetch(&eintr_poll, 1, __ATOMIC_RELAXED);
}

static void *peer(void *x)
{
    char c;
    for (long i = 0; i < n; i++) {
        sem_take(&a);
        burn();
        sem_post(&b);
    }
    for (long i = 0; i < n / 4; i++) {
        poll_in(p1[0]);
        if (read(p1[0], &c, 1) != 1)
            return NULL;
        burn();
        if (write(p2[1], &c, 1) != 1)
            return NULL;
    }
    return x;
}

int main(int argc, char **argv)
{
    n = argc > 1 ? atol(argv[1]) : 100000;
    char c = 'x';
    if (sem_init(&a, 0, 0) || sem_init(&b, 0, 0) || pipe(p1) || pipe(p2))
        return 1;
    pthread_t t;
    if (pthread_create(&t, NULL, peer, NULL))
        return 1;
    for (long i = 0; i < n; i++) {
        sem_post(&a);
        burn();
        sem_take(&b);
    }
    for (long i = 0; i < n / 4; i++) {
        if (write(p1[1], &c, 1) != 1)
            return 1;
        burn();
        poll_in(p2[0]);
        if (read(p2[0], &c, 1) != 1)
            return 1;
    }
    pthread_join(t, NULL);
    printf("EINTR sem_wait %ld poll %ld\n", eintr_sem, eintr_poll);
    return 0;
}
