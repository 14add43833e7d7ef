/* Stack footprint of contended synchronization: a thread on a painted
 * stack of its own makes contended mutex releases, contended acquisitions
 * and condition-variable waits and signals (another thread keeps each one
 * contended), ROUNDS times; then the deepest byte it touched is found.
 * Run natively and preloaded: the difference is what lockblame's wrapper,
 * blame and unwinding paths need on the caller's stack (run it with
 * sampling off to leave out the signal frame, ~12 KB with AVX-512).
 *
 *   stackuse [ROUNDS]  -> "stack_used_bytes N"
 */
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

#include "bench.h"

#define STACK_BYTES (256 * 1024)
#define PAINT       0xa5

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int turn; /* under m: 0 the painted thread's, 1 the helper's */
static int rounds = 200;
static volatile int stop;

/* The helper: blocks on m while the painted thread holds it (so that
 * thread's release is contended), and waits for its turn on c. */
static void *helper(void *arg)
{
    for (int i = 0; i < rounds; i++) {
        pthread_mutex_lock(&m);
        while (turn != 1)
            pthread_cond_wait(&c, &m);
        turn = 0;
        pthread_cond_signal(&c);
        pthread_mutex_unlock(&m);
    }
    return NULL;
}

static void *painted(void *arg)
{
    for (int i = 0; i < rounds; i++) {
        pthread_mutex_lock(&m);
        usleep(50); /* the helper arrives and waits: the unlock below is contended */
        turn = 1;
        pthread_cond_signal(&c);
        while (turn != 0)
            pthread_cond_wait(&c, &m);
        pthread_mutex_unlock(&m);
        usleep(20);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        rounds = atoi(argv[1]);
    if (rounds < 1)
        return 2;
    unsigned char *stack = aligned_alloc(4096, STACK_BYTES);
    if (!stack)
        return 1;
    memset(stack, PAINT, STACK_BYTES);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstack(&attr, stack, STACK_BYTES);
    pthread_t a, b;
    pthread_create(&b, NULL, helper, NULL);
    pthread_create(&a, &attr, painted, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    size_t low = 0;
    while (low < STACK_BYTES && stack[low] == PAINT)
        low++;
    printf("stack_used_bytes %zu\n", (size_t)STACK_BYTES - low);
    return 0;
}
