/*
 * sampling.h - the sampling lines of the report header: mechanism and why,
 * effective rate, samples taken and dropped (with a warning above 5%), and
 * the CPU time credited unsampled, from the meta table (docs/SCHEMA.md).
 */
#ifndef LB_CLI_SAMPLING_H
#define LB_CLI_SAMPLING_H
#include <stdio.h>

/* Prints those lines for the database at path; prints nothing for a
 * database without the keys (written before they existed) or that
 * cannot be read. */
void lb_print_sampling(const char *path, FILE *out);
#endif
