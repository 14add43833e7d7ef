/* mmap + munmap pairs on one thread: what lockblame's wrappers
 * (src/interpose/mmap.c) add to each call.
 *
 *   mmapcost N DIR
 *     anon_ns_per_pair X      N pairs of a one-page private anonymous
 *                             mapping (forwarded; the munmap's bookkeeping
 *                             still looks for shared objects in the range)
 *     shared_ns_per_pair X    N pairs of a one-page shared mapping of a
 *                             file in DIR (the mmap's bookkeeping too: the
 *                             file's identity, for process-shared objects)
 *
 * A tenth of N as warm-up first, each kind. */
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bench.h"

static double pairs_ns(long n, int fd)
{
    int flags = fd < 0 ? MAP_PRIVATE | MAP_ANONYMOUS : MAP_SHARED;
    long long t0 = 0;
    for (long i = -n / 10; i < n; i++) {
        if (i == 0)
            t0 = bench_now_ns();
        void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, flags, fd, 0);
        if (p == MAP_FAILED || munmap(p, 4096) != 0) {
            perror("mmapcost");
            exit(1);
        }
    }
    return (double)(bench_now_ns() - t0) / (double)n;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s N DIR\n", argv[0]);
        return 2;
    }
    long n = atol(argv[1]);
    char path[4096];
    snprintf(path, sizeof path, "%s/mmapcost.%d", argv[2], (int)getpid());
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || ftruncate(fd, 4096) != 0) {
        perror(path);
        return 1;
    }
    unlink(path);
    printf("anon_ns_per_pair %.1f\n", pairs_ns(n, -1));
    printf("shared_ns_per_pair %.1f\n", pairs_ns(n, fd));
    close(fd);
    return 0;
}
