/* Work done inside a signal handler, built -O2 -g as users build. A
 * worker computes in worker -> compute_loop -> compute while main sends
 * it SIGUSR1s, one at a time; the handler computes too (on_sigusr1 ->
 * handler_work). A sample taken in the handler must keep the path the
 * signal interrupted below the handler, behind a "[signal SIGUSR1]"
 * frame: worker -> compute_loop -> compute -> [signal SIGUSR1] ->
 * on_sigusr1 -> handler_work. The signals are sent once the worker is
 * inside compute_loop, each after the previous handler has returned.
 *
 * Each handler run computes until its thread has spent HANDLER_CPU_NS of
 * CPU time in it (CLOCK_THREAD_CPUTIME_ID, async-signal-safe): more than
 * a CPU-time sampler's period plus a scheduler tick (4 ms at HZ 250, 10
 * ms at HZ 100), so every run spans a sample whatever the phase between
 * the sender's wake-ups and the sampler's ticks. (Short handler runs, a
 * tenth of a period each, were sampled in proportion to their CPU only
 * while that phase drifted; when the sender's timer fired with the tick,
 * they could all fall between two samples.)
 *
 * Prints the handler's runs, the least CPU time one of them spent and the
 * worker's compute calls: its own ground truth that both ran. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS         20
#define HANDLER_CPU_NS 12000000L

static volatile sig_atomic_t handled;
static volatile long least_run_ns = -1;
static volatile int done, started;
static volatile unsigned long sink;

static long thread_cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1000000000L + t.tv_nsec;
}

static __attribute__((noinline)) void handler_work(void)
{
    for (int i = 0; i < 20000; i++)
        sink += (unsigned long)i * 7;
}

static void on_sigusr1(int signo)
{
    (void)signo;
    long start = thread_cpu_ns(), spent;
    do
        handler_work();
    while ((spent = thread_cpu_ns() - start) < HANDLER_CPU_NS);
    if (least_run_ns < 0 || spent < least_run_ns)
        least_run_ns = spent;
    handled++;
}

static __attribute__((noinline)) void compute(unsigned long n)
{
    for (unsigned long i = 0; i < n; i++)
        sink += i ^ (i >> 3);
}

static __attribute__((noinline)) unsigned long compute_loop(void)
{
    unsigned long calls = 0;
    started = 1;
    while (!done) {
        compute(20000);
        calls++;
    }
    return calls;
}

static void *worker(void *arg)
{
    (void)arg;
    return (void *)compute_loop();
}

int main(void)
{
    struct sigaction sa = { .sa_handler = on_sigusr1 };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    struct timespec ms = { 0, 1000000 };
    while (!started) /* every signal interrupts compute_loop */
        nanosleep(&ms, NULL);
    for (int i = 0; i < ROUNDS; i++) {
        sig_atomic_t before = handled;
        pthread_kill(t, SIGUSR1);
        while (handled == before)
            nanosleep(&ms, NULL);
        nanosleep(&ms, NULL); /* the worker computes between runs */
    }
    done = 1;
    void *calls;
    pthread_join(t, &calls);
    printf("handler ran %d times, the least for %ld us of CPU; compute_loop %lu rounds\n",
           (int)handled, least_run_ns / 1000, (unsigned long)calls);
    return handled == ROUNDS ? 0 : 1;
}
