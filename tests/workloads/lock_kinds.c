/*
 * lock_kinds: every mutex kind keeps its behaviour, natively or under
 * LD_PRELOAD=liblockblame.so (docs/DESIGN.md "Never change the program's
 * behaviour": return values and errno unchanged, for every mutex kind and
 * every return path).
 *
 * Kinds: normal, recursive, errorcheck, adaptive, robust, PTHREAD_PRIO_INHERIT,
 * PTHREAD_PRIO_PROTECT; a process-shared mutex and a process-shared spin lock
 * in a MAP_SHARED mapping used by a parent and a forked child; a robust
 * process-shared mutex whose owner process dies; 300 process-shared spin
 * locks (more than any small fixed table of them). Returns: trylock EBUSY,
 * timedlock / clocklock ETIMEDOUT, and EINVAL for an invalid clock or
 * timeout even when the lock is free (glibc checks those before trying).
 *
 * Every call is made with errno set to 1234; pthread_* calls must leave it
 * alone. Each kind is also hammered by two threads with a counter
 * incremented under the lock (exact final count).
 *
 * Prints one line per check ("kind what: got X") that depends only on the
 * outcome, so the driver can compare a native and a preloaded run line by
 * line, and "MISMATCH" lines where the outcome is not what POSIX/glibc
 * specify. Exits 1 on any mismatch. Kinds the kernel refuses (PI futexes,
 * priority ceilings without privilege) print "skip" with the reason; the
 * driver still compares those lines between the two runs.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int n_checks, n_bad;

static const char *ename(int e)
{
    switch (e) {
    case 0:
        return "0";
    case -1:
        return "-1";
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
    case ENOTRECOVERABLE:
        return "ENOTRECOVERABLE";
    case EAGAIN:
        return "EAGAIN";
    case ENOTSUP:
        return "ENOTSUP";
    case ENOSYS:
        return "ENOSYS";
    case 1234:
        return "untouched";
    default:
        return strerror(e);
    }
}

static void check(const char *kind, const char *what, int got, int want, int err, int want_err)
{
    n_checks++;
    printf("%s %s: got %s errno %s\n", kind, what, ename(got), ename(err));
    if (got != want || err != want_err) {
        n_bad++;
        printf("MISMATCH %s %s: got %s errno %s, want %s errno %s\n", kind, what, ename(got),
               ename(err), ename(want), ename(want_err));
    }
    fflush(stdout);
}

/* A call whose result glibc versions disagree on: printed (so the driver
 * compares it with the native run), errno still must stay 1234. */
#define RECORD(kind, call)                      \
    do {                                        \
        errno = 1234;                           \
        int rc_ = (call);                       \
        int e_ = errno;                         \
        check(kind, #call, rc_, rc_, e_, 1234); \
    } while (0)

/* A pthread call: returns want, leaves errno at 1234. */
#define EXPECT(kind, call, want)                   \
    do {                                           \
        errno = 1234;                              \
        int rc_ = (call);                          \
        int e_ = errno;                            \
        check(kind, #call, rc_, (want), e_, 1234); \
    } while (0)

static struct timespec abs_in_ms(clockid_t clock, long ms)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    ts.tv_nsec += (ms % 1000) * 1000000;
    ts.tv_sec += ms / 1000 + ts.tv_nsec / 1000000000;
    ts.tv_nsec %= 1000000000;
    return ts;
}

static void run_thread(void *(*fn)(void *), void *arg)
{
    pthread_t t;
    if (pthread_create(&t, NULL, fn, arg) || pthread_join(t, NULL)) {
        printf("pthread_create/join failed\n");
        exit(1);
    }
}

/* ---- two threads hammer one mutex ---- */

enum {
    HAMMER_PER_THREAD = 100000
};
static volatile long hammer_count;
static volatile int hammer_inside;
static atomic_long hammer_overlaps, hammer_errors;

static void *hammer(void *arg)
{
    pthread_mutex_t *m = arg;
    for (int i = 0; i < HAMMER_PER_THREAD; i++) {
        int rc = (i % 5 == 0) ? pthread_mutex_trylock(m) : pthread_mutex_lock(m);
        if (rc == EBUSY)
            rc = pthread_mutex_lock(m);
        if (rc) {
            atomic_fetch_add(&hammer_errors, 1);
            continue;
        }
        if (hammer_inside++)
            atomic_fetch_add(&hammer_overlaps, 1);
        long c = hammer_count;
        for (volatile int k = 0; k < 4; k++)
            ;
        hammer_count = c + 1;
        hammer_inside--;
        if (pthread_mutex_unlock(m))
            atomic_fetch_add(&hammer_errors, 1);
    }
    return NULL;
}

static void contend(const char *kind, pthread_mutex_t *m)
{
    pthread_t t[2];
    hammer_count = 0;
    hammer_overlaps = hammer_errors = 0;
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, hammer, m);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    n_checks++;
    long want = 2L * HAMMER_PER_THREAD;
    printf("%s contended: count %ld/%ld overlaps %ld errors %ld\n", kind, hammer_count, want,
           (long)hammer_overlaps, (long)hammer_errors);
    if (hammer_count != want || hammer_overlaps || hammer_errors) {
        n_bad++;
        printf("MISMATCH %s contended\n", kind);
    }
}

