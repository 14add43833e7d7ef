/*
 * mutex_stress: mutual exclusion under heavy contention, natively or under
 * LD_PRELOAD=liblockblame.so (whose conversion of native locks to monitored
 * ones races with concurrent lock, trylock and unlock).
 *
 * Three phases, each OPS/3 operations split over THREADS threads:
 *   mutex   increments under pthread_mutex_lock, every 4th via trylock
 *           (falling back to lock on EBUSY)
 *   spin    the same with pthread_spin_lock / pthread_spin_trylock
 *   rwlock  writers increment under wrlock; every 4th operation is a reader
 *           that checks the two copies of the counter agree under rdlock
 * Inside each critical section the counter is updated non-atomically with an
 * owner check, so an overlap of two holders shows up as a lost update or an
 * owner mismatch.
 *
 * Usage: mutex_stress [THREADS [OPS]]   (defaults 4, 2000000)
 * Prints a line that depends only on THREADS and OPS; exits 1 on a violation.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;
static pthread_spinlock_t spin;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;

static volatile long counter, shadow; /* protected by the phase's lock */
static volatile int owner = -1;       /* thread index inside, or -1 */
static atomic_long violations;
static long per_thread;

static void die(const char *what, int rc)
{
    fprintf(stderr, "%s failed: %d (%s)\n", what, rc, strerror(rc));
    exit(1);
}

/* The critical section: a slow, non-atomic increment with an owner check. */
static void critical(int self)
{
    if (owner != -1)
        atomic_fetch_add(&violations, 1);
    owner = self;
    long c = counter;
    for (volatile int k = 0; k < 8; k++)
        ;
    counter = c + 1;
    shadow = shadow + 1;
    if (owner != self)
        atomic_fetch_add(&violations, 1);
    owner = -1;
}

static void *mutex_phase(void *arg)
{
    int self = (int)(long)arg;
    for (long i = 0; i < per_thread; i++) {
        int rc;
        if (i % 4 == 0) {
            rc = pthread_mutex_trylock(&mtx);
            if (rc == EBUSY)
                rc = pthread_mutex_lock(&mtx);
        } else {
            rc = pthread_mutex_lock(&mtx);
        }
        if (rc)
            die("pthread_mutex_(try)lock", rc);
        critical(self);
        if ((rc = pthread_mutex_unlock(&mtx)))
            die("pthread_mutex_unlock", rc);
    }
    return NULL;
}

static void *spin_phase(void *arg)
{
    int self = (int)(long)arg;
    for (long i = 0; i < per_thread; i++) {
        int rc;
        if (i % 4 == 0) {
            rc = pthread_spin_trylock(&spin);
            if (rc == EBUSY)
                rc = pthread_spin_lock(&spin);
        } else {
            rc = pthread_spin_lock(&spin);
        }
        if (rc)
            die("pthread_spin_(try)lock", rc);
        critical(self);
        if ((rc = pthread_spin_unlock(&spin)))
            die("pthread_spin_unlock", rc);
    }
    return NULL;
}

static atomic_long rw_writes; /* writer operations done, over all threads */

static void *rwlock_phase(void *arg)
{
    int self = (int)(long)arg;
    for (long i = 0; i < per_thread; i++) {
        int rc;
        if (i % 4 == 3) {
            if ((rc = pthread_rwlock_rdlock(&rw)))
                die("pthread_rwlock_rdlock", rc);
            if (counter != shadow || owner != -1)
                atomic_fetch_add(&violations, 1);
        } else {
            if ((rc = pthread_rwlock_wrlock(&rw)))
                die("pthread_rwlock_wrlock", rc);
            critical(self);
            atomic_fetch_add(&rw_writes, 1);
        }
        if ((rc = pthread_rwlock_unlock(&rw)))
            die("pthread_rwlock_unlock", rc);
    }
    return NULL;
}

/* Runs one phase on n threads; returns the final counter. */
static long run_phase(void *(*fn)(void *), int n)
{
    pthread_t t[256];
    counter = shadow = 0;
    for (int i = 0; i < n; i++) {
        int rc = pthread_create(&t[i], NULL, fn, (void *)(long)i);
        if (rc)
            die("pthread_create", rc);
    }
    for (int i = 0; i < n; i++) {
        int rc = pthread_join(t[i], NULL);
        if (rc)
            die("pthread_join", rc);
    }
    if (counter != shadow)
        atomic_fetch_add(&violations, 1);
    return counter;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 4;
    long ops = argc > 2 ? atol(argv[2]) : 2000000;
    if (n < 1 || n > 256 || ops < 3) {
        fprintf(stderr, "usage: %s [THREADS 1..256 [OPS]]\n", argv[0]);
        return 2;
    }
    per_thread = ops / 3 / n;
    long expect = per_thread * n;
    long expect_rw = 0;
    for (long i = 0; i < per_thread; i++)
        expect_rw += i % 4 != 3;
    expect_rw *= n;

    int rc = pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE);
    if (rc)
        die("pthread_spin_init", rc);
    long m = run_phase(mutex_phase, n);
    long s = run_phase(spin_phase, n);
    long r = run_phase(rwlock_phase, n);

    int ok = m == expect && s == expect && r == expect_rw && atomic_load(&rw_writes) == expect_rw &&
             atomic_load(&violations) == 0;
    printf("mutex_stress: threads=%d mutex=%ld/%ld spin=%ld/%ld rwlock=%ld/%ld violations=%ld %s\n",
           n, m, expect, s, expect, r, expect_rw, atomic_load(&violations), ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
