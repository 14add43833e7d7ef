/* A thread that blocks and unblocks every signal again and again, as
 * PostgreSQL's processes do around their work (docs/DESIGN.md "The
 * program's signals"), built -O2. The flipper thread:
 *
 *   first_work    computes FREE_MS of CPU, signals as inherited;
 *   then ROUNDS times:
 *     blocks every signal, computes BLOCKED_MS in blocked_work, asks for
 *     any pending signal with a zero timeout (natively: none, EAGAIN),
 *     unblocks, and computes FREE_MS in free_work (the first MOVE_AT
 *     rounds) or moved_work (the rest).
 *
 * In round MOVE_AT - 1, while the flipper blocks, the main thread installs
 * a handler for SIGRTMIN+5, lockblame's default sampling signal (under
 * lockblame sampling moves to another signal then); the program never
 * sends it. Prints the results of the waits, which must read the same
 * natively and preloaded (a profiler may not leave a signal of its own
 * pending where the program can collect it), and as ground truth the CPU
 * time (the thread's own clock) of each function and of the stretches
 * between its block and unblock calls. */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>

#include "thread_cpu.h"

#define ROUNDS     6
#define MOVE_AT    3
#define FREE_MS    40
#define BLOCKED_MS 40

static volatile unsigned long sink;

/* Computes until this thread has used ms more of CPU; returns the CPU
 * time it took. */
__attribute__((noinline)) static double burn(int ms)
{
    unsigned long x = 88172645463325252ul;
    double start = thread_cpu_s(), now;
    do {
        xorshift_rounds(&x, 20000);
        sink += x;
        now = thread_cpu_s();
    } while (now - start < ms / 1000.0);
    return now - start;
}

static double first_s, free_s, moved_s, blocked_s, blocked_stretch_s;

__attribute__((noinline)) static void first_work(void)
{
    first_s += burn(FREE_MS);
}
__attribute__((noinline)) static void free_work(void)
{
    free_s += burn(FREE_MS);
}
__attribute__((noinline)) static void moved_work(void)
{
    moved_s += burn(FREE_MS);
}
__attribute__((noinline)) static void blocked_work(void)
{
    blocked_s += burn(BLOCKED_MS);
}

static sem_t blocked_now, handler_set;
static int waits_empty;

static void on_signal(int signo)
{
    (void)signo;
}

static void *flipper(void *arg)
{
    sigset_t all;
    sigfillset(&all);
    first_work();
    for (int round = 0; round < ROUNDS; round++) {
        pthread_sigmask(SIG_BLOCK, &all, NULL);
        double start = thread_cpu_s();
        if (round == MOVE_AT - 1) {
            sem_post(&blocked_now);
            while (sem_wait(&handler_set) != 0)
                ;
        }
        blocked_work();
        struct timespec zero = { 0, 0 };
        if (sigtimedwait(&all, NULL, &zero) < 0 && errno == EAGAIN)
            waits_empty++;
        blocked_stretch_s += thread_cpu_s() - start;
        pthread_sigmask(SIG_UNBLOCK, &all, NULL);
        if (round < MOVE_AT)
            free_work();
        else
            moved_work();
    }
    return arg;
}

int main(void)
{
    sem_init(&blocked_now, 0, 0);
    sem_init(&handler_set, 0, 0);
    pthread_t th;
    if (pthread_create(&th, NULL, flipper, NULL))
        return 1;
    while (sem_wait(&blocked_now) != 0)
        ;
    struct sigaction sa = { .sa_handler = on_signal };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGRTMIN + 5, &sa, NULL);
    sem_post(&handler_set);
    pthread_join(th, NULL);
    printf("zero-timeout waits while blocked that found nothing: %d of %d\n", waits_empty, ROUNDS);
    printf("cpu_s first_work %.6f\n", first_s);
    printf("cpu_s free_work %.6f\n", free_s);
    printf("cpu_s moved_work %.6f\n", moved_s);
    printf("cpu_s blocked_work %.6f\n", blocked_s);
    printf("cpu_s blocked_stretches %.6f\n", blocked_stretch_s);
    return 0;
}
