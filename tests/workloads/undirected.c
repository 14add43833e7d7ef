/* Undirected idleness (thesis ch. 5): three threads wait on a condition
 * variable while one computes for ~0.4 s of CPU in compute_alone(), then
 * all four compute together in compute_together(). While computing alone,
 * each work sample should carry I/W = 3/1 samples of undirected idleness;
 * computing together, I/W = 0. Prints the CPU seconds of each phase as
 * the workload measured them (CLOCK_THREAD_CPUTIME_ID), for the driver.
 */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t go = PTHREAD_COND_INITIALIZER;
static int started;
static volatile double sink;

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void burn(double seconds)
{
    double end = cpu_now() + seconds;
    double x = 0;
    while (cpu_now() < end)
        for (int i = 0; i < 10000; i++)
            x += i * 0.5;
    sink = x;
}

__attribute__((noinline)) static void compute_alone(void)
{
    burn(0.4);
}
__attribute__((noinline)) static void compute_together(void)
{
    burn(0.1);
}

static void *waiter(void *arg)
{
    pthread_mutex_lock(&lock);
    while (!started)
        pthread_cond_wait(&go, &lock);
    pthread_mutex_unlock(&lock);
    compute_together();
    return arg;
}

int main(void)
{
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, waiter, NULL);
    struct timespec nap = { 0, 50000000 }; /* let them block */
    nanosleep(&nap, NULL);
    double c0 = cpu_now();
    compute_alone();
    double alone = cpu_now() - c0;
    pthread_mutex_lock(&lock);
    started = 1;
    pthread_cond_broadcast(&go);
    pthread_mutex_unlock(&lock);
    compute_together();
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    printf("alone_cpu_s %.6f\n", alone);
    return 0;
}