static pthread_mutex_t *held_by_other; /* a mutex the main thread holds */

static void *other_trylock_busy(void *arg)
{
    const char *kind = arg;
    EXPECT(kind, pthread_mutex_trylock(held_by_other), EBUSY);
    struct timespec ts = abs_in_ms(CLOCK_REALTIME, 30);
    EXPECT(kind, pthread_mutex_timedlock(held_by_other, &ts), ETIMEDOUT);
    ts = abs_in_ms(CLOCK_MONOTONIC, 30);
    EXPECT(kind, pthread_mutex_clocklock(held_by_other, CLOCK_MONOTONIC, &ts), ETIMEDOUT);
    ts = abs_in_ms(CLOCK_REALTIME, 30);
    EXPECT(kind, pthread_mutex_clocklock(held_by_other, CLOCK_REALTIME, &ts), ETIMEDOUT);
    return NULL;
}

static void *other_unlock_eperm(void *arg)
{
    const char *kind = arg;
    EXPECT(kind, pthread_mutex_unlock(held_by_other), EPERM);
    return NULL;
}

/* The checks every kind shares: uncontended lock/unlock, EBUSY and the
 * timeouts from another thread, then two contending threads. */
static void common_checks(const char *kind, pthread_mutex_t *m)
{
    EXPECT(kind, pthread_mutex_lock(m), 0);
    held_by_other = m;
    run_thread(other_trylock_busy, (void *)kind);
    EXPECT(kind, pthread_mutex_unlock(m), 0);
    EXPECT(kind, pthread_mutex_trylock(m), 0);
    EXPECT(kind, pthread_mutex_unlock(m), 0);
    struct timespec ts = abs_in_ms(CLOCK_REALTIME, 30);
    EXPECT(kind, pthread_mutex_timedlock(m, &ts), 0);
    EXPECT(kind, pthread_mutex_unlock(m), 0);
    contend(kind, m);
}

static void init_kind(pthread_mutex_t *m, int type, int robust, int protocol, int pshared)
{
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, type);
    if (robust)
        pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    if (protocol != PTHREAD_PRIO_NONE)
        pthread_mutexattr_setprotocol(&a, protocol);
    if (protocol == PTHREAD_PRIO_PROTECT)
        pthread_mutexattr_setprioceiling(&a, sched_get_priority_min(SCHED_FIFO));
    if (pshared)
        pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    int rc = pthread_mutex_init(m, &a);
    pthread_mutexattr_destroy(&a);
    if (rc) {
        printf("pthread_mutex_init failed: %s\n", ename(rc));
        exit(1);
    }
}

