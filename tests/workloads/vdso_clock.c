/* vdso_clock SECONDS: calls clock_gettime(CLOCK_MONOTONIC) in a loop for
 * SECONDS of wall time (default 0.5), so nearly every CPU sample lands in
 * the vDSO (__vdso_clock_gettime). Single-threaded, no locks: the
 * profile holds work only. tests/integration/vdso_module.sh runs it to
 * check that the vDSO is one module in every process and run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 0.5;
    struct timespec start, now;
    long calls = 0;

    clock_gettime(CLOCK_MONOTONIC, &start);
    do {
        clock_gettime(CLOCK_MONOTONIC, &now);
        calls++;
    } while ((double)(now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9 < seconds);
    printf("%ld calls\n", calls);
    return 0;
}
