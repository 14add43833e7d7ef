/*
 * errno_returns: the return values and errno of pthread/semaphore calls that
 * lockblame wraps, in their error and edge cases. Must pass natively and
 * under LD_PRELOAD=liblockblame.so alike (docs/DESIGN.md "Never
 * change the program's behaviour").
 *
 * Before each call errno is set to 1234; afterwards it must still be 1234
 * (pthread_* report errors in the return value only), except for sem_*,
 * which report them in errno.
 *
 * Prints one line per check that differs, and a summary; exits 0 when every
 * check holds, 1 otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <limits.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int n_checks, n_failed;

static const char *errname(int e)
{
    switch (e) {
    case 0:
        return "0";
    case EBUSY:
        return "EBUSY";
    case EDEADLK:
        return "EDEADLK";
    case EPERM:
        return "EPERM";
    case ETIMEDOUT:
        return "ETIMEDOUT";
    case EINVAL:
        return "EINVAL";
    case EOWNERDEAD:
        return "EOWNERDEAD";
    case EAGAIN:
        return "EAGAIN";
    case 1234:
        return "1234 (untouched)";
    case PTHREAD_BARRIER_SERIAL_THREAD:
        return "PTHREAD_BARRIER_SERIAL_THREAD";
    default:
        return strerror(e);
    }
}

static void report(int line, const char *what, int got, int want, int err, int want_err)
{
    n_checks++;
    if (got == want && err == want_err)
        return;
    n_failed++;
    printf("line %d: %s: returned %d (%s), expected %d (%s)", line, what, got, errname(got), want,
           errname(want));
    printf("; errno %d (%s), expected %d (%s)\n", err, errname(err), want_err, errname(want_err));
    fflush(stdout);
}

/* A pthread call: returns want, leaves errno alone. */
#define EXPECT(call, want)                              \
    do {                                                \
        errno = 1234;                                   \
        int rc_ = (call);                               \
        int e_ = errno;                                 \
        report(__LINE__, #call, rc_, (want), e_, 1234); \
    } while (0)

/* A sem_* call: returns want (0 or -1) and sets errno to want_err if -1. */
#define EXPECT_SEM(call, want, want_err)                      \
    do {                                                      \
        errno = 1234;                                         \
        int rc_ = (call);                                     \
        int e_ = errno;                                       \
        report(__LINE__, #call, rc_, (want), e_, (want_err)); \
    } while (0)

static void in_thread(void *(*fn)(void *), void *arg)
{
    pthread_t t;
    if (pthread_create(&t, NULL, fn, arg) || pthread_join(t, NULL)) {
        printf("pthread_create/join failed\n");
        exit(1);
    }
}

static struct timespec abs_in_ms(long ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += (ms % 1000) * 1000000;
    ts.tv_sec += ms / 1000 + ts.tv_nsec / 1000000000;
    ts.tv_nsec %= 1000000000;
    return ts;
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- normal mutex ---- */

static pthread_mutex_t m_normal = PTHREAD_MUTEX_INITIALIZER;

static void *other_on_normal(void *arg)
{
    EXPECT(pthread_mutex_trylock(&m_normal), EBUSY);
    struct timespec ts = abs_in_ms(50);
    double t0 = mono_s();
    EXPECT(pthread_mutex_timedlock(&m_normal, &ts), ETIMEDOUT);
    double waited = mono_s() - t0;
    n_checks++;
    if (waited < 0.045) {
        n_failed++;
        printf("pthread_mutex_timedlock returned ETIMEDOUT after %.3f s, before its 0.050 s\n",
               waited);
    }
    struct timespec bad = abs_in_ms(50);
    bad.tv_nsec = 2000000000;
    EXPECT(pthread_mutex_timedlock(&m_normal, &bad), EINVAL);
    return NULL;
}

static void check_normal_mutex(void)
{
    EXPECT(pthread_mutex_lock(&m_normal), 0);
    EXPECT(pthread_mutex_trylock(&m_normal), EBUSY); /* held by ourselves */
    in_thread(other_on_normal, NULL);
    EXPECT(pthread_mutex_destroy(&m_normal), EBUSY); /* still locked: stays valid */
    EXPECT(pthread_mutex_unlock(&m_normal), 0);
    EXPECT(pthread_mutex_trylock(&m_normal), 0);
    EXPECT(pthread_mutex_unlock(&m_normal), 0);
    EXPECT(pthread_mutex_destroy(&m_normal), 0);
}

/* ---- error-checking mutex ---- */

static pthread_mutex_t m_check;

static void *other_on_check(void *arg)
{
    EXPECT(pthread_mutex_unlock(&m_check), EPERM);
    EXPECT(pthread_mutex_trylock(&m_check), EBUSY);
    return NULL;
}

static void check_errorcheck_mutex(void)
{
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
    EXPECT(pthread_mutex_init(&m_check, &a), 0);
    pthread_mutexattr_destroy(&a);

    EXPECT(pthread_mutex_unlock(&m_check), EPERM); /* not locked at all */
    EXPECT(pthread_mutex_lock(&m_check), 0);
    EXPECT(pthread_mutex_lock(&m_check), EDEADLK);
    struct timespec ts = abs_in_ms(20);
    EXPECT(pthread_mutex_timedlock(&m_check, &ts), EDEADLK);
    EXPECT(pthread_mutex_trylock(&m_check), EBUSY);
    in_thread(other_on_check, NULL);
    EXPECT(pthread_mutex_unlock(&m_check), 0);
    EXPECT(pthread_mutex_unlock(&m_check), EPERM);
    EXPECT(pthread_mutex_destroy(&m_check), 0);
}

/* ---- recursive mutex ---- */

static void check_recursive_mutex(void)
{
    pthread_mutex_t m;
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
    EXPECT(pthread_mutex_init(&m, &a), 0);
    pthread_mutexattr_destroy(&a);
    EXPECT(pthread_mutex_lock(&m), 0);
    EXPECT(pthread_mutex_lock(&m), 0);
    EXPECT(pthread_mutex_trylock(&m), 0);
    EXPECT(pthread_mutex_unlock(&m), 0);
    EXPECT(pthread_mutex_unlock(&m), 0);
    EXPECT(pthread_mutex_unlock(&m), 0);
    EXPECT(pthread_mutex_unlock(&m), EPERM);
    EXPECT(pthread_mutex_destroy(&m), 0);
}

/* ---- robust mutex: the owner dies holding it ---- */

static pthread_mutex_t m_robust;

static void *die_holding(void *arg)
{
    EXPECT(pthread_mutex_lock(&m_robust), 0);
    return NULL; /* thread exits with the mutex held */
}

static void check_robust_mutex(void)
{
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    EXPECT(pthread_mutex_init(&m_robust, &a), 0);
    pthread_mutexattr_destroy(&a);
    in_thread(die_holding, NULL);
    EXPECT(pthread_mutex_lock(&m_robust), EOWNERDEAD);
    EXPECT(pthread_mutex_consistent(&m_robust), 0);
    EXPECT(pthread_mutex_unlock(&m_robust), 0);
    EXPECT(pthread_mutex_lock(&m_robust), 0);
    EXPECT(pthread_mutex_unlock(&m_robust), 0);
    EXPECT(pthread_mutex_destroy(&m_robust), 0);
}

/* ---- spin lock ---- */

static pthread_spinlock_t s_lock;

static void *other_on_spin(void *arg)
{
    EXPECT(pthread_spin_trylock(&s_lock), EBUSY);
    return NULL;
}

static void check_spin(void)
{
    EXPECT(pthread_spin_init(&s_lock, PTHREAD_PROCESS_PRIVATE), 0);
    EXPECT(pthread_spin_lock(&s_lock), 0);
    EXPECT(pthread_spin_trylock(&s_lock), EBUSY);
    in_thread(other_on_spin, NULL);
    EXPECT(pthread_spin_unlock(&s_lock), 0);
    EXPECT(pthread_spin_trylock(&s_lock), 0);
    EXPECT(pthread_spin_unlock(&s_lock), 0);
    EXPECT(pthread_spin_destroy(&s_lock), 0);
}

/* ---- rwlock ---- */

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;

static void *other_while_read_held(void *arg)
{
    EXPECT(pthread_rwlock_trywrlock(&rw), EBUSY);
    struct timespec ts = abs_in_ms(30);
    EXPECT(pthread_rwlock_timedwrlock(&rw, &ts), ETIMEDOUT);
    EXPECT(pthread_rwlock_tryrdlock(&rw), 0); /* readers share */
    EXPECT(pthread_rwlock_unlock(&rw), 0);
    return NULL;
}

static void *other_while_write_held(void *arg)
{
    EXPECT(pthread_rwlock_tryrdlock(&rw), EBUSY);
    EXPECT(pthread_rwlock_trywrlock(&rw), EBUSY);
    struct timespec ts = abs_in_ms(30);
    EXPECT(pthread_rwlock_timedrdlock(&rw, &ts), ETIMEDOUT);
    return NULL;
}

static void check_rwlock(void)
{
    EXPECT(pthread_rwlock_rdlock(&rw), 0);
    in_thread(other_while_read_held, NULL);
    EXPECT(pthread_rwlock_unlock(&rw), 0);
    EXPECT(pthread_rwlock_wrlock(&rw), 0);
    EXPECT(pthread_rwlock_wrlock(&rw), EDEADLK);
    in_thread(other_while_write_held, NULL);
    EXPECT(pthread_rwlock_unlock(&rw), 0);
    EXPECT(pthread_rwlock_destroy(&rw), 0);
}

/* ---- condition variable ---- */

static pthread_mutex_t cm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

static void *other_on_cond_mutex(void *arg)
{
    EXPECT(pthread_mutex_trylock(&cm), EBUSY);
    return NULL;
}

static void check_cond(void)
{
    EXPECT(pthread_mutex_lock(&cm), 0);
    struct timespec ts = abs_in_ms(20);
    EXPECT(pthread_cond_timedwait(&cv, &cm, &ts), ETIMEDOUT);
    in_thread(other_on_cond_mutex, NULL); /* the mutex is held again after the wait */
    struct timespec bad = abs_in_ms(20);
    bad.tv_nsec = -1;
    EXPECT(pthread_cond_timedwait(&cv, &cm, &bad), EINVAL);
    EXPECT(pthread_mutex_unlock(&cm), 0);
    EXPECT(pthread_cond_signal(&cv), 0);
    EXPECT(pthread_cond_broadcast(&cv), 0);
    EXPECT(pthread_cond_destroy(&cv), 0);
}

/* ---- semaphores: errors go to errno ---- */

static void check_sem(void)
{
    sem_t s;
    EXPECT_SEM(sem_init(&s, 0, 0), 0, 1234);
    EXPECT_SEM(sem_trywait(&s), -1, EAGAIN);
    struct timespec ts = abs_in_ms(20);
    EXPECT_SEM(sem_timedwait(&s, &ts), -1, ETIMEDOUT);
    EXPECT_SEM(sem_post(&s), 0, 1234);
    EXPECT_SEM(sem_trywait(&s), 0, 1234);
    EXPECT_SEM(sem_post(&s), 0, 1234);
    EXPECT_SEM(sem_wait(&s), 0, 1234);
    EXPECT_SEM(sem_destroy(&s), 0, 1234);
    /* at its limit (the posts after the first: lockblame's inline paths
     * for a semaphore the thread used lately) */
    EXPECT_SEM(sem_init(&s, 0, SEM_VALUE_MAX - 2), 0, 1234);
    EXPECT_SEM(sem_post(&s), 0, 1234);
    EXPECT_SEM(sem_wait(&s), 0, 1234);
    EXPECT_SEM(sem_post(&s), 0, 1234);
    EXPECT_SEM(sem_post(&s), 0, 1234);
    EXPECT_SEM(sem_post(&s), -1, EOVERFLOW);
    EXPECT_SEM(sem_wait(&s), 0, 1234);
    EXPECT_SEM(sem_destroy(&s), 0, 1234);
}

/* sem_open returns a pointer: 0 here stands for "not SEM_FAILED". */
#define OPENED(call) ((call) == SEM_FAILED ? -1 : 0)

static void check_named_sem(void)
{
    char name[64];
    snprintf(name, sizeof name, "/lockblame-errno-%d", (int)getpid());
    sem_t *a, *b;
    EXPECT_SEM(OPENED(sem_open("/lockblame-errno-absent-name", 0)), -1, ENOENT);
    EXPECT_SEM(OPENED(a = sem_open(name, O_CREAT | O_EXCL, 0600, 0)), 0, 1234);
    EXPECT_SEM(OPENED(sem_open(name, O_CREAT | O_EXCL, 0600, 0)), -1, EEXIST);
    EXPECT_SEM(OPENED(b = sem_open(name, 0)), 0, 1234);
    EXPECT_SEM(sem_post(a), 0, 1234);
    EXPECT_SEM(sem_close(a), 0, 1234);
    EXPECT_SEM(sem_trywait(b), 0, 1234); /* glibc gave both opens one mapping */
    EXPECT_SEM(sem_trywait(b), -1, EAGAIN);
    EXPECT_SEM(sem_close(b), 0, 1234);
    EXPECT_SEM(sem_unlink(name), 0, 1234);
}

/* ---- join and barrier ---- */

static pthread_barrier_t bar;
static int serial_count;
static pthread_mutex_t serial_lock = PTHREAD_MUTEX_INITIALIZER;

static void *barrier_thread(void *arg)
{
    errno = 1234;
    int rc = pthread_barrier_wait(&bar);
    int e = errno;
    pthread_mutex_lock(&serial_lock);
    if (rc == PTHREAD_BARRIER_SERIAL_THREAD)
        serial_count++;
    else
        report(__LINE__, "pthread_barrier_wait(&bar)", rc, 0, e, 1234);
    pthread_mutex_unlock(&serial_lock);
    return NULL;
}

static void *return_value(void *arg)
{
    return arg;
}

static void check_join_barrier(void)
{
    EXPECT(pthread_join(pthread_self(), NULL), EDEADLK);
    pthread_t t;
    void *ret = NULL;
    EXPECT(pthread_create(&t, NULL, return_value, (void *)0x1234), 0);
    EXPECT(pthread_join(t, &ret), 0);
    n_checks++;
    if (ret != (void *)0x1234) {
        n_failed++;
        printf("pthread_join returned value %p, expected 0x1234\n", ret);
    }

    enum {
        N = 4
    };
    pthread_t th[N];
    EXPECT(pthread_barrier_init(&bar, NULL, N), 0);
    for (int i = 0; i < N; i++)
        pthread_create(&th[i], NULL, barrier_thread, NULL);
    for (int i = 0; i < N; i++)
        pthread_join(th[i], NULL);
    n_checks++;
    if (serial_count != 1) {
        n_failed++;
        printf(
            "pthread_barrier_wait returned PTHREAD_BARRIER_SERIAL_THREAD %d times, expected once\n",
            serial_count);
    }
    EXPECT(pthread_barrier_destroy(&bar), 0);
}

int main(void)
{
    /* C11 7.5: errno is 0 at program startup, whatever ran before main
     * (a preloaded library's constructors included) */
    int errno_at_start = errno;
    n_checks++;
    if (errno_at_start != 0) {
        n_failed++;
        printf("errno at main's start is %d, expected 0\n", errno_at_start);
    }
    check_normal_mutex();
    check_errorcheck_mutex();
    check_recursive_mutex();
    check_robust_mutex();
    check_spin();
    check_rwlock();
    check_cond();
    check_sem();
    check_named_sem();
    check_join_barrier();
    printf("errno_returns: %d checks, %d differ\n", n_checks, n_failed);
    return n_failed ? 1 : 0;
}
