/* The CLI's wall clock: CLOCK_MONOTONIC in seconds, for timing reruns and
 * download budgets. The CLI layer links only common/, so it keeps its own
 * reader rather than util/clock.h's (the library's). */
#ifndef LB_CLI_SECONDS_H
#define LB_CLI_SECONDS_H
#include <time.h>

static inline double lb_cli_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
#endif
