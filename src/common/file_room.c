/* See file_room.h. */
#include "common/file_room.h"

#include <fcntl.h>
#include <sys/stat.h>

bool lb_file_room(int fd, off_t size)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return false;
    return st.st_size >= size || posix_fallocate(fd, 0, size) == 0;
}
