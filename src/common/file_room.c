/* See file_room.h. */
#include "common/file_room.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>

bool lb_file_room(int fd, off_t size)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return false;
    if (st.st_size >= size)
        return true;
    /* past the process's file size limit the allocation would end it
     * (SIGXFSZ) */
    struct rlimit limit;
    if (getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
        (rlim_t)size > limit.rlim_cur) {
        errno = EFBIG;
        return false;
    }
    int rc = posix_fallocate(fd, 0, size); /* (an error number, not errno) */
    if (rc != 0)
        errno = rc;
    return rc == 0;
}
