/*
 * exit_status: a program that ends with status 3 while another thread is
 * still blocked on a mutex. Under the preload its stdout, stderr and exit
 * status must stay exactly these (apart from `lockblame:` lines on stderr).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static void *blocked(void *arg)
{
    pthread_mutex_lock(&m); /* main holds m until the process exits */
    pthread_mutex_unlock(&m);
    return NULL;
}

int main(void)
{
    pthread_t t;
    pthread_mutex_lock(&m);
    if (pthread_create(&t, NULL, blocked, NULL) != 0)
        return 1;
    struct timespec ts = { 0, 50 * 1000 * 1000 };
    nanosleep(&ts, NULL); /* let the thread block */
    printf("exit_status: stdout line\n");
    fprintf(stderr, "exit_status: stderr line\n");
    exit(3);
}
