/* Work done in the kernel (docs/DESIGN.md "Metrics"), built -O2: a thread that
 * spends its CPU time in read() of /dev/zero (the kernel clears the
 * buffer), until its own CPU clock shows READ_MS. Prints, as ground truth,
 * its CPU time (CLOCK_THREAD_CPUTIME_ID: user + kernel) and the kernel
 * part (getrusage RUSAGE_THREAD), and the reads made. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "thread_cpu.h"

#define READ_MS 400
#define CHUNK   (1 << 20)

static char buf[CHUNK];
static double cpu, sys_s;
static long reads;

__attribute__((noinline)) static long read_loop(int fd)
{
    long n = 0;
    double start = thread_cpu_s();
    while (thread_cpu_s() - start < READ_MS / 1000.0) {
        if (read(fd, buf, sizeof buf) != (ssize_t)sizeof buf)
            return -1;
        n++;
    }
    return n;
}

static void *reader(void *arg)
{
    int fd = open("/dev/zero", O_RDONLY);
    if (fd < 0)
        return NULL;
    reads = read_loop(fd);
    close(fd);
    cpu = thread_cpu_s();
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    sys_s = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    return arg;
}

int main(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, reader, NULL))
        return 1;
    pthread_join(t, NULL);
    printf("reads ok: %s\n", reads > 0 ? "yes" : "no");
    printf("cpu_s reader %.6f\n", cpu);
    printf("sys_s reader %.6f\n", sys_s);
    return 0;
}