static void check_normal(void)
{
    static pthread_mutex_t m;
    init_kind(&m, PTHREAD_MUTEX_NORMAL, 0, PTHREAD_PRIO_NONE, 0);
    common_checks("normal", &m);
    EXPECT("normal", pthread_mutex_lock(&m), 0);
    EXPECT("normal", pthread_mutex_trylock(&m), EBUSY); /* held by ourselves */
    EXPECT("normal", pthread_mutex_destroy(&m), EBUSY);
    EXPECT("normal", pthread_mutex_unlock(&m), 0);
    EXPECT("normal", pthread_mutex_destroy(&m), 0);
}

static void check_recursive(void)
{
    static pthread_mutex_t m;
    init_kind(&m, PTHREAD_MUTEX_RECURSIVE, 0, PTHREAD_PRIO_NONE, 0);
    common_checks("recursive", &m);
    for (int i = 0; i < 5; i++)
        EXPECT("recursive", pthread_mutex_lock(&m), 0);
    EXPECT("recursive", pthread_mutex_trylock(&m), 0);
    struct timespec ts = abs_in_ms(CLOCK_REALTIME, 30);
    EXPECT("recursive", pthread_mutex_timedlock(&m, &ts), 0);
    held_by_other = &m;
    run_thread(other_trylock_busy, "recursive(depth 7)");
    for (int i = 0; i < 7; i++)
        EXPECT("recursive", pthread_mutex_unlock(&m), 0);
    EXPECT("recursive", pthread_mutex_unlock(&m), EPERM);
    EXPECT("recursive", pthread_mutex_destroy(&m), 0);
}

static void check_errorcheck(void)
{
    static pthread_mutex_t m;
    init_kind(&m, PTHREAD_MUTEX_ERRORCHECK, 0, PTHREAD_PRIO_NONE, 0);
    common_checks("errorcheck", &m);
    EXPECT("errorcheck", pthread_mutex_unlock(&m), EPERM);
    EXPECT("errorcheck", pthread_mutex_lock(&m), 0);
    EXPECT("errorcheck", pthread_mutex_lock(&m), EDEADLK);
    struct timespec ts = abs_in_ms(CLOCK_REALTIME, 20);
    EXPECT("errorcheck", pthread_mutex_timedlock(&m, &ts), EDEADLK);
    EXPECT("errorcheck", pthread_mutex_trylock(&m), EBUSY);
    held_by_other = &m;
    run_thread(other_unlock_eperm, "errorcheck");
    EXPECT("errorcheck", pthread_mutex_unlock(&m), 0);
    EXPECT("errorcheck", pthread_mutex_unlock(&m), EPERM);
    EXPECT("errorcheck", pthread_mutex_destroy(&m), 0);
}

static void check_adaptive(void)
{
    static pthread_mutex_t m;
    init_kind(&m, PTHREAD_MUTEX_ADAPTIVE_NP, 0, PTHREAD_PRIO_NONE, 0);
    common_checks("adaptive", &m);
    EXPECT("adaptive", pthread_mutex_destroy(&m), 0);
    static pthread_mutex_t si = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP;
    common_checks("adaptive(static)", &si);
}

/* ---- robust ---- */

static pthread_mutex_t robust_m;

static void *die_holding(void *arg)
{
    EXPECT("robust", pthread_mutex_lock(&robust_m), 0);
    return NULL; /* exits holding it */
}

