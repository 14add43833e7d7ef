/* A server that fork + execs its workers, built -O2 -g as users build:
 * the parent creates a POSIX shared memory object (shm_open), maps it,
 * puts a process-shared semaphore (value 1, used as a lock) in it, and
 * fork + execs WORKERS copies of itself as workers, which map the object
 * again (at addresses of their own: an exec'd process inherits nothing)
 * and, once all have started, take turns on the lock. Worker 0 computes
 * HOLD_SLOW inside each of its ROUNDS holds and posts in slow_release;
 * the others hold briefly, post in fast_release, and go on until worker 0
 * is done (so that they contend with it throughout). The workers log their waits and posts in the shared
 * memory, and the parent computes the truth (prefork_truth.h).
 *
 * With "kill": the parent first takes the lock, fork + execs a victim
 * that waits on it, kills the victim outright (SIGKILL) while it waits,
 * reaps it, starts the workers, and posts in parent_release once they
 * wait: the victim's wait is never written, so it is in no truth.
 *
 * With "named": the lock is a named semaphore (sem_open) instead, which
 * glibc maps itself from its file in /dev/shm; the shared memory object
 * carries only the logs.
 *
 * Prints "truth SITE SECONDS" per site and "waited SECONDS" (the
 * workers' waits). */
#include <fcntl.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gt_clock.h"
#include "prefork_truth.h"

#define WORKERS    3
#define ROUNDS     40
#define MAX_ROUNDS 4000     /* a fast worker's rounds, at most */
#define HOLD_SLOW  3000000L /* ns */
#define BETWEEN    300000L
#define VICTIM_NS  30000000L  /* the victim waits this long before it is killed */
#define START_NS   100000000L /* the workers wait this long for the parent's post */

enum {
    FAST,
    SLOW,
    PARENT,
    SITES
};

struct shared {
    sem_t unnamed_lock;
    int named; /* the lock is the named semaphore sem_name() */
    int victim_waiting;
    int workers_started;
    int slow_done;
    struct prefork_wait waits[WORKERS][MAX_ROUNDS];
    struct prefork_post posts[WORKERS * MAX_ROUNDS + 1];
};

static struct shared *sh;
static sem_t *lock; /* &sh->unnamed_lock, or the named semaphore */
static volatile unsigned long sink;

static struct shared *map_shared(const char *name, int create)
{
    int fd = shm_open(name, O_RDWR | (create ? O_CREAT | O_EXCL : 0), 0600);
    if (fd < 0 || (create && ftruncate(fd, sizeof(struct shared)) != 0))
        return NULL;
    struct shared *p = mmap(NULL, sizeof *p, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    return p == MAP_FAILED ? NULL : p;
}

/* The named semaphore's name for the shared memory object's name. */
static const char *sem_name(const char *shm_name)
{
    static char name[96];
    snprintf(name, sizeof name, "%s-sem", shm_name);
    return name;
}

/* The lock: the unnamed semaphore in sh, or the named one (created by
 * the parent); NULL if it cannot be opened. */
static sem_t *open_lock(const char *shm_name, int create)
{
    if (!sh->named)
        return &sh->unnamed_lock;
    sem_t *s = create ? sem_open(sem_name(shm_name), O_CREAT | O_EXCL, 0600, 1)
                      : sem_open(sem_name(shm_name), 0);
    return s == SEM_FAILED ? NULL : s;
}

static void post_at(int slot, int site)
{
    sh->posts[slot] = (struct prefork_post){ gt_now_s(), site, 0 };
}

__attribute__((noinline)) static void slow_release(int slot)
{
    post_at(slot, SLOW);
    sem_post(lock);
    prefork_posted(&sh->posts[slot]);
    sink++; /* the post is not a tail call */
}

__attribute__((noinline)) static void fast_release(int slot)
{
    post_at(slot, FAST);
    sem_post(lock);
    prefork_posted(&sh->posts[slot]);
    sink++;
}

__attribute__((noinline)) static void parent_release(void)
{
    post_at(WORKERS * MAX_ROUNDS, PARENT);
    sem_post(lock);
    prefork_posted(&sh->posts[WORKERS * MAX_ROUNDS]);
    sink++;
}

static void sleep_ns(long ns)
{
    struct timespec t = { ns / 1000000000L, ns % 1000000000L };
    while (nanosleep(&t, &t) != 0)
        ;
}

static int worker(int me)
{
    __atomic_add_fetch(&sh->workers_started, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&sh->workers_started, __ATOMIC_SEQ_CST) < WORKERS)
        ; /* exec takes a while: they begin together */
    for (int r = 0; me == 0 ? r < ROUNDS
                            : r < MAX_ROUNDS && !__atomic_load_n(&sh->slow_done, __ATOMIC_SEQ_CST);
         r++) {
        prefork_take(lock, &sh->waits[me][r]);
        if (me == 0) {
            gt_spin_ns(HOLD_SLOW);
            slow_release(me * MAX_ROUNDS + r);
        } else {
            fast_release(me * MAX_ROUNDS + r);
        }
        sleep_ns(BETWEEN);
    }
    if (me == 0)
        __atomic_store_n(&sh->slow_done, 1, __ATOMIC_SEQ_CST);
    return 0;
}

