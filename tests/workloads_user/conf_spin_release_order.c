/* Spin lock releases that are not the last acquisition of the releasing
 * thread: nested locks released in acquisition order, a lock released by
 * another thread than its holder (undefined by POSIX; glibc just stores
 * the word), a held lock re-initialised, and a hold released after the
 * lock was destroyed, re-initialised and taken by another thread. Each
 * check states what glibc does; the driver compares native and preloaded
 * output. */
#include "conf.h"

static pthread_spinlock_t outer, inner, handed;

static void *unlock_handed(void *arg)
{
    (void)arg;
    pthread_spin_unlock(&handed);
    return NULL;
}

/* Takes over `handed` after the main thread's hold: unlock, destroy,
 * init, lock; the main thread then releases this thread's hold. */
static void *reinit_and_take(void *arg)
{
    (void)arg;
    pthread_spin_unlock(&handed);
    pthread_spin_destroy(&handed);
    pthread_spin_init(&handed, PTHREAD_PROCESS_PRIVATE);
    int rc = pthread_spin_lock(&handed);
    CONF_EXPECT(rc == 0, "lock after re-init: %d", rc);
    return NULL;
}

static void run_in_thread(void *(*fn)(void *))
{
    pthread_t t;
    CONF_EXPECT(pthread_create(&t, NULL, fn, NULL) == 0, "create");
    pthread_join(t, NULL);
}

static void report(const char *what, int rc)
{
    printf("%s: %s\n", what, rc == 0 ? "0" : strerror(rc));
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    pthread_spin_init(&outer, PTHREAD_PROCESS_PRIVATE);
    pthread_spin_init(&inner, PTHREAD_PROCESS_PRIVATE);
    pthread_spin_init(&handed, PTHREAD_PROCESS_PRIVATE);
    for (int round = 0; round < 3; round++) { /* the first round converts */
        pthread_spin_lock(&outer);
        pthread_spin_lock(&inner);
        pthread_spin_unlock(&outer); /* not the last one acquired */
        int r1 = pthread_spin_trylock(&outer);
        int r2 = pthread_spin_trylock(&inner);
        pthread_spin_unlock(&inner);
        pthread_spin_unlock(&outer);
        int r3 = pthread_spin_trylock(&inner);
        if (r3 == 0)
            pthread_spin_unlock(&inner);
        CONF_EXPECT(r1 == 0 && r2 == EBUSY && r3 == 0, "nested: %d %d %d", r1, r2, r3);
    }
    report("nested, outer released first, then inner", 0);

    pthread_spin_lock(&handed);
    run_in_thread(unlock_handed);
    int rc = pthread_spin_trylock(&handed);
    report("trylock after another thread released our hold", rc);
    if (rc == 0)
        pthread_spin_unlock(&handed);

    pthread_spin_lock(&handed);
    pthread_spin_init(&handed, PTHREAD_PROCESS_PRIVATE); /* glibc: stores "unlocked" */
    rc = pthread_spin_trylock(&handed);
    report("trylock after re-init of a held lock", rc);
    if (rc == 0)
        pthread_spin_unlock(&handed);

    pthread_spin_lock(&handed);
    run_in_thread(reinit_and_take);
    pthread_spin_unlock(&handed); /* glibc: releases the other thread's hold */
    rc = pthread_spin_trylock(&handed);
    report("trylock after releasing a re-initialised lock's new hold", rc);
    if (rc == 0)
        pthread_spin_unlock(&handed);
    rc = pthread_spin_trylock(&handed);
    report("trylock again", rc);
    if (rc == 0)
        pthread_spin_unlock(&handed);
    return conf_exit_status();
}
