/* See file_room.h. */
#include "common/file_room.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

bool lb_file_room(int fd, off_t size)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return false;
    if (st.st_size >= size)
        return true;
    int rc = posix_fallocate(fd, 0, size); /* (an error number, not errno) */
    if (rc != 0)
        errno = rc;
    return rc == 0;
}
