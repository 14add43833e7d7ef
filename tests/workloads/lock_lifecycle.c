/*
 * lock_lifecycle: every way a lock starts and ends, natively or under
 * LD_PRELOAD=liblockblame.so.
 *
 *   preinit   a .preinit_array function runs before any library
 *             constructor (so before lockblame's): it locks, and registers
 *             an atexit handler that therefore runs after lockblame's
 *             destructor ("late")
 *   ctor      a static constructor (before main) locks with two threads
 *   static    PTHREAD_MUTEX_INITIALIZER, PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP,
 *             PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP, PTHREAD_RWLOCK_INITIALIZER,
 *             PTHREAD_COND_INITIALIZER, contended
 *   reuse     objects in malloc'd memory, contended, freed without destroy;
 *             the next round's memory (often the same address) is set up by
 *             pthread_*_init, by memset to zero, by memcpy from an
 *             initialized (and monitored) template, or by assigning the
 *             static initializers
 *   destroy   destroy of a monitored lock then init again; init twice
 *   failed exec: an exec of an empty executable file, which fails
 *             (ENOEXEC) after the exec wrappers had their say: the library
 *             has written its profile, and the program goes on locking: main's
 *             monitored objects, fresh ones and memcpy'd copies of
 *             monitored ones
 *   atexit, destructor, late (an atexit handler registered in preinit,
 *             so it runs after the executable's destructors): contended
 *             use while the process ends
 *
 * Every contended phase: two threads increment a counter under the lock
 * (non-atomically, with an inside-check), so the count is exact only if
 * mutual exclusion held. Prints lines that depend only on the outcome;
 * exits 1 (or prints "FAILED" from the exit handlers) on any violation.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int n_bad;

#define CHECK(cond, ...)                    \
    do {                                    \
        if (!(cond)) {                      \
            n_bad++;                        \
            printf("FAILED: " __VA_ARGS__); \
            printf("\n");                   \
        }                                   \
    } while (0)

#define RC(call, want)                                                                        \
    do {                                                                                      \
        errno = 1234;                                                                         \
        int rc_ = (call);                                                                     \
        CHECK(rc_ == (want) && errno == 1234, "%s returned %d errno %d, want %d", #call, rc_, \
              errno, (want));                                                                 \
    } while (0)

/* ---- one contended phase: two threads on one set of objects ---- */

struct objs {
    pthread_mutex_t m;
    pthread_mutex_t rm; /* recursive */
    pthread_spinlock_t s;
    pthread_rwlock_t rw;
    pthread_cond_t c;
    pthread_mutex_t cm;     /* the condition's mutex */
    volatile long count[5]; /* one counter per lock: m, rm, s, rw, c/cm */
    volatile int inside[5];
    volatile int turn; /* cond ping-pong */
    atomic_long overlaps, errors;
};

struct job {
    struct objs *o;
    int self;
    long n;
};

static void enter(struct objs *o, int k)
{
    if (o->inside[k]++)
        atomic_fetch_add(&o->overlaps, 1);
    long c = o->count[k];
    for (volatile int spin = 0; spin < 3; spin++)
        ;
    o->count[k] = c + 1;
    o->inside[k]--;
}

#define OK(call)                             \
    do {                                     \
        if ((call) != 0)                     \
            atomic_fetch_add(&o->errors, 1); \
    } while (0)

static void *worker(void *arg)
{
    struct job *j = arg;
    struct objs *o = j->o;
    for (long i = 0; i < j->n; i++) {
        int rc = (i & 3) == 1 ? pthread_mutex_trylock(&o->m) : pthread_mutex_lock(&o->m);
        if (rc == EBUSY)
            rc = pthread_mutex_lock(&o->m);
        OK(rc);
        enter(o, 0);
        OK(pthread_mutex_unlock(&o->m));

        OK(pthread_mutex_lock(&o->rm));
        OK(pthread_mutex_lock(&o->rm));
        enter(o, 1);
        OK(pthread_mutex_unlock(&o->rm));
        OK(pthread_mutex_unlock(&o->rm));

        rc = (i & 3) == 2 ? pthread_spin_trylock(&o->s) : pthread_spin_lock(&o->s);
        if (rc == EBUSY)
            rc = pthread_spin_lock(&o->s);
        OK(rc);
        enter(o, 2);
        OK(pthread_spin_unlock(&o->s));

        OK(pthread_rwlock_wrlock(&o->rw));
        enter(o, 3);
        OK(pthread_rwlock_unlock(&o->rw));
        OK(pthread_rwlock_rdlock(&o->rw));
        if (o->inside[3])
            atomic_fetch_add(&o->overlaps, 1);
        OK(pthread_rwlock_unlock(&o->rw));

        if ((i & 15) == 0) { /* cond ping-pong: strict alternation */
            OK(pthread_mutex_lock(&o->cm));
            while (o->turn != j->self)
                OK(pthread_cond_wait(&o->c, &o->cm));
            enter(o, 4);
            o->turn = !j->self;
            OK(pthread_cond_broadcast(&o->c));
            OK(pthread_mutex_unlock(&o->cm));
        }
    }
    return NULL;
}

