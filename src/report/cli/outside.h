/*
 * outside.h - waits on process-shared objects (semaphores, mutexes,
 * condition variables, barriers in shared memory) that a process outside
 * the profiled tree ended: their idleness is unattributed, and the table
 * header says why (meta keys shared_outside_us, shared_outside_waits).
 */
#ifndef LB_CLI_OUTSIDE_H
#define LB_CLI_OUTSIDE_H
#include <stdio.h>

#include "report/cli/profile.h"

/* The header's "outside:" line, printed only where some wait was ended
 * from outside the tree. */
void lb_print_outside(const struct lb_profile *p, FILE *out);
#endif
