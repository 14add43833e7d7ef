/* See std_fds.h. */
#include "util/std_fds.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

unsigned lb_std_fds_hold(void)
{
    int saved_errno = errno;
    unsigned held = 0;
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
            continue;
        /* the lowest free descriptor: fd, unless another thread took it */
        int got = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (got == fd)
            held |= 1u << fd;
        else if (got >= 0)
            close(got);
    }
    errno = saved_errno;
    return held;
}

void lb_std_fds_release(unsigned held)
{
    int saved_errno = errno;
    for (int fd = 0; fd <= 2; fd++)
        if (held & 1u << fd)
            close(fd);
    errno = saved_errno;
}