static void check_robust(void)
{
    init_kind(&robust_m, PTHREAD_MUTEX_NORMAL, 1, PTHREAD_PRIO_NONE, 0);
    common_checks("robust", &robust_m);
    /* Owner dies; made consistent. */
    run_thread(die_holding, NULL);
    EXPECT("robust", pthread_mutex_lock(&robust_m), EOWNERDEAD);
    EXPECT("robust", pthread_mutex_consistent(&robust_m), 0);
    EXPECT("robust", pthread_mutex_unlock(&robust_m), 0);
    EXPECT("robust", pthread_mutex_lock(&robust_m), 0);
    EXPECT("robust", pthread_mutex_unlock(&robust_m), 0);
    /* Owner dies; trylock sees it; not made consistent: unrecoverable. */
    run_thread(die_holding, NULL);
    EXPECT("robust", pthread_mutex_trylock(&robust_m), EOWNERDEAD);
    EXPECT("robust", pthread_mutex_unlock(&robust_m), 0);
    EXPECT("robust", pthread_mutex_lock(&robust_m), ENOTRECOVERABLE);
    EXPECT("robust", pthread_mutex_trylock(&robust_m), ENOTRECOVERABLE);
    struct timespec ts = abs_in_ms(CLOCK_REALTIME, 20);
    /* glibc 2.36 times out here rather than saying ENOTRECOVERABLE. */
    RECORD("robust", pthread_mutex_timedlock(&robust_m, &ts));
    EXPECT("robust", pthread_mutex_destroy(&robust_m), 0);
    /* Owner dies; a timed lock sees it. */
    init_kind(&robust_m, PTHREAD_MUTEX_ERRORCHECK, 1, PTHREAD_PRIO_NONE, 0);
    run_thread(die_holding, NULL);
    ts = abs_in_ms(CLOCK_REALTIME, 20);
    EXPECT("robust", pthread_mutex_timedlock(&robust_m, &ts), EOWNERDEAD);
    EXPECT("robust", pthread_mutex_consistent(&robust_m), 0);
    EXPECT("robust", pthread_mutex_lock(&robust_m), EDEADLK);
    EXPECT("robust", pthread_mutex_unlock(&robust_m), 0);
    EXPECT("robust", pthread_mutex_destroy(&robust_m), 0);
}

/* ---- priority inherit / protect: the kernel may refuse ---- */

static void check_prio(const char *kind, int protocol)
{
    static pthread_mutex_t m;
    init_kind(&m, PTHREAD_MUTEX_NORMAL, 0, protocol, 0);
    errno = 1234;
    int rc = pthread_mutex_lock(&m);
    if (rc == ENOTSUP || rc == ENOSYS || rc == EPERM || rc == EINVAL) {
        printf("%s skip: the first lock returned %s (kernel or privileges refuse it)\n", kind,
               ename(rc));
        pthread_mutex_destroy(&m);
        return;
    }
    check(kind, "pthread_mutex_lock(&m) first", rc, 0, errno, 1234);
    EXPECT(kind, pthread_mutex_unlock(&m), 0);
    common_checks(kind, &m);
    EXPECT(kind, pthread_mutex_lock(&m), 0);
    if (protocol == PTHREAD_PRIO_INHERIT) /* PI mutexes detect self-deadlock */
        EXPECT(kind, pthread_mutex_trylock(&m), EBUSY);
    EXPECT(kind, pthread_mutex_unlock(&m), 0);
    if (protocol == PTHREAD_PRIO_PROTECT) {
        int old = -1;
        EXPECT(kind, pthread_mutex_setprioceiling(&m, sched_get_priority_min(SCHED_FIFO), &old), 0);
    }
    EXPECT(kind, pthread_mutex_destroy(&m), 0);
}

/* ---- invalid arguments on a free mutex: glibc checks them first ---- */

