/*
 * sampling.h - the sampling lines of the report header: mechanism and why,
 * effective rate, samples taken and dropped (with a warning above 5%), and
 * the CPU time credited unsampled, from the meta table (docs/SCHEMA.md).
 */
#ifndef LB_CLI_SAMPLING_H
#define LB_CLI_SAMPLING_H
#include <stdio.h>

#include "report/cli/profile.h"

/* Prints those lines for p's database; prints nothing for a database
 * without the keys (written before they existed) or that cannot be read.
 * The meta table holds the whole database's figures; where p selects
 * some of its processes (--pid, --comm), the samples and the unsampled
 * CPU time are the selection's, from its processes' rows and the
 * lockblame_unsampled_cpu frames of its threads. */
void lb_print_sampling(const struct lb_profile *p, FILE *out);
#endif
