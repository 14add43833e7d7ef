/*
 * process_title: a program that rewrites its argv strings in place for a
 * process title, as servers do (redis-server shows "redis-server *:6379"
 * in ps). It contends one mutex between two threads first, so that the
 * profile has something in it, then overwrites every argument with '.'
 * (the title) and exits. /proc/self/cmdline reads the title from then on;
 * the profile's command must be the command line the process began with.
 *
 * Usage: process_title ARGS...
 */
#include <pthread.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static void *other(void *arg)
{
    pthread_mutex_lock(&m);
    pthread_mutex_unlock(&m);
    return arg;
}

int main(int argc, char **argv)
{
    pthread_t t;
    pthread_mutex_lock(&m);
    if (pthread_create(&t, NULL, other, NULL))
        return 1;
    usleep(20000);
    pthread_mutex_unlock(&m);
    pthread_join(t, NULL);
    for (int i = 0; i < argc; i++)
        memset(argv[i], '.', strlen(argv[i]));
    return 0;
}
