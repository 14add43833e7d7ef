/* Fork children that wait through the same code at the same addresses: the
 * parent forks CHILDREN children one after another (each reaped before the
 * next); child i creates 2 threads that wait on a condition variable through
 * waiter -> sib_outer -> sib_middle_<i % 3> -> sib_inner, whose frames differ
 * in size and shape (a small frame, a 4 KiB one, one realigned to 64
 * bytes), so a wrong unwind rule for any of them gives another path. The
 * child broadcasts once both waiters are waiting. Each child prints "child I PID sib_middle_K", the path its waiters take.
 *
 *   rule_siblings [CHILDREN]   (default 9) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int released, arrived;
static volatile int sink;

__attribute__((noinline)) static void sib_inner(void)
{
    pthread_mutex_lock(&lock);
    arrived++;
    while (!released)
        pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
    sink++;
}

__attribute__((noinline)) static void sib_middle_0(void)
{
    volatile char small[24];
    small[0] = (char)sink;
    sib_inner();
    sink += small[0];
}

__attribute__((noinline)) static void sib_middle_1(void)
{
    volatile char big[4096];
    big[0] = (char)sink;
    big[4095] = 1;
    sib_inner();
    sink += big[0] + big[4095];
}

__attribute__((noinline)) static void sib_middle_2(void)
{
    volatile char aligned[96] __attribute__((aligned(64)));
    aligned[0] = (char)sink;
    sib_inner();
    sink += aligned[0];
}

static int middle; /* which sib_middle_* this child's waiters go through */

__attribute__((noinline)) static void sib_outer(void)
{
    switch (middle) {
    case 0:
        sib_middle_0();
        break;
    case 1:
        sib_middle_1();
        break;
    default:
        sib_middle_2();
        break;
    }
    sink++;
}

static void *waiter(void *arg)
{
    (void)arg;
    sib_outer();
    return NULL;
}

static int child(void)
{
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        if (pthread_create(&t[i], NULL, waiter, NULL) != 0)
            return 1;
    for (;;) { /* both waiters in their wait, whatever the load */
        pthread_mutex_lock(&lock);
        int all = arrived == 2;
        pthread_mutex_unlock(&lock);
        if (all)
            break;
        usleep(200);
    }
    usleep(1000);
    pthread_mutex_lock(&lock);
    released = 1;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    return 0;
}

int main(int argc, char **argv)
{
    int children = argc > 1 ? atoi(argv[1]) : 9;
    for (int i = 0; i < children; i++) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid < 0)
            return 1;
        if (pid == 0) {
            middle = i % 3;
            printf("child %d %d sib_middle_%d\n", i, (int)getpid(), middle);
            exit(child());
        }
        int status;
        if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
            return 1;
    }
    return 0;
}
