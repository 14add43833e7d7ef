/* Threads on small stacks the program provides (pthread_attr_setstack,
 * 16 KiB malloc'd: LTP's PTHREAD_STACK_MIN) that contend on a mutex, post a
 * semaphore another thread waits on, wait on a condition variable, and end
 * with pthread_exit. Scenarios of the Open POSIX tests:
 *   exit          pthread_exit/6-1: joinable threads; at the end main calls
 *                 pthread_exit and the last small-stack thread (mmap'd, a
 *                 guard page below) calls exit(), so every exit-time
 *                 action runs on a 16 KiB stack
 *   create-storm  pthread_create/14-1: the same while SIGUSR1 arrives
 *                 continuously (thousands a second)
 *   detach-storm  pthread_detach/4-3: detached threads, under the storm
 * Every wrapped call's return value and errno are checked; the output is
 * what was computed, identical on every correct run. */
#include "conf.h"

#include <semaphore.h>
#include <sys/mman.h>

#define SMALL_STACK 16384 /* PTHREAD_STACK_MIN as the Open POSIX tests see it */
#define ROUNDS      40
#define THREADS     24

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static sem_t done;
static long counter;
static int go;
static int waiting_on_cond;
static pthread_t main_thread;
static int storm;

static void hold_a_little(void)
{
    for (volatile int i = 0; i < 2000; i++)
        ;
}

static void *small_thread(void *arg)
{
    long id = (long)(intptr_t)arg;
    for (int r = 0; r < ROUNDS; r++) {
        errno = 4242;
        int rc = pthread_mutex_lock(&m);
        CONF_EXPECT(rc == 0 && errno == 4242, "lock rc %d errno %d", rc, errno);
        counter++;
        hold_a_little();
        rc = pthread_mutex_unlock(&m);
        CONF_EXPECT(rc == 0 && errno == 4242, "unlock rc %d errno %d", rc, errno);
        rc = pthread_mutex_trylock(&m);
        CONF_EXPECT(rc == 0 || rc == EBUSY, "trylock rc %d", rc);
        if (rc == 0)
            pthread_mutex_unlock(&m);
    }
    /* Wait for main's broadcast. */
    int rc = pthread_mutex_lock(&cm);
    CONF_EXPECT(rc == 0, "cond mutex lock rc %d", rc);
    waiting_on_cond++;
    while (!go) {
        rc = pthread_cond_wait(&cv, &cm);
        CONF_EXPECT(rc == 0, "cond_wait rc %d", rc);
    }
    pthread_mutex_unlock(&cm);
    errno = 4242;
    rc = sem_post(&done);
    CONF_EXPECT(rc == 0 && errno == 4242, "sem_post rc %d errno %d", rc, errno);
    pthread_exit((void *)(intptr_t)(id * 7 + 1));
}

static void *last_thread(void *arg)
{
    (void)arg;
    /* main has called pthread_exit: joining it succeeds once it is gone. */
    int rc = pthread_join(main_thread, NULL);
    CONF_EXPECT(rc == 0, "join main rc %d", rc);
    errno = 4242;
    rc = pthread_mutex_lock(&m);
    CONF_EXPECT(rc == 0 && errno == 4242, "last lock rc %d errno %d", rc, errno);
    long c = counter;
    pthread_mutex_unlock(&m);
    CONF_EXPECT(c == (long)THREADS * ROUNDS, "counter %ld, expected %ld", c,
                (long)THREADS * ROUNDS);
    printf("last thread on a %d-byte stack: counter %ld, exiting the process\n", SMALL_STACK, c);
    fflush(stdout);
    exit(conf_exit_status()); /* atexit work and destructors run on this stack */
}

/* A 16 KiB stack: malloc'd, or mmap'd with a PROT_NONE page below it (as
 * a careful program does), so that an overflow faults instead of silently
 * writing into the heap. Never freed: a detached thread may still use it. */
static void *small_stack(int guarded)
{
    if (!guarded)
        return malloc(SMALL_STACK);
    char *p =
        mmap(NULL, SMALL_STACK + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    mprotect(p, 4096, PROT_NONE);
    return p + 4096;
}

static int create_small(pthread_t *t, void *(*fn)(void *), void *arg, int detached)
{
    pthread_attr_t a;
    pthread_attr_init(&a);
    void *stack = small_stack(fn == last_thread);
    CONF_EXPECT(stack != NULL, "stack");
    int rc = pthread_attr_setstack(&a, stack, SMALL_STACK);
    CONF_EXPECT(rc == 0, "setstack rc %d", rc);
    errno = 4242;
    rc = pthread_create(t, &a, fn, arg);
    CONF_EXPECT(rc == 0 && errno == 4242, "pthread_create rc %d errno %d", rc, errno);
    if (detached && rc == 0) {
        errno = 4242;
        int d = pthread_detach(*t);
        CONF_EXPECT(d == 0 && errno == 4242, "pthread_detach rc %d errno %d", d, errno);
    }
    pthread_attr_destroy(&a);
    return rc;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "exit";
    int detached = strcmp(mode, "detach-storm") == 0;
    storm = strcmp(mode, "create-storm") == 0 || detached;
    if (!storm && strcmp(mode, "exit") != 0) {
        fprintf(stderr, "usage: conf_small_stack exit|create-storm|detach-storm\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    sem_init(&done, 0, 0);
    if (storm) {
        conf_storm_start(100); /* ~10,000 signals a second */
        /* the storm really blowing before the threads start: on a busy
         * machine the storm thread may get no CPU for the whole run */
        conf_storm_wait_sent(1, 10000);
    }
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        create_small(&t[i], small_thread, (void *)(intptr_t)i, detached);
    /* All threads parked on the condition, then one broadcast. */
    for (;;) {
        pthread_mutex_lock(&cm);
        int n = waiting_on_cond;
        if (n == THREADS) {
            go = 1;
            int rc = pthread_cond_broadcast(&cv);
            CONF_EXPECT(rc == 0, "broadcast rc %d", rc);
        }
        pthread_mutex_unlock(&cm);
        if (n == THREADS)
            break;
        conf_sleep_us(1000);
    }
    for (int i = 0; i < THREADS; i++) {
        int rc;
        while ((rc = sem_wait(&done)) != 0 && errno == EINTR)
            ;
        CONF_EXPECT(rc == 0, "sem_wait rc %d errno %d", rc, errno);
    }
    if (!detached) {
        for (int i = 0; i < THREADS; i++) {
            void *ret = NULL;
            int rc = pthread_join(t[i], &ret);
            CONF_EXPECT(rc == 0 && ret == (void *)(intptr_t)(i * 7 + 1), "join %d rc %d ret %p", i,
                        rc, ret);
        }
    }
    printf("%s: %d threads on %d-byte stacks, %d rounds each, counter %ld\n", mode, THREADS,
           SMALL_STACK, ROUNDS, counter);
    if (storm) {
        long sent = conf_storm_stop();
        CONF_EXPECT(sent > 0 && atomic_load(&conf_storm_received) > 0, "storm sent %ld", sent);
        printf("signal storm delivered: %s\n", sent > 0 ? "yes" : "no");
        return conf_exit_status();
    }
    /* pthread_exit/6-1: main leaves by pthread_exit; a small-stack thread
     * ends the process. */
    main_thread = pthread_self();
    pthread_t last;
    create_small(&last, last_thread, NULL, 1);
    pthread_exit(NULL);
}
