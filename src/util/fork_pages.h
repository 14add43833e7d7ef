/* Resets in a fork child without copying pages: the child shares its
 * parent's memory until it writes a page, and each first write copies the
 * page (a fault, 4 KiB copied, a TLB flush); a page never touched reads as
 * the zero page. A fork child's reset of a table writes only the values
 * that change, so the tables the parent never used stay shared. */
#ifndef LB_FORK_PAGES_H
#define LB_FORK_PAGES_H
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* Stores v at *p only where it differs. */
#define LB_STORE_CHANGED(p, v) \
    do {                       \
        if (*(p) != (v))       \
            *(p) = (v);        \
    } while (0)

/* Zeroes len bytes at p only where one of them is not 0. */
static inline void lb_zero_changed(void *p, size_t len)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < len; i++) {
        if (b[i]) {
            memset(p, 0, len);
            return;
        }
    }
}
#endif
