/* How much stack lockblame's wrappers and its sampling handler use.
 *
 * A thread runs on a 256 KiB malloc'd stack painted with a pattern; it
 * does contended mutex, semaphore and condition-variable work with a
 * partner thread (so releases hand blame on and waits end with an
 * unwind), then burns CPU (so the sampling handler runs on that stack).
 * The deepest byte that lost the pattern is the high-water mark. Run it
 * natively and with LD_PRELOAD: the difference is lockblame's own use
 * (plus the kernel's signal frame for the sampling signal; getauxval
 * (AT_MINSIGSTKSZ) is printed for that; mode `signal` measures a signal
 * frame with an empty handler of the program's). Modes: locks, cpu, signal.
 * Prints figures; tests/integration/stack_budget.sh compares them. */

#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>

#define STACK (256 * 1024)
#define PAINT 0xA5

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static sem_t sem;
static volatile int stop;
static int turn;

static void busy(int n)
{
    for (volatile int i = 0; i < n; i++)
        ;
}

static void on_usr1(int sig)
{
    (void)sig;
}

static void *partner(void *arg)
{
    (void)arg;
    while (!stop) {
        pthread_mutex_lock(&m);
        busy(3000);
        turn = 1;
        pthread_cond_signal(&cv);
        pthread_mutex_unlock(&m);
        sem_post(&sem);
        busy(1000);
    }
    return NULL;
}

static uintptr_t start_frame;

static void *painted(void *arg)
{
    const char *what = arg;
    start_frame = (uintptr_t)__builtin_frame_address(0);
    if (strcmp(what, "locks") == 0) {
        for (int i = 0; i < 3000; i++) {
            pthread_mutex_lock(&m);
            busy(3000);
            while (!turn)
                pthread_cond_wait(&cv, &m);
            turn = 0;
            pthread_mutex_unlock(&m);
            sem_wait(&sem);
        }
    } else {
        /* No calls but busy(): the interrupted depth is the start frame
         * plus busy's, so the high-water mark is the signal's alone. */
        for (int i = 0; i < 5000; i++)
            busy(100000);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "locks";
    sem_init(&sem, 0, 0);
    unsigned char *stack = malloc(STACK);
    memset(stack, PAINT, STACK);
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setstack(&a, stack, STACK);
    pthread_t p, t;
    if (strcmp(what, "locks") == 0)
        pthread_create(&p, NULL, partner, NULL);
    pthread_create(&t, &a, painted, (void *)what);
    if (strcmp(what, "signal") == 0) {
        signal(SIGUSR1, on_usr1);
        for (int i = 0; i < 200; i++) {
            pthread_kill(t, SIGUSR1);
            struct timespec ts = { 0, 2000000 };
            nanosleep(&ts, NULL);
        }
    }
    pthread_join(t, NULL);
    stop = 1;
    if (strcmp(what, "locks") == 0) {
        sem_post(&sem);
        pthread_join(p, NULL);
    }
    size_t low = 0;
    while (low < STACK && stack[low] == PAINT)
        low++;
    size_t above = (uintptr_t)stack + STACK - start_frame;
    printf("%s: %zu bytes above the start routine's frame (TLS, thread descriptor, thread start),"
           " %zu bytes used below it (AT_MINSIGSTKSZ %lu)\n",
           what, above, (size_t)(start_frame - ((uintptr_t)stack + low)),
           getauxval(AT_MINSIGSTKSZ));
    return 0;
}
