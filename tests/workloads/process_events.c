/* Process events under lockblame, chosen by argv[1]:
 *   sigterm  - threads contend on a mutex until SIGTERM arrives (default
 *              action); prints "ready" once they run
 *   sigterm-reset - the same, after the program set SIGTERM's action
 *              itself: ignored, then the default again (as a program
 *              that resets inherited dispositions does)
 *   fork     - a threaded parent forks children that lock and exit()
 *   exec     - contends a little, then execs /bin/echo exec-done
 *   exec-fails - contends a little, tries to exec a path that is not
 *              there and a command no PATH directory holds (both fail,
 *              ENOENT), contends again, then prints "exec-fails-done"
 *   exec-too-big - contends a little, execs /bin/true with one argument
 *              longer than the kernel takes (fails, E2BIG, though the file
 *              is there), contends again, then prints the exec's return
 *              value and errno name
 *   eintr    - loops of read(pipe), sem_timedwait and nanosleep while other
 *              threads burn CPU under sampling; counts EINTR (must be 0)
 *   abort    - contends a little, then abort()s
 *   vfork-killed - a vfork child dies of SIGTERM (which lockblame catches);
 *              then threads contend and the parent exits 0: the child, in
 *              its parent's memory, must not have ended its profile
 *   cancel   - threads blocked in pthread_cond_wait and sem_wait are
 *              cancelled (their cleanup handlers must run); 300 ms later
 *              main signals and posts from after_cancel_signal/_post: no
 *              stale waiter may have accrued idleness onto them
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long counter;

/* A fork child must not touch `lock`: a parent thread may hold it at the
 * fork, and no thread would ever release it in the child. Children use
 * child_lock, initialized after the fork. */
static pthread_mutex_t child_lock;
static pthread_mutex_t *contended = &lock;

static void *contend(void *arg)
{
    long rounds = (long)arg;
    for (long i = 0; rounds < 0 || i < rounds; i++) {
        pthread_mutex_lock(contended);
        for (int k = 0; k < 200; k++)
            counter++;
        pthread_mutex_unlock(contended);
    }
    return NULL;
}

static void start_threads(int n, long rounds, pthread_t *t)
{
    for (int i = 0; i < n; i++)
        pthread_create(&t[i], NULL, contend, (void *)rounds);
}

static int run_sigterm(void)
{
    pthread_t t[2];
    start_threads(2, -1, t);
    printf("ready\n");
    fflush(stdout);
    for (;;)
        pause();
    return 0;
}

static int run_fork(void)
{
    pthread_t t[2];
    start_threads(2, 20000, t);
    for (int k = 0; k < 3; k++) {
        pid_t pid = fork();
        if (pid == 0) {
            pthread_mutex_init(&child_lock, NULL);
            contended = &child_lock;
            pthread_t c[2];
            start_threads(2, 20000, c);
            for (int i = 0; i < 2; i++)
                pthread_join(c[i], NULL);
            exit(0);
        }
        int status;
        waitpid(pid, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            return 1;
    }
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("fork-done\n");
    return 0;
}

static int run_exec(void)
{
    pthread_t t[2];
    start_threads(2, 20000, t);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    fflush(stdout);
    execl("/bin/echo", "echo", "exec-done", (char *)NULL);
    perror("execl");
    return 1;
}

static int run_exec_fails(void)
{
    pthread_t t[2];
    for (int round = 0; round < 2; round++) {
        start_threads(2, 20000, t);
        for (int i = 0; i < 2; i++)
            pthread_join(t[i], NULL);
        if (round == 1)
            break;
        execl("/nonexistent/lockblame-test", "lockblame-test", (char *)NULL);
        int path_errno = errno;
        execlp("lockblame-test-no-such-command", "x", (char *)NULL);
        if (path_errno != ENOENT || errno != ENOENT)
            return 1;
    }
    printf("exec-fails-done\n");
    return 0;
}

/* Linux refuses an argument string longer than 32 pages (MAX_ARG_STRLEN). */
#define TOO_LONG_ARG (32 * 4096 * 2)

static int run_exec_too_big(void)
{
    static char long_arg[TOO_LONG_ARG + 1];
    memset(long_arg, 'x', TOO_LONG_ARG);
    pthread_t t[2];
    int rc = 0, exec_errno = 0;
    for (int round = 0; round < 2; round++) {
        start_threads(2, 20000, t);
        for (int i = 0; i < 2; i++)
            pthread_join(t[i], NULL);
        if (round == 0) {
            char *argv[] = { "true", long_arg, NULL };
            rc = execv("/bin/true", argv);
            exec_errno = errno;
        }
    }
    printf("exec-too-big %d %s\n", rc, exec_errno == E2BIG ? "E2BIG" : strerror(exec_errno));
    return 0;
}

static volatile int stop_burning;

static void *burn(void *arg)
{
    volatile double x = 0;
    while (!stop_burning)
        x += 1.0;
    return arg;
}

static int run_eintr(void)
{
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, burn, NULL);
    int fds[2];
    if (pipe(fds) != 0)
        return 1;
    sem_t sem;
    sem_init(&sem, 0, 0);
    int eintr = 0;
    for (int i = 0; i < 200; i++) {
        struct timespec nap = { 0, 1000000 };
        if (nanosleep(&nap, NULL) != 0 && errno == EINTR)
            eintr++;
        struct timespec deadline;
        clock_gettime(CLOCK_REALTIME, &deadline);
        deadline.tv_nsec += 1000000;
        if (deadline.tv_nsec >= 1000000000) {
            deadline.tv_sec++;
            deadline.tv_nsec -= 1000000000;
        }
        if (sem_timedwait(&sem, &deadline) != 0 && errno == EINTR)
            eintr++;
        char c = 'x';
        if (write(fds[1], &c, 1) != 1)
            return 1;
        if (read(fds[0], &c, 1) != 1 && errno == EINTR)
            eintr++;
    }
    stop_burning = 1;
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("eintr=%d\n", eintr);
    return eintr != 0;
}

