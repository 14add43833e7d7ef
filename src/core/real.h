/* The real pthread/semaphore functions, resolved once into one table.
 *
 * Invariants: lb_real is filled by lb_real_resolve(), which every wrapper
 * calls (cheaply) when a pointer it needs is still NULL. Resolution uses
 * dlsym(RTLD_NEXT) and, where glibc keeps two ABIs, dlvsym with the
 * version named beside the field. A wrapper that finds its pointer NULL
 * while resolution is in progress on its own thread (dlsym may lock or
 * allocate) takes the documented bootstrap fallback in exports.c. */
#ifndef LB_REAL_H
#define LB_REAL_H
#include <pthread.h>
#include <semaphore.h>
#include <time.h>

typedef struct lb_real_table {
    int (*mutex_init)(pthread_mutex_t *, const pthread_mutexattr_t *);
    int (*mutex_destroy)(pthread_mutex_t *);
    int (*mutex_lock)(pthread_mutex_t *);
    int (*mutex_trylock)(pthread_mutex_t *);
    int (*mutex_timedlock)(pthread_mutex_t *, const struct timespec *);
    int (*mutex_clocklock)(pthread_mutex_t *, clockid_t, const struct timespec *);
    int (*mutex_unlock)(pthread_mutex_t *);
    int (*create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
    int (*join)(pthread_t, void **);
    void (*thread_exit)(void *); /* pthread_exit: does not return */
    int (*timedjoin_np)(pthread_t, void **, const struct timespec *);
    /* pthread_cond_*: GLIBC_2.3.2 is the current condvar ABI; the unversioned
     * lookup could bind the 2.2.5 compatibility version. */
    int (*cond_wait)(pthread_cond_t *, pthread_mutex_t *);
    int (*cond_timedwait)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
    int (*cond_clockwait)(pthread_cond_t *, pthread_mutex_t *, clockid_t, const struct timespec *);
    int (*cond_signal)(pthread_cond_t *);
    int (*cond_broadcast)(pthread_cond_t *);
    int (*cond_destroy)(pthread_cond_t *);
    int (*cond_init)(pthread_cond_t *, const pthread_condattr_t *);
    int (*barrier_wait)(pthread_barrier_t *);
    int (*barrier_init)(pthread_barrier_t *, const pthread_barrierattr_t *, unsigned);
    int (*barrier_destroy)(pthread_barrier_t *);
    int (*rwlock_rdlock)(pthread_rwlock_t *);
    int (*rwlock_tryrdlock)(pthread_rwlock_t *);
    int (*rwlock_timedrdlock)(pthread_rwlock_t *, const struct timespec *);
    int (*rwlock_clockrdlock)(pthread_rwlock_t *, clockid_t, const struct timespec *);
    int (*rwlock_wrlock)(pthread_rwlock_t *);
    int (*rwlock_trywrlock)(pthread_rwlock_t *);
    int (*rwlock_timedwrlock)(pthread_rwlock_t *, const struct timespec *);
    int (*rwlock_clockwrlock)(pthread_rwlock_t *, clockid_t, const struct timespec *);
    int (*rwlock_unlock)(pthread_rwlock_t *);
    int (*rwlock_destroy)(pthread_rwlock_t *);
    int (*rwlock_init)(pthread_rwlock_t *, const pthread_rwlockattr_t *);
    int (*sem_wait)(sem_t *);
    int (*sem_timedwait)(sem_t *, const struct timespec *);
    int (*sem_clockwait)(sem_t *, clockid_t, const struct timespec *);
    int (*sem_post)(sem_t *);
    int (*sem_destroy)(sem_t *);
    int (*sem_init)(sem_t *, int, unsigned);
    long (*syscall)(long, ...); /* libc's, or the next interposer's (interpose/syscall.c) */
    /* timer_settime: GLIBC_2.3.3 is the current timer ABI. The sampler's
     * timer backend arms its timers with it, past the wrapper in
     * interpose/timers.c that reports the program's periodic timers. */
    int (*timer_settime)(timer_t, int, const struct itimerspec *, struct itimerspec *);
} __attribute__((aligned(64))) lb_real_table_t; /* own cache lines: read by every wrapper */

extern lb_real_table_t lb_real;

/* Fill lb_real. Safe to call repeatedly and from any thread; returns 0 when
 * complete, -1 if called re-entrantly on a thread already resolving. */
int lb_real_resolve(void);
#endif
