/* A thread that blocks and unblocks lockblame's default sampling signal
 * (SIGRTMIN+5) N times, a little work in each state: what PostgreSQL's
 * processes do around almost everything, and what costs lockblame a pause
 * and a resume of the thread's sampling each time.
 *
 *   maskflip N     -> "ns_per_flip X" (one flip: a block and an unblock)
 *
 * System calls per flip: strace -c -E LD_PRELOAD=build/liblockblame.so
 * build/bench/maskflip N, less the native run's 2. Instructions per flip:
 * callgrind with --toggle-collect=flips at N and 2N, the difference over N
 * (start-up and exit cancel). */
#include <pthread.h>
#include <signal.h>

#include "bench.h"

static volatile unsigned long sink;

static void work(void)
{
    for (int i = 0; i < 200; i++)
        sink += i;
}

__attribute__((noinline)) static void flips(long n, const sigset_t *set)
{
    for (long i = 0; i < n; i++) {
        pthread_sigmask(SIG_BLOCK, set, NULL);
        work();
        pthread_sigmask(SIG_UNBLOCK, set, NULL);
        work();
    }
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 100000;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGRTMIN + 5);
    long long start = bench_now_ns();
    flips(n, &set);
    long long ns = bench_now_ns() - start;
    printf("ns_per_flip %.1f\n", n > 0 ? (double)ns / (double)n : 0.0);
    return 0;
}
