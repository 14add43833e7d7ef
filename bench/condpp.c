/* Condition-variable ping-pong: two threads take turns, each waiting on
 * its own cond until the other hands it the turn. One round is, for each
 * thread, a lock, a wait (the turn is always the other's when it comes
 * back), a signal and an unlock: 2 waits, 2 signals, 2 locks and 2
 * unlocks in all, every wait a real sleep. Under callgrind, whose threads
 * run one at a time and switch at each sleep, the count is exact and
 * repeatable: bench/run.sh's cond row, (Ir(2N) - Ir(N)) / N.
 *
 *   condpp ROUNDS   -> "rounds R", "elapsed_s S" */
#include <pthread.h>
#include <stdint.h>

#include "bench.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_of[2] = { PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER };
static int turn;
static long rounds;

static void *player(void *arg)
{
    int me = (int)(uintptr_t)arg;
    for (long i = 0; i < rounds; i++) {
        pthread_mutex_lock(&lock);
        while (turn != me)
            pthread_cond_wait(&turn_of[me], &lock);
        turn = !me;
        pthread_cond_signal(&turn_of[!me]);
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    rounds = argc > 1 ? atol(argv[1]) : 0;
    if (rounds < 1) {
        fprintf(stderr, "usage: %s ROUNDS\n", argv[0]);
        return 2;
    }
    pthread_t t[2];
    long long t0 = bench_now_ns();
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, player, (void *)(uintptr_t)i);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("rounds %ld\nelapsed_s %.6f\n", rounds, (double)(bench_now_ns() - t0) / 1e9);
    return 0;
}
