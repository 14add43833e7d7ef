/* Process trees whose children's profiles are small enough to wait in the
 * run's spool (common/spool.h), for tests/integration/spool_pending.sh.
 * Every process it profiles (but a bare root) runs one episode: the main thread starts two
 * threads, each of which waits on a condition variable of its own until
 * the main thread, having seen it waiting, signals it; then each sleeps
 * 20 ms while the main thread waits to join it. So each process has 3
 * threads, and its waits and their blame are at the same call sites in
 * every run: after the first child has added those names to the run's
 * database, every child's profile can wait in the spool.
 * Each process prints what it is, with its pid, before it ends:
 *   "root PID", "child I PID plain|exec", "image1 PID", "late I PID",
 *   "namer PID".
 *
 *   spool_tree tree N K STATUS [GATE]  fork N children, at most K at a
 *        time; reap them; with GATE, create GATE.ready and wait until GATE
 *        exists or GATE.ready is gone (the test looks at the spool
 *        meanwhile); exit STATUS
 *   spool_tree cap N GATE              fork N children one after another,
 *        then one that runs its episode from a function no other process
 *        runs and then execs /bin/true ("namer PID"), so that its image
 *        before the exec adds its profile itself, reaping each; then wait
 *        at GATE as tree does
 *   spool_tree bare N                  fork N children one after another and
 *        reap them; the root itself records nothing
 *   spool_tree killed N                fork N children one after another,
 *        reap them, then SIGKILL itself; the first child runs as tree's
 *        do, the others run their episode from later_child, which no
 *        process before them ran: their pending records leave its code
 *        address for the merge to name
 *   spool_tree late                    fork 3 children one after another and
 *        reap them, then fork a fourth and end without waiting for it; the
 *        fourth waits until it has been reparented (the root has ended),
 *        sleeps 0.3 s, and runs its episode at the same call path as the
 *        first three (so the run's database names all of it)
 *   spool_tree exec N [kill]           fork N children, 2 at a time; the
 *        odd ones exec this program as "spool_tree image1", which runs an
 *        episode of its own; reap them; with kill, then SIGKILL itself
 * With SPOOL_TREE_FSIZE=BYTES, every child but the first lowers its file
 * size limit (RLIMIT_FSIZE) to BYTES before its episode: a process that
 * wrote past it would be ended by SIGXFSZ.
 * Exit status: STATUS for tree, 0 for the others, 1 on a failed call. */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gt.h"
#include "tree_procs.h"

#define WAITERS    2
#define LATE_AFTER 3 /* children before the late one */

/* One waiter: its own mutex and condition variable, so that no lock is
 * ever contended and the waits lockblame sees are the same in every run. */
typedef struct waiter {
    pthread_mutex_t lock;
    pthread_cond_t go;
    int waiting; /* set under lock, which it holds until it waits */
    int released;
    pthread_t thread;
} waiter_t;

static void *waiter(void *arg)
{
    waiter_t *w = arg;
    pthread_mutex_lock(&w->lock);
    __atomic_store_n(&w->waiting, 1, __ATOMIC_RELEASE);
    while (!w->released)
        pthread_cond_wait(&w->go, &w->lock);
    pthread_mutex_unlock(&w->lock);
    usleep(20000); /* main waits to join it */
    return NULL;
}

/* Start a waiter and release it once it waits. */
static void start_and_release(waiter_t *w)
{
    int rc = pthread_create(&w->thread, NULL, waiter, w);
    if (rc)
        gt_die("pthread_create", rc);
    while (!__atomic_load_n(&w->waiting, __ATOMIC_ACQUIRE))
        usleep(1000);
    /* it holds the lock from its flag to its wait: free, it waits */
    while (pthread_mutex_trylock(&w->lock) != 0)
        usleep(1000);
    w->released = 1;
    pthread_mutex_unlock(&w->lock);
    pthread_cond_signal(&w->go);
}

static __attribute__((noinline)) void episode(void)
{
    waiter_t w[WAITERS];
    for (int i = 0; i < WAITERS; i++) {
        w[i] = (waiter_t){ .lock = PTHREAD_MUTEX_INITIALIZER, .go = PTHREAD_COND_INITIALIZER };
        start_and_release(&w[i]);
    }
    for (int i = 0; i < WAITERS; i++)
        pthread_join(w[i].thread, NULL);
}

static __attribute__((format(printf, 1, 2))) void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fflush(stdout);
}

static void child(int i, bool exec_next)
{
    const char *fsize = getenv("SPOOL_TREE_FSIZE");
    if (i > 0 && fsize) {
        struct rlimit limit;
        getrlimit(RLIMIT_FSIZE, &limit);
        limit.rlim_cur = (rlim_t)atol(fsize);
        if (setrlimit(RLIMIT_FSIZE, &limit) != 0)
            gt_die("setrlimit", errno);
    }
    episode();
    say("child %d %d %s\n", i, (int)getpid(), exec_next ? "exec" : "plain");
    if (exec_next) {
        execl("/proc/self/exe", "spool_tree", "image1", (char *)NULL);
        gt_die("exec", errno);
    }
    exit(0);
}

