/* See file_put.h. */
#include "common/file_put.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

static int write_all(int fd, const void *bytes, size_t n)
{
    const char *p = bytes;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int lb_file_put(const char *tmp, const char *name, const lb_file_part_t *parts, int nparts)
{
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0)
        return -1;
    int rc = 0;
    for (int i = 0; i < nparts && rc == 0; i++)
        rc = write_all(fd, parts[i].bytes, parts[i].n);
    if (close(fd) != 0)
        rc = -1;
    if (rc == 0 && rename(tmp, name) != 0)
        rc = -1;
    if (rc != 0)
        unlink(tmp);
    return rc;
}
