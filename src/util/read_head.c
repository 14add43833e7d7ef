#include "util/read_head.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/raw_syscall.h"

long lb_read_head(const char *path, char *buf, size_t size)
{
    long fd = lb_raw_syscall(SYS_openat, AT_FDCWD, (long)path, O_RDONLY | O_CLOEXEC, 0, 0, 0);
    if (fd < 0)
        return -1;
    size_t got = 0;
    while (got + 1 < size) {
        long n = lb_raw_syscall(SYS_read, fd, (long)(buf + got), (long)(size - 1 - got), 0, 0, 0);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    lb_raw_syscall(SYS_close, fd, 0, 0, 0, 0, 0);
    buf[got] = '\0';
    return (long)got;
}