/* Fork n children, at most k alive at a time; the odd ones exec if asked. */
static void fork_children(int n, int k, bool odd_exec)
{
    pid_t *alive = calloc((size_t)k, sizeof *alive);
    if (!alive)
        gt_die("calloc", ENOMEM);
    for (int i = 0; i < n; i++) {
        int slot = i % k;
        if (alive[slot])
            reap(alive[slot]);
        alive[slot] = fork_or_die();
        if (alive[slot] == 0)
            child(i, odd_exec && i % 2 == 1);
    }
    for (int s = 0; s < k; s++)
        if (alive[s])
            reap(alive[s]);
    free(alive);
}

static void wait_for_gate(const char *gate)
{
    char ready_path[4096];
    snprintf(ready_path, sizeof ready_path, "%s.ready", gate);
    int fd = open(ready_path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        gt_die("open", errno);
    close(fd);
    /* until the gate is there, or the ready file is gone (the test ended) */
    while (access(gate, F_OK) != 0 && access(ready_path, F_OK) == 0)
        usleep(10000);
}

/* A child whose episode is called from a function no other process
 * runs, and which then execs: an image that execs adds its profile
 * itself (it is not its process's last), names what is new in it, and
 * the pending records with it. */
static __attribute__((noinline, noclone)) void namer(void)
{
    episode();
    say("namer %d\n", (int)getpid());
    execl("/bin/true", "true", (char *)NULL);
    exit(0);
}

/* A child of killed after the first: its episode is called from here,
 * a function that neither the root nor the first child runs, so the names
 * of its call path are in no process's profile that the run's database
 * holds before its own is merged. */
static __attribute__((noinline, noclone)) void later_child(int i)
{
    episode();
    say("child %d %d plain\n", i, (int)getpid());
    exit(0);
}

/* Until the root (when not 0) has ended, and 0.3 s more. */
static __attribute__((noinline, noclone)) void outlive(pid_t root)
{
    if (!root)
        return;
    while (getppid() == root)
        usleep(5000);
    usleep(300000);
}

/* A child that runs its episode at once, or (root: the root's pid) only
 * once the root has ended: the same call path either way (one copy of the
 * function, one call of episode). */
static __attribute__((noinline, noclone)) void late_child(int i, pid_t root)
{
    const char *what = root ? "late %d %d\n" : "child %d %d plain\n";
    outlive(root);
    episode();
    say(what, i, (int)getpid());
    exit(0);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "image1") == 0) {
        episode();
        say("image1 %d\n", (int)getpid());
        return 0;
    }
    if (strcmp(mode, "bare") == 0 && argc == 3) {
        fork_children(atoi(argv[2]), 1, false);
        say("root %d\n", (int)getpid());
        return 0;
    }
    episode();
    if (strcmp(mode, "tree") == 0 && (argc == 5 || argc == 6)) {
        int n = atoi(argv[2]), k = atoi(argv[3]);
        fork_children(n, k > 0 ? k : 1, false);
        say("root %d\n", (int)getpid());
        if (argc == 6)
            wait_for_gate(argv[5]);
        return atoi(argv[4]);
    }
    if (strcmp(mode, "cap") == 0 && argc == 4) {
        fork_children(atoi(argv[2]), 1, false);
        pid_t pid = fork_or_die();
        if (pid == 0)
            namer();
        reap(pid);
        say("root %d\n", (int)getpid());
        wait_for_gate(argv[3]);
        return 0;
    }
    if (strcmp(mode, "killed") == 0 && argc == 3) {
        for (int i = 0, n = atoi(argv[2]); i < n; i++) {
            pid_t pid = fork_or_die();
            if (pid == 0 && i == 0)
                child(i, false);
            if (pid == 0)
                later_child(i);
            reap(pid);
        }
        say("root %d\n", (int)getpid());
        raise(SIGKILL);
        return 1;
    }
    if (strcmp(mode, "late") == 0 && argc == 2) {
        pid_t root = getpid();
        for (int i = 0; i <= LATE_AFTER; i++) {
            pid_t pid = fork_or_die();
            if (pid == 0) /* one call site: the same call path in each */
                late_child(i, i == LATE_AFTER ? root : 0);
            if (i < LATE_AFTER)
                reap(pid);
        }
        say("root %d\n", (int)getpid());
        return 0;
    }
    if (strcmp(mode, "exec") == 0 && (argc == 3 || (argc == 4 && strcmp(argv[3], "kill") == 0))) {
        fork_children(atoi(argv[2]), 2, true);
        say("root %d\n", (int)getpid());
        if (argc == 4)
            raise(SIGKILL);
        return 0;
    }
    fprintf(
        stderr,
        "usage: spool_tree tree N K STATUS [GATE] | cap N GATE | bare N | killed N | late | exec N "
        "[kill]\n");
    return 2;
}