static pthread_mutex_t cancel_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cancel_cond = PTHREAD_COND_INITIALIZER;
static sem_t cancel_sem;
static int cleanups;

static void count_cleanup(void *arg)
{
    if (arg) /* cond waiters hold the mutex again when cleanup runs */
        pthread_mutex_unlock(arg);
    __atomic_fetch_add(&cleanups, 1, __ATOMIC_RELAXED);
}

static void *cond_waiter(void *arg)
{
    pthread_mutex_lock(&cancel_lock);
    pthread_cleanup_push(count_cleanup, &cancel_lock);
    for (;;)
        pthread_cond_wait(&cancel_cond, &cancel_lock);
    pthread_cleanup_pop(1);
    return arg;
}

static void *sem_waiter(void *arg)
{
    pthread_cleanup_push(count_cleanup, NULL);
    for (;;)
        sem_wait(&cancel_sem);
    pthread_cleanup_pop(1);
    return arg;
}

__attribute__((noinline)) static void after_cancel_signal(void)
{
    pthread_cond_signal(&cancel_cond);
}

__attribute__((noinline)) static void after_cancel_post(void)
{
    sem_post(&cancel_sem);
}

static int run_cancel(void)
{
    sem_init(&cancel_sem, 0, 0);
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, i < 2 ? cond_waiter : sem_waiter, NULL);
    struct timespec nap = { 0, 100000000 };
    nanosleep(&nap, NULL);
    for (int i = 0; i < 4; i++)
        pthread_cancel(t[i]);
    for (int i = 0; i < 4; i++) {
        void *ret;
        pthread_join(t[i], &ret);
        if (ret != PTHREAD_CANCELED)
            return 1;
    }
    nap.tv_nsec = 300000000;
    nanosleep(&nap, NULL);
    after_cancel_signal();
    after_cancel_post();
    printf("cleanups=%d\n", cleanups);
    return cleanups == 4 ? 0 : 1;
}

static int run_vfork_killed(void)
{
    pid_t child = vfork();
    if (child == 0) {
        kill(getpid(), SIGTERM);
        _exit(1);
    }
    int status;
    if (child < 0 || waitpid(child, &status, 0) != child || !WIFSIGNALED(status) ||
        WTERMSIG(status) != SIGTERM)
        return 3;
    pthread_t t[2];
    start_threads(2, 20000, t);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    return 0;
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "";
    if (!strcmp(what, "sigterm"))
        return run_sigterm();
    if (!strcmp(what, "sigterm-reset")) {
        struct sigaction ign = { .sa_handler = SIG_IGN }, dfl = { .sa_handler = SIG_DFL };
        sigaction(SIGTERM, &ign, NULL);
        sigaction(SIGTERM, &dfl, NULL);
        return run_sigterm();
    }
    if (!strcmp(what, "fork"))
        return run_fork();
    if (!strcmp(what, "exec"))
        return run_exec();
    if (!strcmp(what, "exec-fails"))
        return run_exec_fails();
    if (!strcmp(what, "exec-too-big"))
        return run_exec_too_big();
    if (!strcmp(what, "eintr"))
        return run_eintr();
    if (!strcmp(what, "cancel"))
        return run_cancel();
    if (!strcmp(what, "abort")) {
        pthread_t t[2];
        start_threads(2, 20000, t);
        for (int i = 0; i < 2; i++)
            pthread_join(t[i], NULL);
        abort();
    }
    if (!strcmp(what, "vfork-killed"))
        return run_vfork_killed();
    fprintf(stderr,
            "usage: %s sigterm|sigterm-reset|fork|exec|exec-fails|exec-too-big|eintr|cancel|"
            "abort|"
            "vfork-killed\n",
            argv[0]);
    return 2;
}
