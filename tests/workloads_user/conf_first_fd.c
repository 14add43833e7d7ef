/* The program's first open() gets the lowest free descriptor (3 when it
 * inherited only stdin, stdout, stderr), before and after its threads have
 * contended on a lock: lockblame keeps no descriptor of its own in the
 * program's low range. With the argument "forks": a program that forks
 * worker processes one after another (a daemon's or a shell's pattern),
 * each contending with a thread of its own (so it has a profile to write,
 * and the parent's later forks find names in the run's database to read),
 * and opens a file after each. With "windows": threads contend for
 * 600 ms, through the time windows the driver asks for
 * (LOCKBLAME_INTERVAL), then the program opens files. The driver compares
 * the numbers with native. */
#include "conf.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <time.h>

#define FORKS 5

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

static int forks(void)
{
    for (int k = 0; k < FORKS; k++) {
        pid_t pid = fork();
        CONF_EXPECT(pid >= 0, "fork: %s", strerror(errno));
        if (pid == 0) {
            pthread_t t;
            pthread_create(&t, NULL, contend, NULL);
            contend(NULL);
            pthread_join(t, NULL);
            _exit(counter == 4000 ? 0 : 1);
        }
        int status = 0;
        CONF_EXPECT(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
                        WEXITSTATUS(status) == 0,
                    "child %d did not count to 4000", k);
        int expect = lowest_free();
        int fd = open("/dev/null", O_RDONLY);
        printf("after child %d: open gave fd %d (lowest free was %d)\n", k, fd, expect);
        close(fd);
    }
    return conf_exit_status();
}

static int windows(void)
{
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do {
        pthread_t t;
        pthread_create(&t, NULL, contend, NULL);
        contend(NULL);
        pthread_join(t, NULL);
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 < 600);
    /* the lowest of 20 opens 37 ms apart: a window being written while
     * the program opens holds descriptors for its length (as any thread
     * of a program that opens files would); one kept between windows
     * shows in every try */
    int lowest = -1;
    for (int i = 0; i < 20; i++) {
        int fd = open("/dev/null", O_RDONLY);
        if (lowest < 0 || fd < lowest)
            lowest = fd;
        close(fd);
        nanosleep(&(struct timespec){ 0, 37000000 }, NULL);
    }
    printf("after the windows: open gave fd %d (the lowest of 20 tries)\n", lowest);
    return conf_exit_status();
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "forks") == 0)
        return forks();
    if (argc > 1 && strcmp(argv[1], "windows") == 0)
        return windows();
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
