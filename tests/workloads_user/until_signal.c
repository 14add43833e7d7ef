/* A server-shaped program for `lockblame run`'s signal forwarding: two
 * threads pass a mutex back and forth until a signal stops them.
 *
 *   until_signal handle PIDFILE   SIGTERM, SIGHUP, SIGUSR1 or SIGINT ends the
 *                                 threads; prints "stopped by signal N"
 *                                 and exits 3
 *   until_signal default PIDFILE  runs until a signal's default action
 *                                 ends it
 *
 * PIDFILE receives the process id once both threads have taken the lock
 * (so the profile has something in it). */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile sig_atomic_t stop_signal;
static volatile unsigned long passes[2];

static void on_stop(int sig)
{
    stop_signal = sig;
}

static void *pass_lock(void *arg)
{
    long me = (long)arg;
    while (!stop_signal) {
        pthread_mutex_lock(&lock);
        for (volatile int i = 0; i < 2000; i++)
            ;
        passes[me]++;
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[1], "handle") != 0 && strcmp(argv[1], "default") != 0)) {
        fprintf(stderr, "usage: until_signal handle|default PIDFILE\n");
        return 2;
    }
    if (strcmp(argv[1], "handle") == 0) {
        struct sigaction sa = { .sa_handler = on_stop };
        sigemptyset(&sa.sa_mask);
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGHUP, &sa, NULL);
        sigaction(SIGUSR1, &sa, NULL);
        sigaction(SIGINT, &sa, NULL);
    }
    pthread_t t[2];
    for (long i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, pass_lock, (void *)i);
    while (!stop_signal && (passes[0] == 0 || passes[1] == 0))
        usleep(1000);
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", argv[2]);
    FILE *f = fopen(tmp, "w");
    if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f) != 0 || rename(tmp, argv[2]))
        return 1;
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("stopped by signal %d\n", (int)stop_signal);
    return 3;
}
