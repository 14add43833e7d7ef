/* pthread_cond_broadcast/1-2: thousands of threads, in several forked
 * processes, all waiting on one condition variable; one broadcast wakes
 * them all. The driver prints the time ratio to native (not asserted). */
#include "conf.h"

#include <sys/wait.h>

#define PROCS   3
#define THREADS 1000

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int waiting, go, woken;

static void *waiter(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&m);
    waiting++;
    while (!go)
        pthread_cond_wait(&cv, &m);
    woken++;
    pthread_mutex_unlock(&m);
    return NULL;
}

static int one_process(void)
{
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, 65536);
    static pthread_t t[THREADS];
    int created = 0;
    for (int i = 0; i < THREADS; i++) {
        int rc = pthread_create(&t[i], &a, waiter, NULL);
        if (rc != 0) {
            fprintf(stderr, "pthread_create %d: %s\n", i, strerror(rc));
            break;
        }
        created++;
    }
    for (;;) {
        pthread_mutex_lock(&m);
        int n = waiting;
        pthread_mutex_unlock(&m);
        if (n == created)
            break;
        conf_sleep_us(1000);
    }
    pthread_mutex_lock(&m);
    go = 1;
    int rc = pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&m);
    for (int i = 0; i < created; i++)
        pthread_join(t[i], NULL);
    int ok = rc == 0 && created == THREADS && woken == created;
    if (!ok)
        fprintf(stderr, "created %d, woken %d, broadcast %d\n", created, woken, rc);
    return ok ? 0 : 1;
}

int main(void)
{
    pid_t pids[PROCS];
    for (int p = 0; p < PROCS; p++) {
        pids[p] = fork();
        if (pids[p] == 0)
            _exit(one_process());
        CONF_EXPECT(pids[p] > 0, "fork failed");
    }
    int good = 0;
    for (int p = 0; p < PROCS; p++) {
        int st = 0;
        if (pids[p] > 0 && waitpid(pids[p], &st, 0) == pids[p] && WIFEXITED(st) &&
            WEXITSTATUS(st) == 0)
            good++;
        else
            CONF_EXPECT(0, "process %d ended with status 0x%x", p, st);
    }
    printf("%d processes x %d threads woken by one broadcast each: %d processes all woken\n", PROCS,
           THREADS, good);
    return conf_exit_status();
}
