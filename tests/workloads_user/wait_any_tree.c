/* A forking root that reaps with wait(2), for
 * tests/integration/background_merger.sh: whatever lockblame starts
 * beside the tree (report/writer/merger.h) must stay out of the
 * program's own waits.
 *
 *   wait_any_tree N GATE
 *
 * The root forks N children one after another. Each child starts two
 * threads that wait on a condition variable until it broadcasts, joins
 * them and exits 0, so each records a wait and leaves a pending profile.
 * The root reaps each child with wait(&status), any child: a pid it did
 * not fork is counted as foreign; after the N children one more wait()
 * must fail with ECHILD. Then it creates GATE.ready and waits until GATE
 * exists or GATE.ready is gone (the test reads the database meanwhile),
 * and prints
 *   "root PID reaped R foreign F echild yes|no sigchld_foreign S" and
 *   "child I PID" lines (each child prints its own line before it exits),
 * where S counts the SIGCHLDs whose sender was not the child being
 * waited for (SA_SIGINFO's si_pid). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define THREADS 2

/* The child being waited for, and SIGCHLDs from any other pid. */
static volatile sig_atomic_t current_child, foreign_sigchld;

static void on_sigchld(int sig, siginfo_t *info, void *ctx)
{
    (void)sig;
    (void)ctx;
    if (info->si_pid != current_child)
        foreign_sigchld++;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t go = PTHREAD_COND_INITIALIZER;
static int released, waiting;

static void *waiter(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock);
    waiting++;
    while (!released)
        pthread_cond_wait(&go, &lock);
    pthread_mutex_unlock(&lock);
    return NULL;
}

static void child(int i)
{
    pthread_t t[THREADS];
    for (int k = 0; k < THREADS; k++)
        if (pthread_create(&t[k], NULL, waiter, NULL) != 0)
            _exit(3);
    for (;;) { /* both wait before the broadcast: each records a wait */
        pthread_mutex_lock(&lock);
        int all = waiting == THREADS;
        if (all) {
            released = 1;
            pthread_cond_broadcast(&go);
        }
        pthread_mutex_unlock(&lock);
        if (all)
            break;
        usleep(100);
    }
    for (int k = 0; k < THREADS; k++)
        pthread_join(t[k], NULL);
    printf("child %d %d\n", i, (int)getpid());
    exit(0);
}

static void wait_for_gate(const char *gate)
{
    char ready[4096];
    snprintf(ready, sizeof ready, "%s.ready", gate);
    int fd = open(ready, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        perror("open");
        exit(2);
    }
    close(fd);
    while (access(gate, F_OK) != 0 && access(ready, F_OK) == 0)
        usleep(10000);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s N GATE\n", argv[0]);
        return 2;
    }
    int n = atoi(argv[1]), reaped = 0, foreign = 0;
    struct sigaction sa = { .sa_sigaction = on_sigchld, .sa_flags = SA_SIGINFO | SA_RESTART };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGCHLD, &sa, NULL);
    sigset_t chld, before;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    fflush(stdout);
    for (int i = 0; i < n; i++) {
        /* SIGCHLD held until current_child names the new child */
        sigprocmask(SIG_BLOCK, &chld, &before);
        pid_t pid = fork();
        if (pid < 0) {
            perror("fork");
            return 2;
        }
        if (pid == 0) {
            sigprocmask(SIG_SETMASK, &before, NULL);
            child(i);
        }
        current_child = pid;
        sigprocmask(SIG_SETMASK, &before, NULL);
        int status;
        pid_t got;
        while ((got = wait(&status)) != pid) {
            if (got < 0 && errno == EINTR)
                continue;
            if (got < 0) {
                perror("wait");
                return 2;
            }
            foreign++;
        }
        reaped++;
    }
    int status;
    int echild = wait(&status) < 0 && errno == ECHILD;
    wait_for_gate(argv[2]);
    printf("root %d reaped %d foreign %d echild %s sigchld_foreign %d\n", (int)getpid(), reaped,
           foreign, echild ? "yes" : "no", (int)foreign_sigchld);
    return 0;
}
