/* pthread_cancel/1-3: a deferred cancel that is pending while the target
 * is blocked in pthread_mutex_lock must not be acted on there
 * (pthread_mutex_lock is not a cancellation point). The target must come
 * back from the lock with it held, and reach its cleanup handler only at
 * the next real cancellation point (pthread_testcancel). Repeated, with
 * the lock's holder on another thread so the release hands blame on. */
#include "conf.h"

#define ROUNDS 20

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static atomic_int in_lock_call;
static int returned_from_lock;   /* set by the target after the lock returns */
static int cleanup_saw_returned; /* returned_from_lock, as the cleanup saw it */
static int cleanup_ran;

static void cleanup(void *arg)
{
    (void)arg;
    cleanup_ran = 1;
    cleanup_saw_returned = returned_from_lock;
    if (returned_from_lock)
        pthread_mutex_unlock(&m); /* the thread holds it: give it back */
}

static void *target(void *arg)
{
    (void)arg;
    pthread_cleanup_push(cleanup, NULL);
    atomic_store(&in_lock_call, 1);
    int rc = pthread_mutex_lock(&m); /* blocks: main holds m */
    returned_from_lock = rc == 0;
    pthread_testcancel(); /* the only cancellation point: the cleanup runs here */
    pthread_cleanup_pop(0);
    return NULL;
}

int main(void)
{
    int good = 0;
    for (int r = 0; r < ROUNDS; r++) {
        returned_from_lock = cleanup_ran = cleanup_saw_returned = 0;
        atomic_store(&in_lock_call, 0);
        struct timespec deadline;
        clock_gettime(CLOCK_REALTIME, &deadline);
        deadline.tv_sec += 2;
        int lrc = pthread_mutex_timedlock(&m, &deadline);
        if (lrc != 0) { /* a cancelled thread died holding it */
            CONF_EXPECT(lrc == 0, "round %d: m is held by a dead thread (timedlock %d)", r, lrc);
            break;
        }
        pthread_t t;
        int rc = pthread_create(&t, NULL, target, NULL);
        CONF_EXPECT(rc == 0, "create rc %d", rc);
        while (!atomic_load(&in_lock_call))
            conf_sleep_us(100);
        conf_sleep_us(5000); /* let it block in the lock */
        rc = pthread_cancel(t);
        CONF_EXPECT(rc == 0, "cancel rc %d", rc);
        conf_sleep_us(2000);
        pthread_mutex_unlock(&m);
        void *ret = NULL;
        pthread_join(t, &ret);
        int ok = ret == PTHREAD_CANCELED && cleanup_ran && cleanup_saw_returned;
        CONF_EXPECT(ok, "round %d: canceled %d, cleanup ran %d, lock had returned %d", r,
                    ret == PTHREAD_CANCELED, cleanup_ran, cleanup_saw_returned);
        good += ok;
        /* m is free again: the cleanup unlocked it */
        rc = pthread_mutex_trylock(&m);
        CONF_EXPECT(rc == 0, "m still held after round %d (trylock %d)", r, rc);
        if (rc == 0)
            pthread_mutex_unlock(&m);
    }
    printf("cancel deferred past pthread_mutex_lock in %d of %d rounds\n", good, ROUNDS);
    return conf_exit_status();
}
