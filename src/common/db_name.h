/* The default database name of a run, lockblame.<prog>.<pid>.db, built in
 * one place for the library (first profiled process of a tree) and for
 * `lockblame run` (which names it after PROG's pid). Depends on nothing. */
#ifndef LB_COMMON_DB_NAME_H
#define LB_COMMON_DB_NAME_H
#include <stddef.h>

/* Write the name for program prog (its base name is used) and pid into
 * out; returns what snprintf returns. */
int lb_default_db_name(char *out, size_t size, const char *prog, int pid);
#endif