/* Runs two workers on o; returns 0 when the count is exact. */
static int contend(const char *what, struct objs *o, long n, int quiet)
{
    memset((void *)o->count, 0, sizeof o->count);
    memset((void *)o->inside, 0, sizeof o->inside);
    o->turn = 0;
    atomic_store(&o->overlaps, 0);
    atomic_store(&o->errors, 0);
    struct job jobs[2] = { { o, 0, n }, { o, 1, n } };
    pthread_t t[2];
    for (int i = 0; i < 2; i++) {
        if (pthread_create(&t[i], NULL, worker, &jobs[i])) {
            printf("FAILED: %s: pthread_create\n", what);
            return 1;
        }
    }
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    long per = 4 * n + (n + 15) / 16;
    long want = 2 * per;
    long count = o->count[0] + o->count[1] + o->count[2] + o->count[3] + o->count[4];
    int ok = count == want && o->count[4] == 2 * ((n + 15) / 16) &&
             atomic_load(&o->overlaps) == 0 && atomic_load(&o->errors) == 0;
    if (!quiet || !ok)
        printf("%s: count %ld/%ld overlaps %ld errors %ld%s\n", what, count, want,
               (long)atomic_load(&o->overlaps), (long)atomic_load(&o->errors), ok ? "" : " FAILED");
    if (!ok)
        n_bad++;
    return !ok;
}

static void init_objs(struct objs *o)
{
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
    RC(pthread_mutex_init(&o->m, NULL), 0);
    RC(pthread_mutex_init(&o->rm, &a), 0);
    RC(pthread_spin_init(&o->s, PTHREAD_PROCESS_PRIVATE), 0);
    RC(pthread_rwlock_init(&o->rw, NULL), 0);
    RC(pthread_cond_init(&o->c, NULL), 0);
    RC(pthread_mutex_init(&o->cm, NULL), 0);
    pthread_mutexattr_destroy(&a);
}

static void destroy_objs(struct objs *o)
{
    RC(pthread_mutex_destroy(&o->m), 0);
    RC(pthread_mutex_destroy(&o->rm), 0);
    RC(pthread_spin_destroy(&o->s), 0);
    RC(pthread_rwlock_destroy(&o->rw), 0);
    RC(pthread_cond_destroy(&o->c), 0);
    RC(pthread_mutex_destroy(&o->cm), 0);
}

static void static_init_objs(struct objs *o)
{
    o->m = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
    o->rm = (pthread_mutex_t)PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
    pthread_spin_init(&o->s, PTHREAD_PROCESS_PRIVATE);
    o->rw = (pthread_rwlock_t)PTHREAD_RWLOCK_INITIALIZER;
    o->c = (pthread_cond_t)PTHREAD_COND_INITIALIZER;
    o->cm = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
}

/* ---- before main: preinit (before every library constructor) and ctor ---- */

static pthread_mutex_t early_m = PTHREAD_MUTEX_INITIALIZER;
static struct objs ctor_objs = {
    .m = PTHREAD_MUTEX_INITIALIZER,
    .rm = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP,
    .rw = PTHREAD_RWLOCK_INITIALIZER,
    .c = PTHREAD_COND_INITIALIZER,
    .cm = PTHREAD_MUTEX_INITIALIZER,
};
static int preinit_rc = -1, ctor_failed = -1;
static struct objs late_objs; /* used by the handler that runs after lockblame's destructor */

