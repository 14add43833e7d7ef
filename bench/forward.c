/* A forwarding-only interposer, the reference for the hand-off rows: what
 * any LD_PRELOAD library that wraps pthread_mutex_lock/unlock and the cond
 * calls does to a contended program before it does any work of its own.
 * Each wrapper calls the next definition (dlsym(RTLD_NEXT)), nothing else.
 * Built as $(BUILD)/bench/libforward.so; never part of lockblame. */
#include <dlfcn.h>
#include <pthread.h>

static int (*next_lock)(pthread_mutex_t *);
static int (*next_unlock)(pthread_mutex_t *);
static int (*next_cond_wait)(pthread_cond_t *, pthread_mutex_t *);
static int (*next_cond_signal)(pthread_cond_t *);

__attribute__((constructor)) static void resolve(void)
{
    next_lock = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT, "pthread_mutex_lock");
    next_unlock = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT, "pthread_mutex_unlock");
    /* the default version, as the program's own reference binds it */
    next_cond_wait = (int (*)(pthread_cond_t *, pthread_mutex_t *))dlvsym(
        RTLD_NEXT, "pthread_cond_wait", "GLIBC_2.3.2");
    next_cond_signal =
        (int (*)(pthread_cond_t *))dlvsym(RTLD_NEXT, "pthread_cond_signal", "GLIBC_2.3.2");
}

int pthread_mutex_lock(pthread_mutex_t *m)
{
    return next_lock(m);
}

int pthread_mutex_unlock(pthread_mutex_t *m)
{
    return next_unlock(m);
}

int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
    return next_cond_wait(c, m);
}

int pthread_cond_signal(pthread_cond_t *c)
{
    return next_cond_signal(c);
}