static void check_einval(void)
{
    static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    /* Make it contended once so a library has every reason to monitor it. */
    contend("einval-mutex", &m);
    struct timespec ts = abs_in_ms(CLOCK_REALTIME, 20);
    EXPECT("einval", pthread_mutex_clocklock(&m, CLOCK_PROCESS_CPUTIME_ID, &ts), EINVAL);
    EXPECT("einval", pthread_mutex_clocklock(&m, 12345, &ts), EINVAL);
    EXPECT("einval", pthread_mutex_trylock(&m), 0); /* still free after those */
    EXPECT("einval", pthread_mutex_unlock(&m), 0);

    static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
    struct timespec bad = ts;
    bad.tv_nsec = 1000000000;
    EXPECT("einval", pthread_rwlock_timedrdlock(&rw, &bad), EINVAL);
    EXPECT("einval", pthread_rwlock_timedwrlock(&rw, &bad), EINVAL);
    EXPECT("einval", pthread_rwlock_clockrdlock(&rw, CLOCK_PROCESS_CPUTIME_ID, &ts), EINVAL);
    EXPECT("einval", pthread_rwlock_clockwrlock(&rw, CLOCK_PROCESS_CPUTIME_ID, &ts), EINVAL);
    EXPECT("einval", pthread_rwlock_trywrlock(&rw), 0); /* still free after those */
    EXPECT("einval", pthread_rwlock_unlock(&rw), 0);

    /* sem_timedwait checks the timeout before taking a token. */
    sem_t s;
    sem_init(&s, 0, 1);
    errno = 1234;
    int rc = sem_timedwait(&s, &bad);
    check("einval", "sem_timedwait(&s(value 1), &bad)", rc, -1, errno, EINVAL);
    int v = -1;
    sem_getvalue(&s, &v);
    n_checks++;
    printf("einval sem value after the failed sem_timedwait: %d\n", v);
    if (v != 1) {
        n_bad++;
        printf("MISMATCH einval: sem_timedwait with an invalid timeout took a token\n");
    }
    sem_destroy(&s);
}

/* ---- process-shared: parent and forked child ---- */

#ifndef MANY_SPINS
#define MANY_SPINS 300 /* more than 256 */
#endif
enum {
    SHARED_PER_PROCESS = 200000,
    MANY_ROUNDS = 200
};

struct shared {
    pthread_mutex_t m;
    pthread_mutex_t robust;
    pthread_spinlock_t spin;
    volatile long mutex_count, spin_count;
    volatile int mutex_inside, spin_inside;
    volatile long overlaps;
    pthread_spinlock_t many[MANY_SPINS];
    volatile long many_count[MANY_SPINS];
    volatile int go;
};

static void shared_worker(struct shared *sh)
{
    while (!__atomic_load_n(&sh->go, __ATOMIC_ACQUIRE))
        ;
    for (int i = 0; i < SHARED_PER_PROCESS; i++) {
        int rc = (i & 3) == 0 ? pthread_mutex_trylock(&sh->m) : pthread_mutex_lock(&sh->m);
        if (rc == EBUSY)
            rc = pthread_mutex_lock(&sh->m);
        if (rc)
            exit(10);
        if (sh->mutex_inside++)
            sh->overlaps++;
        sh->mutex_count = sh->mutex_count + 1;
        sh->mutex_inside--;
        pthread_mutex_unlock(&sh->m);

        rc = (i & 3) == 0 ? pthread_spin_trylock(&sh->spin) : pthread_spin_lock(&sh->spin);
        if (rc == EBUSY)
            rc = pthread_spin_lock(&sh->spin);
        if (rc)
            exit(11);
        if (sh->spin_inside++)
            sh->overlaps++;
        sh->spin_count = sh->spin_count + 1;
        sh->spin_inside--;
        pthread_spin_unlock(&sh->spin);
    }
    for (int r = 0; r < MANY_ROUNDS; r++) {
        for (int j = 0; j < MANY_SPINS; j++) {
            pthread_spin_lock(&sh->many[j]);
            long c = sh->many_count[j];
            for (volatile int k = 0; k < 2; k++)
                ;
            sh->many_count[j] = c + 1;
            pthread_spin_unlock(&sh->many[j]);
        }
    }
}

/* The shared section must not hang the test run: a lost wake-up or a lock
 * word one process cannot follow would spin forever. */
static volatile pid_t shared_child;

static void hung(int sig)
{
    if (shared_child > 0)
        kill(shared_child, SIGKILL);
    static const char msg[] = "MISMATCH pshared: no progress after 15 s (lock hung)\n";
    if (write(1, msg, sizeof msg - 1) < 0)
        _exit(3);
    _exit(3);
}