/* Locks monitored earlier are still in use, plus a fresh set and a
 * memcpy'd copy of monitored ones. */
static int late_phase(const char *phase, long n)
{
    char what[128];
    snprintf(what, sizeof what, "%s: earlier objects", phase);
    int bad = contend(what, &late_objs, n, 0);
    struct objs *fresh = calloc(1, sizeof *fresh);
    init_objs(fresh);
    snprintf(what, sizeof what, "%s: fresh objects", phase);
    bad |= contend(what, fresh, n, 0);
    struct objs *copy = malloc(sizeof *copy);
    memcpy(copy, &late_objs, sizeof *copy); /* copies a monitored lock's words */
    snprintf(what, sizeof what, "%s: memcpy'd objects", phase);
    bad |= contend(what, copy, n, 0);
    return bad;
}

static void late_handler(void)
{
    int bad = late_phase("late (after the executable's destructors)", 5000);
    RC(pthread_mutex_lock(&early_m), 0);
    RC(pthread_mutex_unlock(&early_m), 0);
    printf("late: %s\n", bad || n_bad ? "FAILED" : "ok");
    fflush(stdout);
    if (bad || n_bad)
        _exit(1);
}

static void preinit(int argc, char **argv, char **envp)
{
    preinit_rc = pthread_mutex_lock(&early_m);
    if (preinit_rc == 0)
        preinit_rc = pthread_mutex_unlock(&early_m);
    atexit(late_handler);
}
__attribute__((section(".preinit_array"), used)) static void (*preinit_fn)(int, char **,
                                                                           char **) = preinit;

__attribute__((constructor)) static void ctor(void)
{
    pthread_spin_init(&ctor_objs.s, PTHREAD_PROCESS_PRIVATE);
    int saved = n_bad;
    n_bad = 0;
    contend("constructor", &ctor_objs, 20000, 1);
    ctor_failed = n_bad;
    n_bad += saved;
}

/* ---- exit: atexit handler and destructor ---- */

static struct objs exit_objs;

static void atexit_handler(void)
{
    int bad = contend("atexit handler: main's objects", &exit_objs, 20000, 0);
    struct objs *fresh = calloc(1, sizeof *fresh);
    init_objs(fresh);
    bad |= contend("atexit handler: fresh objects", fresh, 20000, 0);
    if (bad) {
        fflush(stdout);
        _exit(1);
    }
}

__attribute__((destructor)) static void dtor(void)
{
    int bad = contend("destructor: main's objects", &exit_objs, 20000, 0);
    struct objs fresh;
    memset(&fresh, 0, sizeof fresh);
    static_init_objs(&fresh);
    bad |= contend("destructor: fresh objects", &fresh, 20000, 0);
    fflush(stdout);
    if (bad)
        _exit(1);
}

/* ---- main ---- */

static void hung(int sig)
{
    static const char msg[] = "FAILED: no progress after 45 s (a lock hung)\n";
    if (write(1, msg, sizeof msg - 1) < 0)
        _exit(3);
    _exit(3);
}

static struct objs statics = {
    .m = PTHREAD_MUTEX_INITIALIZER,
    .rm = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP,
    .rw = PTHREAD_RWLOCK_INITIALIZER,
    .c = PTHREAD_COND_INITIALIZER,
    .cm = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP,
};

