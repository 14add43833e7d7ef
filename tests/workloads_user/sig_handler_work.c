/* Work done inside a signal handler, built -O2 -g as users build. A
 * worker computes in worker -> compute_loop -> compute while main sends
 * it SIGUSR1 every millisecond; the handler computes too (on_sigusr1 ->
 * handler_work). A sample taken in the handler must keep the path the
 * signal interrupted below the handler, behind a "[signal SIGUSR1]"
 * frame: worker -> compute_loop -> compute -> [signal SIGUSR1] ->
 * on_sigusr1 -> handler_work. Prints the handler's and the worker's
 * calls, its own ground truth that both ran. The signals are sent once
 * the worker is inside compute_loop. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 400

static volatile sig_atomic_t handled;
static volatile int done, started;
static volatile unsigned long sink;

static __attribute__((noinline)) void handler_work(void)
{
    for (int i = 0; i < 200000; i++)
        sink += (unsigned long)i * 7;
}

static void on_sigusr1(int signo)
{
    (void)signo;
    handler_work();
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
        pthread_kill(t, SIGUSR1);
        nanosleep(&ms, NULL);
    }
    done = 1;
    void *calls;
    pthread_join(t, &calls);
    printf("handler ran %d times, compute_loop %lu rounds\n", (int)handled, (unsigned long)calls);
    return handled > 0 ? 0 : 1;
}
