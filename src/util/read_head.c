#include "util/read_head.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

long lb_read_head(const char *path, char *buf, size_t size)
{
    long fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t got = 0;
    while (got + 1 < size) {
        long n = syscall(SYS_read, (int)fd, buf + got, size - 1 - got);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    syscall(SYS_close, (int)fd);
    buf[got] = '\0';
    return (long)got;
}