enum {
    REUSE_ROUNDS = 800,
    REUSE_OPS = 400
};

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGALRM, hung);
    alarm(45); /* the whole run takes a few seconds */
    printf("preinit: lock/unlock returned %d\n", preinit_rc);
    CHECK(preinit_rc == 0, "lock in preinit");
    printf("constructor: %s\n", ctor_failed == 0 ? "exact" : "FAILED");
    CHECK(ctor_failed == 0, "constructor phase");
    contend("constructor's objects again in main", &ctor_objs, 20000, 0);

    /* Static initializers. */
    pthread_spin_init(&statics.s, PTHREAD_PROCESS_PRIVATE);
    contend("static initializers", &statics, 50000, 0);
    RC(pthread_mutex_lock(&statics.cm), 0);
    RC(pthread_mutex_lock(&statics.cm), EDEADLK); /* still an errorcheck mutex */
    RC(pthread_mutex_unlock(&statics.cm), 0);
    RC(pthread_mutex_unlock(&statics.cm), EPERM);

    /* malloc'd memory reused without destroy, in four ways. */
    struct objs *tmpl = calloc(1, sizeof *tmpl);
    init_objs(tmpl);
    contend("template (monitored before it is copied)", tmpl, 20000, 0);
    long fails = 0, same_addr = 0;
    void *prev = NULL;
    const char *how[4] = { "init", "memset 0", "memcpy from template", "static initializer" };
    long by_how[4] = { 0 };
    for (int r = 0; r < REUSE_ROUNDS; r++) {
        struct objs *o = malloc(sizeof *o);
        same_addr += (void *)o == prev;
        prev = o;
        switch (r % 4) {
        case 0:
            init_objs(o);
            break;
        case 1:
            memset(o, 0xa5, sizeof *o); /* garbage first, then zero */
            memset(o, 0, sizeof *o);    /* a valid normal mutex, rwlock, cond */
            pthread_spin_init(&o->s, PTHREAD_PROCESS_PRIVATE);
            o->rm = (pthread_mutex_t)PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
            break;
        case 2:
            memcpy(o, tmpl, sizeof *o);
            break;
        case 3:
            static_init_objs(o);
            break;
        }
        int bad = contend("reuse round", o, REUSE_OPS, 1);
        fails += bad;
        by_how[r % 4] += bad;
        if (r % 8 == 7)
            destroy_objs(o); /* some rounds destroy, most do not */
        free(o);
    }
    printf("reuse: %d rounds, %ld at the previous round's address, %ld failed"
           " (init %ld, memset %ld, memcpy %ld, static %ld)\n",
           REUSE_ROUNDS, same_addr > 0 ? 1L : 0L, fails, by_how[0], by_how[1], by_how[2],
           by_how[3]);
    (void)how;

    /* Destroy a monitored lock, then init again; init twice. */
    struct objs *d = calloc(1, sizeof *d);
    init_objs(d);
    contend("before destroy", d, 20000, 0);
    destroy_objs(d);
    init_objs(d);
    contend("destroyed and re-initialized", d, 20000, 0);
    init_objs(d); /* init twice, no destroy in between */
    contend("initialized twice", d, 20000, 0);
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
    RC(pthread_mutex_init(&d->m, &a), 0); /* re-init as another kind */
    pthread_mutexattr_destroy(&a);
    RC(pthread_mutex_lock(&d->m), 0);
    RC(pthread_mutex_lock(&d->m), EDEADLK);
    RC(pthread_mutex_unlock(&d->m), 0);
    RC(pthread_mutex_unlock(&d->m), EPERM);
    RC(pthread_mutex_init(&d->m, NULL), 0); /* and back to normal */
    RC(pthread_mutex_lock(&d->m), 0);
    RC(pthread_mutex_trylock(&d->m), EBUSY);
    RC(pthread_mutex_unlock(&d->m), 0);
    contend("re-initialized as another kind and back", d, 20000, 0);
    destroy_objs(d);
    free(d);
    free(tmpl);

    /* For the exit handlers: monitored (contended) in main. */
    init_objs(&exit_objs);
    contend("exit objects in main", &exit_objs, 20000, 0);
    init_objs(&late_objs);
    contend("late objects in main", &late_objs, 20000, 0);
    atexit(atexit_handler);

    /* A failed exec: of a regular, executable file, which the exec
     * wrapper takes for a program and writes the profile first; the
     * kernel refuses it (empty: ENOEXEC) and the program goes on. */
    char path[] = "/tmp/lock_lifecycle-exec-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0 && fchmod(fd, 0755) == 0 && close(fd) == 0, "an empty executable file");
    char *args[] = { path, NULL };
    errno = 0;
    int rc = execve(path, args, NULL);
    int exec_errno = errno;
    unlink(path);
    printf("failed exec: returned %d, %s\n", rc,
           exec_errno == ENOEXEC ? "ENOEXEC" : strerror(exec_errno));
    CHECK(rc == -1 && exec_errno == ENOEXEC, "execve of an empty file");
    n_bad += late_phase("after a failed exec", 20000);

    printf("main: %s\n", n_bad ? "FAILED" : "ok");
    return n_bad ? 1 : 0;
}
