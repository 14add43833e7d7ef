#include "core/real.h"

#include <dlfcn.h>
#include <stdbool.h>

#include "util/common.h"
#include "util/log.h"

lb_real_table_t lb_real;

/* dlsym may take ld.so's lock or allocate; a wrapper called from inside it
 * on this thread must not resolve again. */
static LB_TLS bool resolving;
static bool resolved;

static void *next(const char *name)
{
    return dlsym(RTLD_NEXT, name);
}

static void *next_versioned(const char *name, const char *version)
{
    void *fn = dlvsym(RTLD_NEXT, name, version);
    return fn ? fn : dlsym(RTLD_NEXT, name);
}

int lb_real_resolve(void)
{
    if (__atomic_load_n(&resolved, __ATOMIC_ACQUIRE))
        return 0;
    if (resolving)
        return -1;
    resolving = true;
    lb_real_table_t t = {
        .mutex_init = next("pthread_mutex_init"),
        .mutex_destroy = next("pthread_mutex_destroy"),
        .mutex_lock = next("pthread_mutex_lock"),
        .mutex_trylock = next("pthread_mutex_trylock"),
        .mutex_timedlock = next("pthread_mutex_timedlock"),
        .mutex_clocklock = next("pthread_mutex_clocklock"),
        .mutex_unlock = next("pthread_mutex_unlock"),
        .create = next_versioned("pthread_create", "GLIBC_2.34"),
        .join = next("pthread_join"),
        .thread_exit = next("pthread_exit"),
        .timedjoin_np = next("pthread_timedjoin_np"),
        .cond_wait = next_versioned("pthread_cond_wait", "GLIBC_2.3.2"),
        .cond_timedwait = next_versioned("pthread_cond_timedwait", "GLIBC_2.3.2"),
        .cond_clockwait = next("pthread_cond_clockwait"), /* 2.30+, one version */
        .cond_signal = next_versioned("pthread_cond_signal", "GLIBC_2.3.2"),
        .cond_broadcast = next_versioned("pthread_cond_broadcast", "GLIBC_2.3.2"),
        .cond_destroy = next_versioned("pthread_cond_destroy", "GLIBC_2.3.2"),
        .cond_init = next_versioned("pthread_cond_init", "GLIBC_2.3.2"),
        .barrier_wait = next("pthread_barrier_wait"),
        .barrier_init = next("pthread_barrier_init"),
        .barrier_destroy = next("pthread_barrier_destroy"),
        .rwlock_rdlock = next("pthread_rwlock_rdlock"),
        .rwlock_tryrdlock = next("pthread_rwlock_tryrdlock"),
        .rwlock_timedrdlock = next("pthread_rwlock_timedrdlock"),
        .rwlock_clockrdlock = next("pthread_rwlock_clockrdlock"),
        .rwlock_wrlock = next("pthread_rwlock_wrlock"),
        .rwlock_trywrlock = next("pthread_rwlock_trywrlock"),
        .rwlock_timedwrlock = next("pthread_rwlock_timedwrlock"),
        .rwlock_clockwrlock = next("pthread_rwlock_clockwrlock"),
        .rwlock_unlock = next("pthread_rwlock_unlock"),
        .rwlock_destroy = next("pthread_rwlock_destroy"),
        .rwlock_init = next("pthread_rwlock_init"),
        /* sem_*: GLIBC_2.34 is the current ABI (2.2.5 entries are compat). */
        .sem_wait = next_versioned("sem_wait", "GLIBC_2.34"),
        .sem_timedwait = next_versioned("sem_timedwait", "GLIBC_2.34"),
        .sem_clockwait = next_versioned("sem_clockwait", "GLIBC_2.34"),
        .sem_post = next_versioned("sem_post", "GLIBC_2.34"),
        .sem_destroy = next_versioned("sem_destroy", "GLIBC_2.34"),
        .sem_init = next_versioned("sem_init", "GLIBC_2.34"),
        .syscall = next("syscall"),
        .timer_settime = next_versioned("timer_settime", "GLIBC_2.3.3"),
    };
    if (!t.mutex_lock || !t.mutex_unlock || !t.mutex_trylock || !t.create || !t.thread_exit)
        lb_die("cannot resolve the real pthread functions");
    lb_real = t;
    __atomic_store_n(&resolved, true, __ATOMIC_RELEASE);
    resolving = false;
    return 0;
}
