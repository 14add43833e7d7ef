/* The program's first open() gets the lowest free descriptor (3 when it
 * inherited only stdin, stdout, stderr), before and after its threads have
 * contended on a lock: lockblame keeps no descriptor of its own in the
 * program's low range. The driver compares the numbers with native. */
#include "conf.h"

#include <fcntl.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long counter;

static void *contend(void *arg)
{
    (void)arg;
    for (int i = 0; i < 2000; i++) {
        pthread_mutex_lock(&m);
        for (volatile int k = 0; k < 200; k++)
            ;
        counter++;
        pthread_mutex_unlock(&m);
    }
    return NULL;
}

static int lowest_free(void)
{
    for (int fd = 0;; fd++)
        if (fcntl(fd, F_GETFD) == -1)
            return fd;
}

int main(void)
{
    int expect = lowest_free();
    int fd = open("/dev/null", O_RDONLY);
    printf("first open: fd %d (lowest free was %d)\n", fd, expect);
    close(fd);
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, contend, NULL);
    int during = open("/dev/null", O_RDONLY); /* while threads run */
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    printf("open while threads run: fd %d\n", during);
    close(during);
    fd = open("/dev/null", O_RDONLY);
    printf("open after the threads: fd %d, counter %ld\n", fd, counter);
    return conf_exit_status();
}
