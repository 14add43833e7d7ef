/*
 * sig_reset_child: a fork child that resets every signal to its default
 * action before exec, as git's start_command does. The parent computes in
 * two threads (so that it is sampled), forks, and the child calls
 * sigaction(s, SIG_DFL) for s = 1..64, checks that every real-time
 * signal reads back as SIG_DFL, and execs /bin/true. Exit status 0 when
 * the child's checks held.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile unsigned long sink;

static void *spin(void *arg)
{
    for (unsigned long i = 0; i < 200000000ul; i++)
        sink += i;
    return arg;
}

int main(void)
{
    pthread_t t;
    pthread_create(&t, NULL, spin, NULL);
    spin(NULL);
    pthread_join(t, NULL);
    pid_t pid = fork();
    if (pid == 0) {
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        for (int s = 1; s < 65; s++)
            sigaction(s, &dfl, NULL); /* SIGKILL, SIGSTOP: EINVAL, as in git */
        for (int s = SIGRTMIN; s <= SIGRTMAX; s++) {
            struct sigaction now;
            if (sigaction(s, NULL, &now) != 0 || now.sa_handler != SIG_DFL) {
                fprintf(stderr, "signal %d does not read back as SIG_DFL\n", s);
                _exit(1);
            }
        }
        execl("/bin/true", "true", (char *)NULL);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
