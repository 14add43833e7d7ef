#include "common/unseen.h"

#include <stdio.h>

bool lb_unseen_notable(double unseen_s, double lifetime_s, double seen_wait_s)
{
    return unseen_s >= LB_UNSEEN_MIN_S && unseen_s >= LB_UNSEEN_MIN_SHARE * lifetime_s &&
           unseen_s > seen_wait_s;
}

void lb_unseen_text(char *buf, size_t size, double unseen_s, double lifetime_s, double seen_wait_s)
{
    snprintf(buf, size,
             "threads spent %.3f s (%.0f%% of their %.3f s of lifetime) off CPU in waits"
             " lockblame cannot see (it saw %.3f s of waits): likely glibc's internal locks"
             " (malloc, stdio), futex calls made inline, sleep, I/O or child processes",
             unseen_s, lifetime_s > 0 ? 100.0 * unseen_s / lifetime_s : 0, lifetime_s, seen_wait_s);
}
