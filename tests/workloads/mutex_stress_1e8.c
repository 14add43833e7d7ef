/*
 * mutex_stress_1e8: mutual exclusion under conversion races, at 10^8
 * operations (docs/DESIGN.md "Monitored locks": conversion on demand).
 *
 * THREADS threads hammer NLOCKS mutexes and NLOCKS spin locks with lock,
 * trylock (falling back to lock on EBUSY) and unlock. Every EPOCH operations
 * per thread, all threads meet at a barrier, one thread re-initializes every
 * lock (pthread_mutex_init / pthread_spin_init: native again, so the next
 * operations race to convert it), and after a second barrier all threads
 * start on the same lock at once. Each operation increments the lock's
 * counter non-atomically with an inside-check, so a broken mutual exclusion
 * shows up as a lost update or an overlap.
 *
 * Usage: mutex_stress_1e8 [THREADS [OPS [EPOCH]]]
 *   OPS: total acquisitions over all threads and both lock types (default 10^8)
 *   EPOCH: operations per thread between re-initializations (default 100000)
 * Prints a line that depends only on the arguments; exits 1 on a violation.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    NLOCKS = 32
};

struct slot {
    pthread_mutex_t m;
    pthread_spinlock_t s;
    volatile long mcount, scount;
    volatile int minside, sinside;
} __attribute__((aligned(64)));

static struct slot slots[NLOCKS];
static pthread_barrier_t barrier;
static atomic_long violations, errors;
static long per_thread, epoch_ops;

static void reinit(void)
{
    for (int i = 0; i < NLOCKS; i++) {
        if (pthread_mutex_init(&slots[i].m, NULL) || pthread_spin_init(&slots[i].s, 0))
            atomic_fetch_add(&errors, 1);
    }
}

static void *worker(void *arg)
{
    long self = (long)arg;
    unsigned x = 2463534242u ^ (unsigned)self * 2654435761u;
    long done = 0;
    while (done < per_thread) {
        if (pthread_barrier_wait(&barrier) == PTHREAD_BARRIER_SERIAL_THREAD)
            reinit();
        pthread_barrier_wait(&barrier);
        long n = per_thread - done < epoch_ops ? per_thread - done : epoch_ops;
        for (long i = 0; i < n; i++) {
            /* The first operations of an epoch: every thread on lock 0,
             * 1, 2...: simultaneous first uses of fresh locks. */
            int k;
            if (i < 2 * NLOCKS) {
                k = (int)(i / 2);
            } else {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                k = (int)(x % NLOCKS);
            }
            struct slot *sl = &slots[k];
            int rc;
            if ((i & 1) == 0) {
                rc = (i & 6) == 0 ? pthread_mutex_trylock(&sl->m) : pthread_mutex_lock(&sl->m);
                if (rc == EBUSY)
                    rc = pthread_mutex_lock(&sl->m);
                if (rc) {
                    atomic_fetch_add(&errors, 1);
                    continue;
                }
                if (sl->minside++)
                    atomic_fetch_add(&violations, 1);
                sl->mcount = sl->mcount + 1;
                sl->minside--;
                if (pthread_mutex_unlock(&sl->m))
                    atomic_fetch_add(&errors, 1);
            } else {
                rc = (i & 6) == 0 ? pthread_spin_trylock(&sl->s) : pthread_spin_lock(&sl->s);
                if (rc == EBUSY)
                    rc = pthread_spin_lock(&sl->s);
                if (rc) {
                    atomic_fetch_add(&errors, 1);
                    continue;
                }
                if (sl->sinside++)
                    atomic_fetch_add(&violations, 1);
                sl->scount = sl->scount + 1;
                sl->sinside--;
                if (pthread_spin_unlock(&sl->s))
                    atomic_fetch_add(&errors, 1);
            }
        }
        done += n;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int nthreads = argc > 1 ? atoi(argv[1]) : 4;
    long ops = argc > 2 ? atol(argv[2]) : 100000000L;
    epoch_ops = argc > 3 ? atol(argv[3]) : 100000;
    if (nthreads < 1 || nthreads > 64 || ops < nthreads || epoch_ops < 2 * NLOCKS) {
        fprintf(stderr, "usage: %s [THREADS 1..64 [OPS [EPOCH >= %d]]]\n", argv[0], 2 * NLOCKS);
        return 2;
    }
    per_thread = ops / nthreads;
    pthread_barrier_init(&barrier, NULL, (unsigned)nthreads);
    pthread_t t[64];
    for (long i = 0; i < nthreads; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < nthreads; i++)
        pthread_join(t[i], NULL);
    long m = 0, s = 0;
    for (int i = 0; i < NLOCKS; i++) {
        m += slots[i].mcount;
        s += slots[i].scount;
    }
    long epochs = (per_thread + epoch_ops - 1) / epoch_ops;
    long want = per_thread * nthreads;
    int ok = m + s == want && atomic_load(&violations) == 0 && atomic_load(&errors) == 0;
    printf("mutex_stress_1e8: threads=%d ops=%ld (mutex %ld + spin %ld) epochs=%ld"
           " re-inits=%ld violations=%ld errors=%ld %s\n",
           nthreads, m + s, m, s, epochs, epochs * 2 * NLOCKS, (long)atomic_load(&violations),
           (long)atomic_load(&errors), ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
