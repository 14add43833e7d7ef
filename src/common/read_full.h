/* n bytes read from a descriptor whole: read(2) again after a signal
 * (EINTR) or a short read, up to n, the file's end or an error. For the
 * files the CLI and the writer read in one go (a pending record's log, a
 * cached symbol index). Depends on nothing. */
#ifndef LB_COMMON_READ_FULL_H
#define LB_COMMON_READ_FULL_H
#include <errno.h>
#include <stddef.h>
#include <unistd.h>

/* The bytes read into buf: n, or fewer at the file's end or an error. */
static inline size_t lb_read_full(int fd, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, (char *)buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    return got;
}
#endif
