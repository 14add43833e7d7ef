/* A file written whole or not at all: written under a temporary name in
 * the same directory, then renamed into place, so a reader finds the old
 * file, the new one, or none, never a part. */
#ifndef LB_COMMON_FILE_PUT_H
#define LB_COMMON_FILE_PUT_H
#include <stddef.h>

typedef struct lb_file_part {
    const void *bytes;
    size_t n;
} lb_file_part_t;

/* The parts, in order, as the file `name`, through `tmp` (created anew:
 * an existing tmp fails). 0, or -1 with nothing left behind. */
int lb_file_put(const char *tmp, const char *name, const lb_file_part_t *parts, int nparts);
#endif
