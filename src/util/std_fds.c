/* See std_fds.h. */
#include "util/std_fds.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/raw_syscall.h"

unsigned lb_std_fds_hold(void)
{
    int saved_errno = errno;
    unsigned held = 0;
    for (int fd = 0; fd <= 2; fd++) {
        /* directly: at every process's end, where libc's fcntl would be
         * a page of its code for a fork child to fault in */
        if (lb_raw_syscall(SYS_fcntl, fd, F_GETFD, 0, 0, 0, 0) != -1 || errno != EBADF)
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

/* fd is still the /dev/null put there: close-on-exec (a program's dup2
 * onto it clears that) and the same device. */
static bool still_ours(int fd, dev_t null_dev)
{
    struct stat st;
    int flags = fcntl(fd, F_GETFD);
    return flags != -1 && (flags & FD_CLOEXEC) && fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) &&
           st.st_rdev == null_dev;
}

void lb_std_fds_release(unsigned held)
{
    if (!held)
        return;
    int saved_errno = errno;
    struct stat null_st;
    bool known = stat("/dev/null", &null_st) == 0;
    for (int fd = 0; fd <= 2; fd++)
        if ((held & 1u << fd) && known && still_ours(fd, null_st.st_rdev))
            close(fd);
    errno = saved_errno;
}