static void check_pshared(void)
{
    struct shared *sh =
        mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) {
        printf("mmap failed\n");
        exit(1);
    }
    init_kind(&sh->m, PTHREAD_MUTEX_NORMAL, 0, PTHREAD_PRIO_NONE, 1);
    init_kind(&sh->robust, PTHREAD_MUTEX_NORMAL, 1, PTHREAD_PRIO_NONE, 1);
    EXPECT("pshared", pthread_spin_init(&sh->spin, PTHREAD_PROCESS_SHARED), 0);
    for (int j = 0; j < MANY_SPINS; j++)
        pthread_spin_init(&sh->many[j], PTHREAD_PROCESS_SHARED);
    /* Used (and contended) in this process before the fork. */
    contend("pshared-mutex(before fork)", &sh->m);
    EXPECT("pshared", pthread_spin_lock(&sh->spin), 0);
    EXPECT("pshared", pthread_spin_trylock(&sh->spin), EBUSY);
    EXPECT("pshared", pthread_spin_unlock(&sh->spin), 0);

    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        printf("fork failed\n");
        exit(1);
    }
    signal(SIGALRM, hung);
    alarm(15);
    if (pid == 0) {
        alarm(15); /* alarms are not inherited */
        shared_worker(sh);
        _exit(0);
    }
    shared_child = pid;
    __atomic_store_n(&sh->go, 1, __ATOMIC_RELEASE);
    shared_worker(sh);
    int status = 0;
    waitpid(pid, &status, 0);
    alarm(0);
    n_checks++;
    long want = 2L * SHARED_PER_PROCESS;
    long many_bad = 0;
    for (int j = 0; j < MANY_SPINS; j++)
        many_bad += sh->many_count[j] != 2L * MANY_ROUNDS;
    printf("pshared child exit status %d\n", status);
    printf("pshared mutex count %ld/%ld spin count %ld/%ld overlaps %ld\n", sh->mutex_count, want,
           sh->spin_count, want, sh->overlaps);
    printf("pshared %d spin locks: %ld with a wrong count (each %d)\n", MANY_SPINS, many_bad,
           2 * MANY_ROUNDS);
    if (status != 0 || sh->mutex_count != want || sh->spin_count != want || sh->overlaps ||
        many_bad) {
        n_bad++;
        printf("MISMATCH pshared counts\n");
    }

    /* A robust process-shared mutex whose owner process dies. */
    fflush(stdout);
    pid = fork();
    if (pid == 0) {
        _exit(pthread_mutex_lock(&sh->robust) == 0 ? 0 : 1); /* dies holding it */
    }
    waitpid(pid, &status, 0);
    EXPECT("pshared-robust", pthread_mutex_lock(&sh->robust), EOWNERDEAD);
    EXPECT("pshared-robust", pthread_mutex_consistent(&sh->robust), 0);
    EXPECT("pshared-robust", pthread_mutex_unlock(&sh->robust), 0);
    EXPECT("pshared-robust", pthread_mutex_trylock(&sh->robust), 0);
    EXPECT("pshared-robust", pthread_mutex_unlock(&sh->robust), 0);
    EXPECT("pshared", pthread_mutex_destroy(&sh->m), 0);
    EXPECT("pshared", pthread_mutex_destroy(&sh->robust), 0);
    EXPECT("pshared", pthread_spin_destroy(&sh->spin), 0);
    munmap(sh, sizeof *sh);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    check_normal();
    check_recursive();
    check_errorcheck();
    check_adaptive();
    check_robust();
    check_prio("prio-inherit", PTHREAD_PRIO_INHERIT);
    check_prio("prio-protect", PTHREAD_PRIO_PROTECT);
    check_einval();
    check_pshared(); /* last: a hang here ends the run */
    printf("lock_kinds: %d checks, %d mismatches\n", n_checks, n_bad);
    return n_bad ? 1 : 0;
}