static int victim(void)
{
    __atomic_store_n(&sh->victim_waiting, 1, __ATOMIC_SEQ_CST);
    while (sem_wait(lock) != 0)
        ;
    return 1; /* never: it is killed while it waits */
}

static pid_t spawn(const char *self, const char *role, const char *name, int index)
{
    char arg[16];
    snprintf(arg, sizeof arg, "%d", index);
    pid_t pid = fork();
    if (pid == 0) {
        execl(self, self, role, name, arg, (char *)NULL);
        _exit(127);
    }
    return pid;
}

int main(int argc, char **argv)
{
    if (argc == 4) { /* an exec'd worker or victim: ROLE NAME INDEX */
        sh = map_shared(argv[2], 0);
        if (!sh || !(lock = open_lock(argv[2], 0)))
            return 1;
        return strcmp(argv[1], "victim") == 0 ? victim() : worker(atoi(argv[3]));
    }
    int kill_one = argc > 1 && strcmp(argv[1], "kill") == 0;
    int named = argc > 1 && strcmp(argv[1], "named") == 0;
    char name[64];
    snprintf(name, sizeof name, "/lockblame-prefork-exec-%d", (int)getpid());
    sh = map_shared(name, 1);
    if (!sh)
        return 1;
    sh->named = named;
    if ((!named && sem_init(&sh->unnamed_lock, 1, 1) != 0) || !(lock = open_lock(name, 1))) {
        shm_unlink(name);
        return 1;
    }
    int rc = 0;
    if (kill_one) {
        while (sem_wait(lock) != 0)
            ;
        pid_t v = spawn("/proc/self/exe", "victim", name, 0);
        while (v > 0 && !__atomic_load_n(&sh->victim_waiting, __ATOMIC_SEQ_CST))
            sleep_ns(1000000);
        sleep_ns(VICTIM_NS);
        if (v < 0 || kill(v, SIGKILL) != 0 || waitpid(v, NULL, 0) != v)
            rc = 1;
    }
    pid_t pids[WORKERS];
    for (int i = 0; i < WORKERS; i++)
        pids[i] = spawn("/proc/self/exe", "worker", name, i);
    if (kill_one) {
        while (__atomic_load_n(&sh->workers_started, __ATOMIC_SEQ_CST) < WORKERS)
            sleep_ns(1000000);
        sleep_ns(START_NS);
        parent_release();
    }
    for (int i = 0; i < WORKERS; i++) {
        int status;
        if (pids[i] < 0 || waitpid(pids[i], &status, 0) < 0 || !WIFEXITED(status) ||
            WEXITSTATUS(status))
            rc = 1;
    }
    shm_unlink(name);
    if (named) {
        sem_close(lock);
        sem_unlink(sem_name(name));
    }
    if (rc)
        return rc;
    double blame[SITES] = { 0 };
    double waited = prefork_truth(&sh->waits[0][0], WORKERS * MAX_ROUNDS, sh->posts,
                                  WORKERS * MAX_ROUNDS + 1, blame);
    printf("truth slow_release %.6f\n", blame[SLOW]);
    printf("truth fast_release %.6f\n", blame[FAST]);
    if (kill_one)
        printf("truth parent_release %.6f\n", blame[PARENT]);
    printf("waited %.6f\n", waited);
    printf("off_cpu %.6f\n", prefork_off_cpu(&sh->waits[0][0], WORKERS * MAX_ROUNDS));
    printf("unplaced %.6f\n", prefork_unplaced(&sh->waits[0][0], WORKERS * MAX_ROUNDS, sh->posts,
                                               WORKERS * MAX_ROUNDS + 1));
    return 0;
}
